"""How fast could it be? FLOPs counted, ceilings measured per precision, in the same run.

A latency means little without the rate the hardware reaches at best, and that rate
depends on the precision: FP32 without tensor cores, TF32, FP16. Each path is judged
against the ceiling of the arithmetic it actually used.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from helpers.gpu import gpu_features
from helpers.timing import benchmark_latency


def count_flops(model: nn.Module, inputs: Sequence[torch.Tensor]) -> int:
    """FLOPs of one forward pass (matrix products and attention), counted by PyTorch."""
    with torch.inference_mode(), FlopCounterMode(display=False) as counter:
        model(*inputs)
    return int(counter.get_total_flops())


def count_flops_by_kind(model: nn.Module, inputs: Sequence[torch.Tensor]) -> dict[str, int]:
    """FLOPs of one forward pass split as 'attention' (the SDPA ops) and 'matrix products'."""
    with torch.inference_mode(), FlopCounterMode(display=False) as counter:
        model(*inputs)
    split = {"matrix products": 0, "attention": 0}
    for op, flops in counter.get_flop_counts().get("Global", {}).items():
        split["attention" if "attention" in str(op) else "matrix products"] += int(flops)
    return split


def matmul_tflops(device: torch.device, dtype: torch.dtype, allow_tf32: bool = False) -> float:
    """TFLOP/s of a large matrix product on random data (zeros run faster on some GPUs)."""
    size = 8192 if device.type == "cuda" else 1024
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = allow_tf32
    try:
        stats = benchmark_latency(lambda: a @ b, device, warmup=3, iterations=10)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    return 2 * size**3 / (stats.median_ms * 1e-3) / 1e12


def measure_ceilings(device: torch.device) -> dict[str, float]:
    """Matrix-product TFLOP/s per arithmetic ('fp32', 'tf32', 'fp16') measured here.

    On a CPU only 'fp32' is measured: CPU half precision is no peak to aim for; 'tf32' only
    where the GPU has it.
    """
    ceilings = {"fp32": matmul_tflops(device, torch.float32)}
    if device.type == "cuda" and gpu_features(device).tf32:  # an emulated T4 has none
        ceilings["tf32"] = matmul_tflops(device, torch.float32, allow_tf32=True)
    if device.type == "cuda":
        ceilings["fp16"] = matmul_tflops(device, torch.float16)
    return ceilings


def achieved_tflops(flops: int, latency_ms: float) -> float:
    """Useful TFLOP/s at a given latency."""
    return flops / (latency_ms * 1e-3) / 1e12


def copy_bandwidth(device: torch.device, mib: int = 1024) -> float:
    """GB/s of a large tensor copy, counting the bytes read and written: the memory roof."""
    mib = mib if device.type == "cuda" else 128
    source = torch.empty(mib * 2**20, dtype=torch.uint8, device=device)
    target = torch.empty_like(source)
    stats = benchmark_latency(lambda: target.copy_(source), device, warmup=3, iterations=10)
    return 2 * source.numel() / (stats.median_ms * 1e-3) / 1e9


def decode_weight_bytes(model: nn.Module) -> int:
    """Bytes of weights one decode step reads: all of them but the input embedding table.

    A step looks up one row of the embedding table per token, so an untied table (Llama 3.1
    8B's 1 GB) is not read; a tied one is, as the output head. Quantized weights held in
    buffers count at their stored size, with their scales.
    """
    tensors = list(model.parameters()) + list(model.buffers())
    total = sum(t.numel() * t.element_size() for t in tensors)
    table = model.get_input_embeddings().weight
    head = model.get_output_embeddings()
    tied = head is not None and getattr(head, "weight", None) is table
    return total if tied else total - table.numel() * table.element_size()
