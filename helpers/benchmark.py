"""Measure one inference path end to end: build, check accuracy, time, memory.

Every path in the comparison tables goes through ``measure_path``, so each one is
checked against the FP32 reference before its speed is reported, and a path that
cannot run here is recorded as skipped with its reason instead of vanishing.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd
import torch

from helpers.compare import OutputDiff, check_accuracy, compare_outputs
from helpers.compile import CompiledModel
from helpers.errors import SkipPath
from helpers.timing import LatencyStats, benchmark_latency, synchronize

#: A builder returns the callable path (with compile time) or raises SkipPath.
Builder = Callable[[], CompiledModel]


@dataclass
class PathResult:
    """One row of a comparison: a path's speed and accuracy, or why it did not run."""

    name: str
    precision: str
    status: str  # "ok", "skipped" or "failed"
    reason: str = ""
    how: str = ""
    compile_s: float | None = None
    first_call_s: float | None = None
    latency: LatencyStats | None = None
    diff: OutputDiff | None = None
    peak_memory_mb: float | None = None  # torch allocator peak over build + run (CUDA)
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "precision": self.precision,
            "status": self.status,
            "reason": self.reason,
            "how": self.how,
            "compile_s": self.compile_s,
            "first_call_s": self.first_call_s,
            "latency": self.latency.to_dict() if self.latency else None,
            "diff": self.diff.to_dict() if self.diff else None,
            "peak_memory_mb": self.peak_memory_mb,
            **self.extra,
        }


def measure_path(
    name: str,
    build: Builder,
    inputs: Sequence[torch.Tensor],
    reference: torch.Tensor,
    precision: str,
    device: torch.device,
    warmup: int = 10,
    iterations: int = 100,
    max_seconds: float | None = None,
    threshold: float = 0.01,
    optional: bool = False,
) -> PathResult:
    """Build a path, gate its accuracy against ``reference``, then time it.

    A SkipPath from the builder gives a skipped row. An AccuracyError always
    propagates: a fast wrong answer must stop the notebook. Other build or run errors
    propagate too, unless ``optional`` (an experiment), where they give a failed row.
    """
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    try:
        compiled = build()
        fn = compiled.module
        with torch.inference_mode():
            synchronize(device)
            start = time.perf_counter()
            output = fn(*inputs)
            synchronize(device)
            first_call_s = time.perf_counter() - start
            output = output.clone()  # CUDA-graph outputs are overwritten by the next replay
    except SkipPath as skip:
        return PathResult(name, precision, "skipped", reason=str(skip))
    except Exception as error:
        if not optional:
            raise
        last = traceback.format_exception_only(type(error), error)[-1].strip()
        return PathResult(name, precision, "failed", reason=last[:300])
    diff = compare_outputs(reference, output, threshold)
    check_accuracy(diff, precision, name)
    latency = benchmark_latency(lambda: fn(*inputs), device, warmup, iterations, max_seconds)
    peak = torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda" else None
    return PathResult(
        name,
        precision,
        "ok",
        how=compiled.how,
        compile_s=compiled.compile_s,
        first_call_s=first_call_s,
        latency=latency,
        diff=diff,
        peak_memory_mb=peak,
    )


def comparison_rows(results: Sequence[dict], baseline: str = "eager fp32") -> list[dict]:
    """Rows of a comparison (results as dicts, as in records), with speed-ups against
    ``baseline`` measured in the same run; paths that did not run keep their reason."""
    base = next((r for r in results if r["name"] == baseline and r.get("latency")), None)
    rows = []
    for r in results:
        lat, diff = r.get("latency"), r.get("diff")
        status = r["status"] if r["status"] == "ok" else f"{r['status']}: {r['reason']}"
        row = {"path": r["name"], "status": status}
        if lat:
            row.update(
                p50_ms=lat["median_ms"],
                p90_ms=lat["p90_ms"],
                n=lat["count"],
                speedup=base["latency"]["median_ms"] / lat["median_ms"] if base else None,
                achieved_tflops=r.get("achieved_tflops"),
                pct_of_peak=r.get("pct_of_peak"),
                roofline_ms=r.get("roofline_ms"),
                compile_s=r.get("compile_s"),
                first_call_s=r.get("first_call_s"),
                max_abs_diff=diff["max_abs"] if diff else None,
                min_cosine=diff["min_cosine"] if diff else None,
                peak_mem_mb=r.get("peak_memory_mb"),
            )
        rows.append(row)
    return rows


def results_frame(results: Sequence[PathResult], baseline: str = "eager fp32") -> pd.DataFrame:
    """The comparison as a table for a notebook (see ``comparison_rows``)."""
    rows = comparison_rows([r.to_dict() for r in results], baseline)
    return pd.DataFrame(rows).set_index("path")
