"""The inference paths the series compares, each built the same way everywhere.

A path is a name, the precision its accuracy is judged in, a builder, and whether it
is an experiment (its failure is recorded, not raised). Notebooks pick from here so
that 02 (FP16) and 03 (FP32) compare like with like.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from helpers.benchmark import Builder, PathResult, measure_path
from helpers.compile import (
    CompiledModel,
    capture_cuda_graph,
    compile_tensorrt,
    compile_torch,
    model_in_precision,
)
from helpers.errors import SkipPath
from helpers.roofline import Ceilings, achieved_tflops, parameter_bytes, roofline_ms


@dataclass
class InferencePath:
    """A named way of running the model."""

    name: str
    precision: str
    build: Builder
    optional: bool = False


def eager(model: nn.Module, precision: str) -> Builder:
    """Plain PyTorch in ``precision``."""
    return lambda: CompiledModel(model_in_precision(model, precision), 0.0, "eager PyTorch")


def eager_tf32(model: nn.Module, device: torch.device) -> Builder:
    """FP32 eager with TF32 matrix products, as TensorRT's FP32 engines may use."""

    def build() -> CompiledModel:
        if device.type != "cuda":
            raise SkipPath("TF32 exists only on NVIDIA GPUs (Ampere and newer)")

        def run(*inputs: torch.Tensor) -> torch.Tensor:
            previous = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = True
            try:
                return model(*inputs)
            finally:
                torch.backends.cuda.matmul.allow_tf32 = previous

        return CompiledModel(run, 0.0, "eager PyTorch, allow_tf32=True")

    return build


def tensorrt(
    model: nn.Module, inputs: Sequence[torch.Tensor], precision: str, batch_size: int
) -> Builder:
    """Torch-TensorRT with a dynamic batch 1..batch_size, optimised for batch_size."""
    return lambda: compile_tensorrt(model, inputs, precision, (1, batch_size, batch_size))


def torch_compiled(model: nn.Module, precision: str, device: torch.device, mode: str) -> Builder:
    """``torch.compile`` in ``mode`` on a copy of the model in ``precision``."""
    return lambda: compile_torch(model_in_precision(model, precision), device, mode)


def with_cuda_graph(build: Builder, inputs: Sequence[torch.Tensor]) -> Builder:
    """The same path, recorded once as a CUDA graph and replayed (no launch overhead)."""

    def graphed() -> CompiledModel:
        if inputs[0].device.type != "cuda":
            raise SkipPath("CUDA graphs need a CUDA device")
        inner = build()
        replay = capture_cuda_graph(inner.module, inputs)
        return CompiledModel(replay, inner.compile_s, inner.how + " + CUDA graph")

    return graphed


def comparison_paths(
    model: nn.Module,
    inputs: Sequence[torch.Tensor],
    precision: str,
    device: torch.device,
    batch_size: int,
    engine: CompiledModel | None = None,
) -> list[InferencePath]:
    """The paths of notebooks 02/03: eager baselines, TensorRT, torch.compile, CUDA graphs.

    Pass the ``engine`` a notebook already compiled so that it is not compiled again.
    """
    paths = [InferencePath("eager fp32", "fp32", eager(model, "fp32"))]
    if precision == "fp16":
        paths.append(InferencePath("eager fp16", "fp16", eager(model, "fp16")))
    else:
        paths.append(InferencePath("eager fp32 tf32", "fp32", eager_tf32(model, device)))
    trt = (lambda: engine) if engine is not None else tensorrt(model, inputs, precision, batch_size)
    paths += [
        InferencePath(
            f"eager {precision} + CUDA graph",
            precision,
            with_cuda_graph(eager(model, precision), inputs),
            optional=True,
        ),
        InferencePath(f"torch-tensorrt {precision}", precision, trt),
        InferencePath(
            f"torch-tensorrt {precision} + CUDA graph",
            precision,
            with_cuda_graph(trt, inputs),
            optional=True,
        ),
        InferencePath(
            f"torch.compile {precision}",
            precision,
            torch_compiled(model, precision, device, "default"),
        ),
        InferencePath(
            f"torch.compile {precision} reduce-overhead",
            precision,
            torch_compiled(model, precision, device, "reduce-overhead"),
            optional=True,
        ),
    ]
    if precision == "fp16":  # the search for the fastest path: autotuned kernels + CUDA graphs
        autotuned = torch_compiled(model, "fp16", device, "max-autotune")
        paths.append(InferencePath("torch.compile fp16 max-autotune", "fp16", autotuned, True))
    return paths


def run_paths(
    paths: Sequence[InferencePath],
    inputs: Sequence[torch.Tensor],
    reference: torch.Tensor,
    device: torch.device,
    warmup: int,
    iterations: int,
    max_seconds: float | None,
    threshold: float,
    progress: bool = True,
) -> list[PathResult]:
    """Measure each path in turn, printing one line per path as it finishes."""
    results = []
    for path in paths:
        result = measure_path(
            path.name,
            path.build,
            inputs,
            reference,
            path.precision,
            device,
            warmup,
            iterations,
            max_seconds,
            threshold,
            path.optional,
        )
        results.append(result)
        if progress:
            detail = str(result.latency) if result.latency else result.reason
            print(f"{path.name:<40} {result.status:<8} {detail}")
    return results


def add_roofline(
    results: Sequence[PathResult], flops: int, model: nn.Module, ceilings: Ceilings
) -> None:
    """Attach achieved TFLOP/s, the floor time and the share of peak to measured rows."""
    for result in results:
        if result.latency is None:
            continue
        weight_bytes = parameter_bytes(model, 2 if result.precision == "fp16" else 4)
        floor = roofline_ms(flops, weight_bytes, ceilings)
        tflops = achieved_tflops(flops, result.latency.median_ms)
        result.extra.update(
            achieved_tflops=tflops,
            roofline_ms=floor,
            pct_of_peak=100 * tflops / ceilings.matmul_tflops,
        )
