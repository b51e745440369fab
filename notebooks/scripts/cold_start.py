"""Time to first output in a fresh process, as a service sees it (notebooks 07 and 07d).

    python cold_start.py eager       -        MODEL BATCH SEQ_LEN
    python cold_start.py load        SAVED_EP MODEL BATCH SEQ_LEN
    python cold_start.py rebuild     SAVED_EP MODEL BATCH SEQ_LEN
    ENGINE_CACHE_DIR=DIR python cold_start.py rebuild SAVED_EP MODEL BATCH SEQ_LEN
    python cold_start.py torch.compile SAVED_EP MODEL BATCH SEQ_LEN
    TRT_MODULE=tensorrt_rtx python cold_start.py engine ENGINE_FILE MODEL BATCH SEQ_LEN
    CUDA_GRAPH=1 TRT_MODULE=tensorrt_rtx python cold_start.py engine ENGINE_FILE MODEL BATCH SEQ_LEN

``eager`` builds the model in PyTorch (FP16) and calls it; ``load`` reads a saved Torch-TensorRT
program; ``rebuild`` compiles the engine again (with ENGINE_CACHE_DIR set, it saves the engine
in that folder's cache or reuses the one there, and counts the files it wrote; its compile's
seconds are split by phase from stack samples);
``torch.compile`` compiles with Inductor, whose cache (TORCHINDUCTOR_CACHE_DIR) makes a second
start faster; ``engine`` deserializes an engine file built with TensorRT's own API and runs it
through a context (TRT_MODULE names the TensorRT module that built it); with CUDA_GRAPH=1 the
context specialises its kernels before the first call (where the build has that setting) and the
call is captured in a CUDA graph, whose replay is the first output. Prints one JSON line
with the seconds of each phase and the wall-clock time of the first output
(``first_output_unix``), so that the launcher can measure from launch.
"""

import importlib
import json
import os
import sys
import time
from pathlib import Path

started = time.perf_counter()
import torch  # noqa: E402  (the imports are part of what a cold start costs)

import helpers as h  # noqa: E402
from helpers import trt_features  # noqa: E402
from helpers.profiling import sampled_phases  # noqa: E402

mode, saved, model_name, batch, seq_len = sys.argv[1:6]
imported = time.perf_counter()
if h.emulation():  # an emulated T4's limits hold in this process too (SERIES_EMULATE)
    h.gpu_features(torch.device("cuda"))
shape = (int(batch), int(seq_len))


def file_times(folder: str | None) -> dict:
    """Each file under ``folder`` (none without one) and when it was last written."""
    return (
        {p: p.stat().st_mtime_ns for p in Path(folder).rglob("*") if p.is_file()} if folder else {}
    )


phases = {}  # what a mode times beyond the phases every mode has
inputs = [torch.ones(shape, dtype=torch.int32, device="cuda")] * 2  # input_ids, attention_mask

if mode == "eager":
    module = h.load_model(model_name).model.half().cuda()
elif mode == "load":
    torch_tensorrt = h.import_torch_tensorrt()
    module = torch_tensorrt.load(saved).module()
elif mode == "rebuild":
    torch_tensorrt = h.import_torch_tensorrt()
    settings = h.tensorrt_settings("fp16")
    cache_dir = os.environ.get("ENGINE_CACHE_DIR")  # the cache's keywords, or none
    cache = trt_features.engine_cache_settings(torch_tensorrt, cache_dir) if cache_dir else {}
    model = h.load_model(model_name).model.half().cuda()
    files = file_times(cache_dir)  # without a cache, nothing to walk
    compile_started = time.perf_counter()
    with h.quiet_tensorrt_logs(), sampled_phases(trt_features.PHASES) as samples:
        module = torch_tensorrt.compile(
            model,
            ir="dynamo",
            inputs=[
                torch_tensorrt.Input(
                    min_shape=(1, shape[1]),
                    opt_shape=shape,
                    max_shape=(4 * shape[0], shape[1]),
                    dtype=torch.int32,
                )
            ]
            * 2,
            min_block_size=1,
            **settings.kwargs,
            **cache,  # cache_built_engines, reuse_cached_engines, engine_cache_dir, ...
        )
    phases["compile_s"] = time.perf_counter() - compile_started
    phases["compile_phases"] = trt_features.phase_line("compile", phases["compile_s"], samples)
    if cache_dir:  # a start that reused the cache wrote no engine into it
        written = file_times(cache_dir).items()
        phases["cache_files_written"] = sum(files.get(p) != t for p, t in written)
elif mode == "engine":
    trt = importlib.import_module(os.environ.get("TRT_MODULE", "tensorrt"))
    engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(
        Path(saved).read_bytes()
    )
    graphed = os.environ.get("CUDA_GRAPH") == "1"
    config = engine.create_runtime_config() if hasattr(engine, "create_runtime_config") else None
    if graphed and config is not None and hasattr(trt, "DynamicShapesKernelSpecializationStrategy"):
        eager = trt.DynamicShapesKernelSpecializationStrategy.EAGER  # capture the final kernels
        config.dynamic_shapes_kernel_specialization_strategy = eager
    context = (
        engine.create_execution_context(config)
        if config is not None
        else engine.create_execution_context()
    )

    def module(input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """One call of the engine on torch tensors (deep dive 07d explains each line)."""
        for name, tensor in (("input_ids", input_ids), ("attention_mask", attention_mask)):
            context.set_input_shape(name, tuple(tensor.shape))
            context.set_tensor_address(name, tensor.data_ptr())
        dtype = {trt.float16: torch.float16, trt.float32: torch.float32}[
            engine.get_tensor_dtype("last_hidden_state")
        ]
        output = torch.empty(
            tuple(context.get_tensor_shape("last_hidden_state")), dtype=dtype, device="cuda"
        )
        context.set_tensor_address("last_hidden_state", output.data_ptr())
        if not context.execute_async_v3(torch.cuda.current_stream().cuda_stream):
            raise RuntimeError("execute_async_v3 failed")
        return output

    if graphed:
        module = h.capture_cuda_graph(module, inputs)

elif mode == "torch.compile":
    model = h.load_model(model_name).model.half().cuda()
    module = torch.compile(model, mode="reduce-overhead")
else:
    raise SystemExit(f"unknown mode {mode!r}: use eager, load, rebuild, torch.compile or engine")
prepared = time.perf_counter()
with torch.inference_mode():
    module(*inputs)
torch.cuda.synchronize()
done = time.perf_counter()
first_output_unix = time.time()  # a clock another process can compare with
print(
    json.dumps(
        {
            "mode": mode,
            "import_s": imported - started,
            "prepare_s": prepared - imported,
            "first_call_s": done - prepared,
            "first_output_unix": first_output_unix,
            **phases,
        }
    )
)
