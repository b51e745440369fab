"""How fast this host dispatches small PyTorch operations, measured before each notebook.

Eager PyTorch at small shapes is host-bound (notebook 01 shows it), so its time per call is
largely the host's. A run whose eager FP32 moved between notebooks can be read against this
probe: a slower host shows here too; a probe that held steady points elsewhere.
"""

from __future__ import annotations

import statistics
import time

import torch


def dispatch_us(calls: int = 1000, blocks: int = 5) -> float:
    """Median microseconds per ``torch.add`` of two one-element CPU tensors, over ``blocks``
    blocks of ``calls`` calls: PyTorch's dispatch on this host, with no GPU involved."""
    one = torch.ones(1)
    per_call = []
    for _ in range(blocks):
        start = time.perf_counter()
        for _ in range(calls):
            torch.add(one, one)
        per_call.append((time.perf_counter() - start) / calls * 1e6)
    return round(statistics.median(per_call), 3)
