"""Does a static-shape engine with TensorRT's attention layer answer its first call? (notebook 02)

    python static_attention.py MODEL BATCH SEQ_LEN

Compiles the FP16 model with Torch-TensorRT at one static shape with the library's own
attention converter (``decompose_attention`` left at its default), and prints one JSON line
when it has compiled and one after its first call, each with the seconds since this
process started. Run it with a timeout: the last line that came back says how far it got.
"""

import json
import sys
import time

started = time.perf_counter()
import torch  # noqa: E402

import helpers as h  # noqa: E402


def say(**values: float) -> None:
    print(json.dumps({**values, "at_s": round(time.perf_counter() - started, 1)}), flush=True)


model_name, batch, seq_len = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch_tensorrt = h.import_torch_tensorrt()
settings = h.tensorrt_settings("fp16")  # not static_shape=True: the library's attention layer
loaded = h.load_model(model_name)
model = loaded.model.half().cuda()
inputs = h.make_batch(loaded, batch, seq_len, "cuda")
start = time.perf_counter()
with h.quiet_tensorrt_logs():
    module = torch_tensorrt.compile(
        model,
        ir="dynamo",
        inputs=[torch_tensorrt.Input(shape=(batch, seq_len), dtype=torch.int32)] * 2,
        min_block_size=1,
        **settings.kwargs,
    )
say(compiled_s=time.perf_counter() - start)
start = time.perf_counter()
with torch.inference_mode():
    module(*inputs)
torch.cuda.synchronize()
say(first_call_s=time.perf_counter() - start)
