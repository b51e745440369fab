"""Try each Torch-TensorRT feature its documentation leads with, once, on this machine.

    python -m helpers.tools.trt_features_check                     # roberta-base, 16 x 32
    python -m helpers.tools.trt_features_check --model-name distilroberta-base

Prints one line per feature: what it did here (with its times and its error against eager
FP16), or why it was skipped. Versions and builds differ in exactly these features, so run
it on a new machine before the lessons that use them (02, 05, 07, 07d, 02d).
"""

from __future__ import annotations

import argparse
import copy
import os
import tempfile
import time

import torch

import helpers as h
from helpers import cold_starts, trt_features
from helpers.errors import SeriesError

FEATURES = ("backend='tensorrt'", "engine cache", "refit", "shared_dims")


def difference(
    output, reference: torch.Tensor, attention_mask: torch.Tensor, against: str = "eager FP16"
) -> str:
    """A model output (or its first tensor) against ``reference``, over real tokens."""
    tensor = getattr(output, "last_hidden_state", output)
    tensor = tensor[0] if isinstance(tensor, (tuple, list)) else tensor
    diff = h.compare_outputs(reference, tensor, attention_mask=attention_mask)
    return f"against {against}: {diff}"


def check_backend(torch_tensorrt, model, inputs, reference) -> str:
    """``torch.compile(backend="tensorrt")``: first call, error, what fell back to PyTorch."""
    settings = h.tensorrt_settings("fp16", static_shape=True)
    with trt_features.partitions(torch_tensorrt) as seen:
        start = time.perf_counter()
        compiled = torch.compile(
            model,
            backend="tensorrt",
            dynamic=False,
            options={"min_block_size": 1, **settings.kwargs},
        )
        with torch.inference_mode():
            error = difference(compiled(*inputs), reference, inputs[1])
        seconds = time.perf_counter() - start
    torch._dynamo.reset()
    line = trt_features.partition_line(seen)
    return f"first call {seconds:.1f} s, {error}; {line}"


def check_engine_cache(torch_tensorrt, model_name: str, shape: tuple[int, int]) -> str:
    """Two fresh processes share one cache folder: the first builds, the second may reuse
    (notebook 07d's rebuilds, through the same launcher)."""
    trt_features.engine_cache_settings(torch_tensorrt, "-")  # SkipStep before any process
    folder = tempfile.mkdtemp(prefix="engine-cache-")
    workload, cache = (model_name, *shape), {"ENGINE_CACHE_DIR": folder}
    seconds = [
        cold_starts.cold_start("rebuild", "-", workload, **cache)["compile_s"] for _ in range(2)
    ]
    files = sum(len(names) for _, _, names in os.walk(folder))
    return (
        f"compile in a fresh process: {seconds[0]:.1f} s writing the cache, {seconds[1]:.1f} s "
        f"with it ({files} file(s) in {folder})"
    )


def check_refit(torch_tensorrt, model, inputs) -> str:
    """``MutableTorchTensorRTModule``: the first build, then a weight change, refit or rebuilt."""
    settings = h.tensorrt_settings("fp16", static_shape=True)
    mutable = torch_tensorrt.MutableTorchTensorRTModule(  # non-strict export, as compile's
        copy.deepcopy(model),
        immutable_weights=False,
        strict=False,
        min_block_size=1,
        **settings.kwargs,
    )
    events = trt_features.watch_refits(mutable)
    generator = torch.Generator().manual_seed(1)
    changed = copy.deepcopy(model)
    with torch.no_grad():
        for parameter in changed.parameters():
            parameter.add_(0.02 * torch.randn(parameter.shape, generator=generator).to(parameter))
    with torch.no_grad():  # not inference_mode: the module exports and refits inside its calls
        mutable(*inputs)  # the first build
        reference = changed(*inputs)
        mutable.load_state_dict(changed.state_dict())
        error = difference(mutable(*inputs), reference, inputs[1], "the changed eager model")
    line, _ = trt_features.refit_line(events)
    return f"{line}; {error}"


def feature_lines(model_name: str, shape: tuple[int, int]) -> list[str]:
    """One line per feature, each tried in turn; an error is a line, not the end."""
    try:
        torch_tensorrt = h.import_torch_tensorrt()
    except SeriesError as why:
        return [f"{name}: skipped: {why}" for name in FEATURES]
    try:
        loaded = h.load_model(model_name)
    except SeriesError as why:  # an unknown model: one line, no feature tried
        return [f"--model-name {model_name!r}: {why}"]
    model = loaded.model.half().cuda().eval()
    inputs = [t.cuda() for t in h.make_batch(loaded, *shape)]
    with torch.inference_mode():
        reference = model(*inputs)
    checks = {
        FEATURES[0]: lambda: check_backend(torch_tensorrt, model, inputs, reference),
        FEATURES[1]: lambda: check_engine_cache(torch_tensorrt, model_name, shape),
        FEATURES[2]: lambda: check_refit(torch_tensorrt, model, inputs),
        FEATURES[3]: lambda: trt_features.check_shared_dims(torch_tensorrt) or "supported",
    }
    lines = []
    for name, check in checks.items():
        try:
            lines.append(f"{name}: {check()}")
        except SeriesError as why:
            lines.append(f"{name}: skipped: {why}")
        except Exception as error:  # a feature that fails here is the finding
            lines.append(f"{name}: failed: {type(error).__name__}: {str(error)[:300]}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-name", default="roberta-base")
    parser.add_argument("--shape", default="16x32", help="batch x tokens, e.g. 16x32")
    args = parser.parse_args(argv)
    try:
        shape = tuple(int(n) for n in args.shape.lower().split("x"))
        assert len(shape) == 2 and min(shape) > 0
    except (ValueError, AssertionError):
        parser.exit(2, f"--shape {args.shape!r}: give batch x tokens, e.g. 16x32\n")
    status = h.tensorrt_status()
    print(f"torch_tensorrt {status.version or 'not installed'} ({status.build or '-'} build)")
    print("\n".join(feature_lines(args.model_name, shape)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
