"""Latency measured the honest way: warm up, time many calls, report a distribution.

On a GPU each call is timed with CUDA events (device time, no host jitter); on the CPU
with a monotonic clock. The first (cold) call is a different quantity, measured apart.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class LatencyStats:
    """Summary of per-call latencies in milliseconds."""

    median_ms: float
    p90_ms: float
    p99_ms: float
    mean_ms: float
    std_ms: float
    min_ms: float
    count: int
    timer: str

    @classmethod
    def from_samples(cls, samples_ms: list[float], timer: str) -> LatencyStats:
        if not samples_ms:
            raise ValueError("no latency samples to summarise")
        values = np.asarray(samples_ms, dtype=float)
        p50, p90, p99 = np.percentile(values, [50, 90, 99])
        return cls(
            median_ms=float(p50),
            p90_ms=float(p90),
            p99_ms=float(p99),
            mean_ms=float(values.mean()),
            std_ms=float(values.std(ddof=1)) if len(values) > 1 else 0.0,
            min_ms=float(values.min()),
            count=len(values),
            timer=timer,
        )

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return (
            f"median {self.median_ms:.3f} ms, p90 {self.p90_ms:.3f} ms, "
            f"p99 {self.p99_ms:.3f} ms (n={self.count}, {self.timer})"
        )


def synchronize(device: torch.device | str) -> None:
    """Wait for queued GPU work; a no-op on the CPU."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def time_single_call(fn: Callable[[], object], device: torch.device | str) -> float:
    """Seconds for one call, synchronised: the cold-start cost when called first."""
    synchronize(device)
    start = time.perf_counter()
    fn()
    synchronize(device)
    return time.perf_counter() - start


def benchmark_latency(
    fn: Callable[[], object],
    device: torch.device | str,
    warmup: int = 10,
    iterations: int = 100,
    max_seconds: float | None = None,
) -> LatencyStats:
    """Warm up, then time ``iterations`` calls of ``fn`` one by one.

    ``max_seconds`` bounds the timed phase on slow hardware (a CPU run of a GPU-sized
    workload): timing stops early and ``count`` says how many calls were measured.
    """
    if warmup < 0 or iterations < 1:
        raise ValueError(f"need warmup >= 0 and iterations >= 1, got {warmup} and {iterations}")
    device = torch.device(device)
    with torch.inference_mode():
        for _ in range(warmup):
            fn()
        synchronize(device)
        deadline = None if max_seconds is None else time.perf_counter() + max_seconds
        if device.type == "cuda":
            events = []
            for _ in range(iterations):
                start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
                start.record()
                fn()
                end.record()
                events.append((start, end))
                if deadline is not None and time.perf_counter() > deadline:
                    break
            torch.cuda.synchronize(device)
            return LatencyStats.from_samples([s.elapsed_time(e) for s, e in events], "cuda events")
        samples = []
        for _ in range(iterations):
            start = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - start) * 1e3)
            if deadline is not None and time.perf_counter() > deadline:
                break
        return LatencyStats.from_samples(samples, "perf_counter")
