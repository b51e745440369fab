"""The profile summaries a serving verdict rests on, on a CPU."""

import json
import threading
import time
from types import SimpleNamespace

import torch
from torch.profiler import ProfilerActivity, profile

from helpers.profiling import StackSampler, kernels_by_name, trace_summary


def test_the_sampler_sees_another_threads_library_function():
    def busy() -> None:
        until = time.perf_counter() + 0.3
        while time.perf_counter() < until:
            json.dumps(list(range(1000)))

    with StackSampler(package="json", interval=0.002) as sampler:
        worker = threading.Thread(target=busy)
        worker.start()
        worker.join()
    assert sampler.samples > 10
    assert sampler.top(1)[0][0] == "encoder.py:iterencode"


def test_the_trace_summary_counts_per_unit_of_work():
    with profile(activities=[ProfilerActivity.CPU], acc_events=True) as trace:
        for _ in range(4):
            torch.ones(8) @ torch.ones(8)
    summary = trace_summary(trace.events(), per=4)
    assert summary["kernels"] == 0 and summary["waits"] == 0  # a CPU: no kernels, no syncs
    assert summary["host_ops"] >= 2  # ones, ones, dot (and what they call) per product
    assert any("dot" in name for name, _ in summary["top_host_ms"])


def test_kernels_by_name_keeps_each_gpu_operation_and_skips_the_host():
    def event(name: str, device: str, us: float) -> SimpleNamespace:
        span = SimpleNamespace(elapsed_us=lambda: us)
        return SimpleNamespace(name=name, device_type=SimpleNamespace(name=device), time_range=span)

    events = [event("gemv", "CUDA", 3.0), event("gemv", "CUDA", 5.0), event("aten::mm", "CPU", 9.0)]
    assert kernels_by_name(events) == {"gemv": [3.0, 5.0]}
