"""Where a call's time goes: wall time beside GPU kernel time, from ``torch.profiler``.

A latency says how long a call took, not why. When the GPU's kernels fill most of the wall
time the path is bound by its kernels; when they fill little, the GPU waits for the host
(launches, a runtime's bookkeeping), and faster kernels would not help.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

#: Name fragments of kernels, by what they compute (checked in this order).
_OTHER_PREFIXES = ("triton_poi", "triton_per", "triton_red", "memset", "memcpy")
_ATTENTION = ("mha", "fmha", "flash", "sdpa", "attention", "softmax")
_MATRIX = ("gemm", "matmul", "nvjet", "xmma", "cutlass", "addmm", "_mm", "cublas", "gemv")


def kernel_kind(name: str) -> str:
    """'attention', 'matrix products' or 'other', from a kernel's name."""
    lower = name.lower()
    if lower.startswith(_OTHER_PREFIXES):  # Inductor's pointwise/reduction kernels, copies
        return "other"
    if any(part in lower for part in _ATTENTION):
        return "attention"
    if any(part in lower for part in _MATRIX):
        return "matrix products"
    return "other"


@dataclass(frozen=True)
class CallProfile:
    """Per-call averages over a profiled run of warm calls."""

    wall_ms: float  # with the profiler on, which slows the host a little
    kernel_ms: float  # GPU time in kernels, copies and memsets
    gpu_ops: float
    by_kind: dict[str, float] = field(default_factory=dict)  # kernel ms per kernel_kind
    top: list[tuple[str, float]] = field(default_factory=list)  # longest kernels, ms per call
    host_ops: list[tuple[str, float]] = field(default_factory=list)  # most host time, ms per call

    @property
    def busy_share(self) -> float:
        """Share of the wall time with the GPU in kernels (a lower bound: see wall_ms)."""
        return min(1.0, self.kernel_ms / self.wall_ms) if self.wall_ms else 0.0

    @property
    def host_ms(self) -> float:
        """Wall time with no kernel running: the host's work and waiting, per call."""
        return max(0.0, self.wall_ms - self.kernel_ms)


def profile_calls(
    fn: Callable[..., object], inputs: Sequence[torch.Tensor], calls: int = 20, top: int = 5
) -> CallProfile:
    """Profile ``calls`` warm calls of ``fn(*inputs)`` on the GPU; averages per call."""
    from torch.profiler import ProfilerActivity, profile

    with torch.inference_mode():
        for _ in range(3):
            fn(*inputs)
        torch.cuda.synchronize()
        activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
        with profile(activities=activities, acc_events=True) as prof:
            start = time.perf_counter()
            for _ in range(calls):
                fn(*inputs)
            torch.cuda.synchronize()
            wall_ms = (time.perf_counter() - start) * 1e3 / calls
    per_kernel: dict[str, float] = {}
    count = 0
    for event in prof.events():
        if event.device_type.name == "CUDA":
            per_kernel[event.name] = per_kernel.get(event.name, 0.0) + event.time_range.elapsed_us()
            count += 1
    by_kind: dict[str, float] = {}
    for name, us in per_kernel.items():
        kind = kernel_kind(name)
        by_kind[kind] = by_kind.get(kind, 0.0) + us / 1e3 / calls
    longest = sorted(per_kernel.items(), key=lambda item: -item[1])[:top]
    averages = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:top]
    return CallProfile(
        wall_ms=wall_ms,
        kernel_ms=sum(per_kernel.values()) / 1e3 / calls,
        gpu_ops=count / calls,
        by_kind=by_kind,
        top=[(name[:90], us / 1e3 / calls) for name, us in longest],
        host_ops=[(e.key[:60], e.self_cpu_time_total / 1e3 / calls) for e in averages],
    )


def format_profile(name: str, p: CallProfile) -> str:
    """One line: wall, kernels, busy share, host share and the split by kind of kernel."""
    kinds = ", ".join(f"{kind} {ms:.3f}" for kind, ms in sorted(p.by_kind.items()))
    return (
        f"{name:<44} wall {p.wall_ms:7.3f} ms, kernels {p.kernel_ms:7.3f} ms "
        f"({100 * p.busy_share:3.0f} % busy), host/idle {p.host_ms:6.3f} ms, "
        f"{p.gpu_ops:4.0f} ops [{kinds}]"
    )


#: Host calls that launch GPU work; one cudaGraphLaunch replays a whole captured graph.
LAUNCH_CALLS = (
    "cudaLaunchKernel",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "cudaLaunchKernelExC",
    "cudaGraphLaunch",
)


@dataclass(frozen=True)
class StepProfile:
    """Per-step averages of a decode loop: unprofiled wall time, then the profiler's counts."""

    wall_ms: float  # without the profiler
    kernel_ms: float  # GPU time in kernels, copies and memsets, per step
    kernels: float  # GPU operations per step
    launches: float  # host launch calls per step
    launch_us: float  # mean duration of one launch call on the host

    @property
    def idle_ms(self) -> float:
        """Wall time per step with no kernel running."""
        return max(0.0, self.wall_ms - self.kernel_ms)

    @property
    def busy_share(self) -> float:
        return min(1.0, self.kernel_ms / self.wall_ms) if self.wall_ms else 0.0


def profile_decode_steps(run: Callable[[int], object], steps: int = 16) -> StepProfile:
    """Profile ``run(steps)``, a loop of decode steps already warmed up, per step.

    The wall time comes from a separate unprofiled ``run(steps)``: the profiler slows the host.
    """
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    start = time.perf_counter()
    run(steps)
    torch.cuda.synchronize()
    wall_ms = (time.perf_counter() - start) * 1e3 / steps
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], acc_events=True) as p:
        run(steps)
        torch.cuda.synchronize()
    events = p.events()
    gpu = [e for e in events if e.device_type.name == "CUDA"]
    launch = [e for e in events if e.name in LAUNCH_CALLS]
    launch_us = sum(e.time_range.elapsed_us() for e in launch) / len(launch) if launch else 0.0
    return StepProfile(
        wall_ms=wall_ms,
        kernel_ms=sum(e.time_range.elapsed_us() for e in gpu) / 1e3 / steps,
        kernels=len(gpu) / steps,
        launches=len(launch) / steps,
        launch_us=launch_us,
    )
