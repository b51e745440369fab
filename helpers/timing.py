"""Latency measured the honest way: warm up, time many calls, report a distribution.

This is the loop notebook 01 writes out by hand: CUDA events around each call on a GPU
(device time, no host jitter), a monotonic clock on the CPU, and the first (cold) call
measured apart because it is a different quantity.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class LatencyStats:
    """Summary of per-call latencies in milliseconds."""

    median_ms: float
    p90_ms: float
    p99_ms: float
    min_ms: float
    count: int
    timer: str

    @classmethod
    def from_samples(cls, samples_ms: list[float], timer: str) -> LatencyStats:
        if not samples_ms:
            raise ValueError("no latency samples to summarise")
        values = np.asarray(samples_ms, dtype=float)
        p50, p90, p99 = np.percentile(values, [50, 90, 99])
        return cls(float(p50), float(p90), float(p99), float(values.min()), len(values), timer)

    def __str__(self) -> str:
        return (
            f"median {self.median_ms:.3f} ms, p90 {self.p90_ms:.3f} ms, "
            f"p99 {self.p99_ms:.3f} ms (n={self.count}, {self.timer})"
        )


def synchronize(device: torch.device | str) -> None:
    """Wait for queued GPU work; a no-op on the CPU."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def time_cold_call(fn: Callable[[], object], device: torch.device | str) -> float:
    """Seconds for one synchronised call: the start-up cost when it is the first one."""
    synchronize(device)
    start = time.perf_counter()
    fn()
    synchronize(device)
    return time.perf_counter() - start


def time_calls(
    fn: Callable[[], object], device: torch.device, *, iterations: int, max_seconds: float
) -> list[float]:
    """Milliseconds of up to ``iterations`` calls, stopping after ``max_seconds``.

    Notebook 01's loop: CUDA events around each call on a GPU, read after one synchronize;
    a monotonic clock on the CPU. Also serves as the warm-up, its samples thrown away.
    """
    deadline = time.perf_counter() + max_seconds
    samples, events = [], []
    for _ in range(iterations):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            events.append((start, end))
        else:
            began = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - began) * 1e3)
        if time.perf_counter() > deadline:
            break
    synchronize(device)
    return samples + [start.elapsed_time(end) for start, end in events]


def benchmark_latency(
    fn: Callable[[], object],
    device: torch.device | str,
    *,
    warmup: int = 10,
    iterations: int = 100,
    max_seconds: float = 30.0,
) -> LatencyStats:
    """Warm up, then time ``iterations`` calls; ``max_seconds`` caps each phase on slow hardware.

    ``count`` in the result says how many calls were actually timed.
    """
    device = torch.device(device)
    with torch.inference_mode():
        time_calls(fn, device, iterations=warmup, max_seconds=max_seconds)  # warm-up
        samples = time_calls(fn, device, iterations=iterations, max_seconds=max_seconds)
    timer = "cuda events" if device.type == "cuda" else "perf_counter"
    return LatencyStats.from_samples(samples, timer)
