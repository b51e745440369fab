"""How fast could it be? FLOPs counted, ceilings measured, floor time computed.

A latency means little without the time the hardware needs at best. We count the
model's FLOPs with PyTorch's own counter and measure the device's matrix rate and
copy bandwidth in the same run, then compare.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from helpers.timing import benchmark_latency


@dataclass(frozen=True)
class Ceilings:
    """Measured peak matrix rate (TFLOP/s) and copy bandwidth (GB/s) of a device."""

    matmul_tflops: float
    matmul_dtype: str
    bandwidth_gbs: float
    device_name: str

    def to_dict(self) -> dict:
        return asdict(self)


def count_flops(model: nn.Module, inputs: Sequence[torch.Tensor]) -> int:
    """FLOPs of one forward pass (matrix products and attention), counted by PyTorch."""
    with torch.inference_mode(), FlopCounterMode(display=False) as counter:
        model(*inputs)
    return int(counter.get_total_flops())


def parameter_bytes(model: nn.Module, precision_bytes: int) -> int:
    """Bytes of weights that every forward pass must read at least once."""
    return sum(p.numel() for p in model.parameters()) * precision_bytes


def measure_ceilings(device: torch.device, dtype: torch.dtype = torch.float16) -> Ceilings:
    """Measure a large matrix product's rate and a device copy's bandwidth here.

    Random data, not zeros: zeros run faster than real data on some GPUs.
    """
    if device.type == "cuda":
        size, nbytes = 8192, 2**30
        name = torch.cuda.get_device_name(device)
    else:
        size, nbytes, dtype = 1024, 2**26, torch.float32  # CPU half matmul is not a peak
        name = "cpu"
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    matmul = benchmark_latency(lambda: a @ b, device, warmup=3, iterations=10)
    src = torch.empty(nbytes // 4, device=device, dtype=torch.float32).uniform_()
    dst = torch.empty_like(src)
    copy = benchmark_latency(lambda: dst.copy_(src), device, warmup=3, iterations=10)
    return Ceilings(
        matmul_tflops=2 * size**3 / (matmul.median_ms * 1e-3) / 1e12,
        matmul_dtype=str(dtype).replace("torch.", ""),
        bandwidth_gbs=2 * nbytes / (copy.median_ms * 1e-3) / 1e9,  # bytes read + written
        device_name=name,
    )


def roofline_ms(flops: int, min_bytes: int, ceilings: Ceilings) -> float:
    """The floor: the larger of compute time at peak and memory time at full bandwidth."""
    compute_ms = flops / (ceilings.matmul_tflops * 1e12) * 1e3
    memory_ms = min_bytes / (ceilings.bandwidth_gbs * 1e9) * 1e3
    return max(compute_ms, memory_ms)


def achieved_tflops(flops: int, latency_ms: float) -> float:
    """Useful TFLOP/s at a given latency."""
    return flops / (latency_ms * 1e-3) / 1e12
