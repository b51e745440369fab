"""Build the fast paths: Torch-TensorRT engines, torch.compile, CUDA graphs.

Each builder returns something callable like the eager model, ``fn(input_ids,
attention_mask) -> last_hidden_state``, so that one benchmark loop measures them all.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from helpers.errors import SkipPath, check_precision
from helpers.tensorrt import installed_precision_plan, load_torch_tensorrt, quiet_tensorrt_logs
from helpers.timing import synchronize

DTYPES = {"fp32": torch.float32, "fp16": torch.float16}


@dataclass
class CompiledModel:
    """A compiled callable, how long compiling took, and how precision was applied."""

    module: Callable
    compile_s: float
    how: str


def model_in_precision(model: nn.Module, precision: str) -> nn.Module:
    """``model`` in ``precision``: an FP16 copy, or the model itself for FP32.

    The original stays FP32, so it remains the reference every path is compared with.
    """
    dtype = DTYPES[check_precision(precision)]
    return copy.deepcopy(model).to(dtype) if dtype != torch.float32 else model


def compile_tensorrt(
    model: nn.Module | torch.export.ExportedProgram,
    example_inputs: Sequence[torch.Tensor],
    precision: str = "fp16",
    dynamic_batch: tuple[int, int, int] | None = None,
    shape_ranges: Sequence[tuple[tuple, tuple, tuple]] | None = None,
    attn_bias_is_causal: bool = False,
    **settings,
) -> CompiledModel:
    """Compile with Torch-TensorRT in ``precision``, with optional dynamic shapes.

    ``dynamic_batch=(min, opt, max)`` makes dimension 0 of every input dynamic.
    ``shape_ranges`` gives each input its own ``(min_shape, opt_shape, max_shape)``.
    Without either, shapes are static. An ExportedProgram (your own ``torch.export``,
    e.g. with a dynamic sequence length) must already be in the precision asked for.
    Raises TensorRTUnavailableError (a SkipPath) when TensorRT cannot run here.
    """
    torch_tensorrt = load_torch_tensorrt()
    plan = installed_precision_plan(precision, attn_bias_is_causal)
    if dynamic_batch is not None:
        low, opt, high = dynamic_batch
        shape_ranges = [
            ((low, *t.shape[1:]), (opt, *t.shape[1:]), (high, *t.shape[1:])) for t in example_inputs
        ]
    if shape_ranges is not None:
        inputs = [
            torch_tensorrt.Input(min_shape=low, opt_shape=opt, max_shape=high, dtype=t.dtype)
            for (low, opt, high), t in zip(shape_ranges, example_inputs, strict=True)
        ]
    else:
        inputs = [torch_tensorrt.Input(shape=tuple(t.shape), dtype=t.dtype) for t in example_inputs]
    device = example_inputs[0].device
    start = time.perf_counter()
    with quiet_tensorrt_logs():
        if isinstance(model, torch.export.ExportedProgram):
            module = torch_tensorrt.dynamo.compile(
                model, arg_inputs=inputs, **plan.settings, **settings
            )
        else:
            if plan.cast_dtype is not None:
                model = copy.deepcopy(model).to(plan.cast_dtype)
            module = torch_tensorrt.compile(
                model, ir="dynamo", inputs=inputs, **plan.settings, **settings
            )
    synchronize(device)
    return CompiledModel(module, time.perf_counter() - start, plan.explanation)


def compile_torch(model: nn.Module, device: torch.device, mode: str = "default") -> CompiledModel:
    """``torch.compile`` as PyTorch's own answer; compilation happens on the first call.

    ``mode='reduce-overhead'`` wraps the compiled code in CUDA graphs and
    ``'max-autotune'`` also benchmarks kernel choices; both need a GPU.
    ``compile_s`` is 0 here: the cost shows up as the first call's time.
    """
    if mode in ("reduce-overhead", "max-autotune") and device.type != "cuda":
        raise SkipPath(f"torch.compile mode={mode!r} uses CUDA graphs and needs a CUDA device")
    compiled = torch.compile(model, mode=None if mode == "default" else mode)
    return CompiledModel(compiled, 0.0, f"torch.compile(mode={mode!r})")


def capture_cuda_graph(
    fn: Callable[..., torch.Tensor], example_inputs: Sequence[torch.Tensor], warmup: int = 3
) -> Callable[..., torch.Tensor]:
    """Record ``fn`` once as a CUDA graph and return a function that replays it.

    Removes per-kernel launch cost, which dominates small batches. The replay reads
    from static copies of the inputs, so new inputs of the same shape are copied in.
    """
    if example_inputs[0].device.type != "cuda":
        raise SkipPath("CUDA graphs need a CUDA device")
    static_inputs = [t.clone() for t in example_inputs]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            fn(*static_inputs)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_output = fn(*static_inputs)

    def replay(*inputs: torch.Tensor) -> torch.Tensor:
        for static, new in zip(static_inputs, inputs, strict=True):
            if new.data_ptr() != static.data_ptr():
                static.copy_(new)
        graph.replay()
        return static_output

    return replay
