"""Where a call's time goes: wall time beside GPU kernel time, from ``torch.profiler``.

A latency says how long a call took, not why. When the GPU's kernels fill most of the wall
time the path is bound by its kernels; when they fill little, the GPU waits for the host
(launches, a runtime's bookkeeping), and faster kernels would not help.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
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


def kernels_by_name(events) -> dict[str, list[float]]:
    """Each GPU operation's durations in µs (kernels, copies, memsets), by name, from a trace."""
    by_name: dict[str, list[float]] = {}
    for event in events:
        if event.device_type.name == "CUDA":
            by_name.setdefault(event.name, []).append(event.time_range.elapsed_us())
    return by_name


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
    durations = kernels_by_name(prof.events())
    by_kind: dict[str, float] = {}
    for name, us in durations.items():
        kind = kernel_kind(name)
        by_kind[kind] = by_kind.get(kind, 0.0) + sum(us) / 1e3 / calls
    longest = sorted(durations.items(), key=lambda item: -sum(item[1]))[:top]
    averages = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:top]
    return CallProfile(
        wall_ms=wall_ms,
        kernel_ms=sum(map(sum, durations.values())) / 1e3 / calls,
        gpu_ops=sum(map(len, durations.values())) / calls,
        by_kind=by_kind,
        top=[(name[:90], sum(us) / 1e3 / calls) for name, us in longest],
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


def decode_kernel_kind(name: str) -> str:
    """kernel_kind, with Inductor's reductions that compute a matrix product (``mm`` in the
    name: the batch-1 rewrite of ``coordinate_descent_tuning``) counted as matrix products."""
    if name.startswith("triton_") and {"mm", "addmm"} & set(name.split("_")):
        return "matrix products"
    return kernel_kind(name)


@dataclass(frozen=True)
class StepProfile:
    """Per-step averages of a decode loop: unprofiled wall time, then the profiler's counts."""

    wall_ms: float  # without the profiler
    kernel_ms: float  # GPU time in kernels, copies and memsets, per step
    kernels: float  # GPU operations per step
    launches: float  # host launch calls per step
    launch_us: float  # mean duration of one launch call on the host
    top: list[tuple[str, float, float]] = field(default_factory=list)  # kernel, ms, calls a step
    by_kind: dict[str, float] = field(default_factory=dict)  # kernel ms a step per kernel_kind

    @property
    def idle_ms(self) -> float:
        """Wall time per step with no kernel running."""
        return max(0.0, self.wall_ms - self.kernel_ms)

    @property
    def busy_share(self) -> float:
        return min(1.0, self.kernel_ms / self.wall_ms) if self.wall_ms else 0.0


def profile_decode_steps(
    run: Callable[[int], object], steps: int = 16, top: int = 5
) -> StepProfile:
    """Profile ``run(steps)``, a warmed-up decode loop, per step, and its ``top`` kernels by time.

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
    durations = kernels_by_name(events)
    launch = [e for e in events if e.name in LAUNCH_CALLS]
    launch_us = sum(e.time_range.elapsed_us() for e in launch) / len(launch) if launch else 0.0
    longest = sorted(durations.items(), key=lambda item: -sum(item[1]))[:top]
    by_kind: dict[str, float] = {}
    for name, us in durations.items():
        kind = decode_kernel_kind(name)
        by_kind[kind] = by_kind.get(kind, 0.0) + sum(us) / 1e3 / steps
    return StepProfile(
        wall_ms=wall_ms,
        kernel_ms=sum(map(sum, durations.values())) / 1e3 / steps,
        kernels=sum(map(len, durations.values())) / steps,
        launches=len(launch) / steps,
        launch_us=launch_us,
        top=[(name[:70], sum(us) / 1e3 / steps, len(us) / steps) for name, us in longest],
        by_kind=by_kind,
    )


#: Host calls that wait for the GPU, or copy from it (and so wait for it).
_WAITS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy")


def trace_summary(events, per: int, top: int = 6) -> dict:
    """What a profiled stretch of work did, per unit of ``per`` (e.g. output tokens).

    For work run by a library's own threads: every thread's operators are in ``events``.
    """
    durations = kernels_by_name(events)
    host = [e for e in events if e.device_type.name == "CPU"]
    self_ms: dict[str, float] = {}
    for e in host:
        self_ms[e.name] = self_ms.get(e.name, 0.0) + e.self_cpu_time_total / 1e3
    waits = [e for e in host if e.name.startswith(_WAITS)]
    return {
        "per": per,
        "kernel_ms": sum(map(sum, durations.values())) / 1e3 / per,
        "kernels": sum(map(len, durations.values())) / per,
        "host_ops": len(host) / per,
        "waits": len(waits) / per,
        "wait_ms": sum(e.time_range.elapsed_us() for e in waits) / 1e3 / per,
        "threads": len({e.thread for e in host}),
        "top_host_ms": [
            (n[:60], ms / per) for n, ms in sorted(self_ms.items(), key=lambda i: -i[1])[:top]
        ],
    }


class StackSampler:
    """Samples the stacks of the other threads every ``interval`` s while the block runs.

    A library that works in its own thread (a serving batcher) hides its host time from
    a profiler of the calling thread; sampling its Python stack says which of its functions
    the time goes to, precisely enough to report upstream.
    """

    def __init__(self, package: str = "transformers", interval: float = 0.005) -> None:
        self.package, self.interval = package, interval
        self.counts: dict[str, int] = {}
        self.samples = 0

    def __enter__(self) -> StackSampler:
        import threading

        self.stop = threading.Event()
        self.skip = {threading.get_ident()}
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    def _sample(self) -> None:
        import sys
        import threading

        self.skip.add(threading.get_ident())
        while not self.stop.wait(self.interval):
            for ident, frame in sys._current_frames().items():
                where = self._innermost(frame) if ident not in self.skip else None
                if where:
                    self.counts[where] = self.counts.get(where, 0) + 1
                    self.samples += 1

    def _innermost(self, frame) -> str | None:
        """The innermost frame in ``package``: the library's own function at that moment."""
        while frame is not None:
            path = frame.f_code.co_filename
            if f"/{self.package}/" in path:
                return f"{path.split(f'/{self.package}/')[-1]}:{frame.f_code.co_name}"
            frame = frame.f_back
        return None

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()

    def top(self, count: int = 6) -> list[tuple[str, float]]:
        """The library functions most often on top, with their share of the samples."""
        ranked = sorted(self.counts.items(), key=lambda item: -item[1])[:count]
        return [(where, n / self.samples) for where, n in ranked]


@contextlib.contextmanager
def sampled_phases(phases: dict[str, tuple[str, ...]], interval: float = 0.01) -> Iterator[Counter]:
    """Seconds the calling thread spent in each phase, sampled every ``interval`` s: the innermost
    function on its stack whose qualified name is in ``phases``, else "other". Each sample
    counts the time since the last one, so a native call that holds the GIL keeps its time.

    cProfile would slow Python-heavy phases (export, lowering) more than native ones.
    """
    import sys
    import threading

    label = {name: phase for phase, names in phases.items() for name in names}
    caller, counts, stop = threading.get_ident(), Counter(), threading.Event()

    def sample() -> None:
        last = time.perf_counter()
        while not stop.wait(interval):
            frame = sys._current_frames().get(caller)
            while frame is not None and not (found := _phase_of(frame.f_code, label)):
                frame = frame.f_back
            now = time.perf_counter()
            counts[found if frame is not None else "other"] += now - last
            last = now

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield counts
    finally:
        stop.set()
        thread.join()


def _phase_of(code, label: dict[str, str]) -> str | None:
    return label.get(getattr(code, "co_qualname", code.co_name))  # Python 3.10: the bare name
