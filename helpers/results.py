"""Gate and time a dict of candidates, tabulate them, and keep the run as a record.

A notebook builds its candidates with the real calls and hands them over as a plain dict,
``{"eager fp32": model, "torch-tensorrt fp16": trt_model, ...}``. Each one is checked
against the eager FP32 reference before it is timed, and all are timed in interleaved
rounds so that a clock change or a busy neighbour affects every candidate alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from helpers.accuracy import OutputDiff, check_accuracy, compare_outputs
from helpers.claims import unsteady_paths
from helpers.errors import AccuracyError, SkipStep
from helpers.gpu import emulated_speeds
from helpers.timing import LatencyStats, synchronize, time_calls, time_cold_call

#: A candidate is something to call with the inputs, or the exception its build raised.
Candidate = Callable[..., torch.Tensor] | BaseException


@dataclass
class PathResult:
    """One row of a comparison: a path's accuracy and speed, or why it has none."""

    name: str
    status: str  # "ok", "skipped", "failed", "wrong", or "outside" its own reference's gate
    reason: str = ""
    output_dtype: str | None = None
    first_call_s: float | None = None
    latency: LatencyStats | None = None
    round_medians_ms: list[float] = field(default_factory=list)
    diff: OutputDiff | None = None
    call_memory_mib: float | None = None  # allocator peak during a call, above what was held
    settled_diff: OutputDiff | None = None  # a warm call's output, after the timed calls


def _not_run(name: str, error: BaseException) -> PathResult:
    status = "skipped" if isinstance(error, SkipStep) else "failed"
    message = str(error).splitlines()[0][:300] if str(error) else type(error).__name__
    return PathResult(name, status, reason=f"{type(error).__name__}: {message}")


def _judge(
    output: torch.Tensor,
    label: str,
    *,
    reference: torch.Tensor,
    threshold: float,
    attention_mask: torch.Tensor | None,
    tolerance: tuple[float, float] | None,
    precision: torch.dtype | None = None,
) -> tuple[OutputDiff, str]:
    """The output's difference from the reference, and why it fails the gate ('' if not):
    the gate of ``precision`` (the dtype the path was asked for), else of the output's."""
    diff = compare_outputs(reference, output, threshold, attention_mask)
    try:
        check_accuracy(diff, precision or output.dtype, label, tolerance)
    except AccuracyError as error:
        return diff, str(error)
    return diff, ""


def _gate(
    name: str,
    fn: Callable,
    *,
    inputs: Sequence[torch.Tensor],
    reference: torch.Tensor,
    threshold: float,
    attention_mask: torch.Tensor | None,
    tolerance: tuple[float, float] | None = None,
    precision: torch.dtype | None = None,
    failed: str = "wrong",
) -> PathResult:
    """First call (timed, it is the cold one for a fresh path), then the accuracy gate;
    ``failed`` names a failure ("outside" for a path judged against its own reference)."""
    device = inputs[0].device
    if device.type == "cuda":
        synchronize(device)
        held = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
    outputs = []
    try:
        with torch.inference_mode():
            first_s = time_cold_call(lambda: outputs.append(fn(*inputs).clone()), device)
    except Exception as error:  # an experiment that breaks is a row, not a crash
        return _not_run(name, error)
    memory = None
    if device.type == "cuda":
        memory = (torch.cuda.max_memory_allocated(device) - held) / 2**20
    output = outputs[0]
    diff, wrong = _judge(
        output,
        name,
        reference=reference,
        threshold=threshold,
        attention_mask=attention_mask,
        tolerance=tolerance,
        precision=precision,
    )
    return PathResult(
        name,
        failed if wrong else "ok",
        reason=wrong,
        output_dtype=str(output.dtype).replace("torch.", ""),
        first_call_s=first_s,
        diff=diff,
        call_memory_mib=memory,
    )


def _check_settled(
    result: PathResult,
    fn: Callable,
    *,
    inputs: Sequence[torch.Tensor],
    reference: torch.Tensor,
    threshold: float,
    attention_mask: torch.Tensor | None,
    tolerance: tuple[float, float] | None,
    when: str,
    precision: torch.dtype | None = None,
    failed: str = "wrong",
) -> bool:
    """Gate a warm call: a build may run other kernels once it has specialised (notebook 04)."""
    with torch.inference_mode():
        output = fn(*inputs)
    diff, wrong = _judge(
        output,
        f"{result.name} {when}",
        reference=reference,
        threshold=threshold,
        attention_mask=attention_mask,
        tolerance=tolerance,
        precision=precision,
    )
    result.settled_diff = diff
    if wrong:
        result.status, result.reason, result.latency = failed, wrong, None
        print(f"{result.name:<42} {result.status:<8} {when}: {diff}")
        return False
    if diff.max_abs > 1.1 * result.diff.max_abs + 1e-6:  # settled kernels differ from the first
        print(f"{result.name:<42} settled  {when}: {diff}")
    return True


def gate_and_time(
    candidates: dict[str, Candidate],
    inputs: Sequence[torch.Tensor],
    *,
    reference: torch.Tensor,
    warmup: int = 10,
    iterations: int = 100,
    max_seconds: float = 30.0,
    threshold: float = 0.01,
    rounds: int = 3,
    attention_mask: torch.Tensor | None = None,
    references: dict[str, torch.Tensor] | None = None,
    tolerances: dict[str, tuple[float, float]] | None = None,
    precisions: dict[str, torch.dtype] | None = None,
    retime: bool | None = None,
) -> list[PathResult]:
    """Gate every candidate against ``reference``, then time the correct ones in rounds.

    ``references`` and ``tolerances`` give a candidate its own reference and gate by name
    (a quantized engine against its simulated model, say); the others use ``reference``
    and the gate of their output dtype. A path that fails its own reference's gate is
    "outside" it, not "wrong": it may still be as close to FP32 as one inside. ``precisions``
    gives the dtype a candidate was asked for (``settings.dtype``), whose gate judges it
    whatever it returns: an engine asked for FP16 may hand back FP32 tensors and must not
    be held to FP32's tolerance.

    The first call is gated, and so is a settled call after the warm-up and another after
    the timed calls (``settled_diff``): a path wrong once settled is "wrong" (or "outside")
    and keeps no timing. The ``iterations`` timed calls are split over ``rounds``; each round times
    every candidate in turn. ``max_seconds`` caps each candidate's warm-up and its timing
    across all rounds. Wrong candidates are reported and never timed. Where a path's round
    medians spread beyond the series' limit, every path is timed once more and the new rounds
    replace the old: a busy host after a build must not be read as a speed (``retime``: on a
    GPU by default; a CPU's timings are not the lesson).
    """
    device = inputs[0].device
    results: dict[str, PathResult] = {}
    runnable: dict[str, Callable] = {}
    gates: dict[str, dict] = {}
    for name, candidate in candidates.items():
        if isinstance(candidate, BaseException):
            results[name] = _not_run(name, candidate)
        else:
            gates[name] = dict(
                inputs=inputs,
                reference=(references or {}).get(name, reference),
                threshold=threshold,
                attention_mask=attention_mask,
                tolerance=(tolerances or {}).get(name),
                precision=(precisions or {}).get(name),
                failed="outside" if name in (references or {}) else "wrong",
            )
            results[name] = _gate(name, candidate, **gates[name])
            if results[name].status == "ok":
                runnable[name] = candidate
        result = results[name]
        print(f"{name:<42} {result.status:<8} {result.diff or result.reason}")
    with torch.inference_mode():
        for name, fn in list(runnable.items()):
            time_calls(
                lambda fn=fn: fn(*inputs), device, iterations=warmup, max_seconds=max_seconds
            )
            if not _check_settled(results[name], fn, **gates[name], when="after warm-up"):
                del runnable[name]
        samples = _timed_rounds(runnable, inputs, iterations, rounds, max_seconds)
        drifted = unsteady_paths({n: _medians(rs) for n, rs in samples.items()})
        retime = device.type == "cuda" if retime is None else retime
        if drifted and retime:  # the series' noise rule: a drifting run is rerun, not read
            print(f"rounds drifted ({', '.join(drifted)}): every path is timed again")
            samples = _timed_rounds(runnable, inputs, iterations, rounds, max_seconds)
            still = unsteady_paths({n: _medians(rs) for n, rs in samples.items()})
            if still:  # the lesson's noise rules (claims.unsteady_paths) read these rounds
                print(f"rounds still apart after the retime: {', '.join(still)}")
    timer = "cuda events" if device.type == "cuda" else "perf_counter"
    for name, per_round_samples in samples.items():
        flat = [sample for round_samples in per_round_samples for sample in round_samples]
        results[name].latency = LatencyStats.from_samples(flat, timer)
        results[name].round_medians_ms = _medians(per_round_samples)
        _check_settled(results[name], runnable[name], **gates[name], when="after timing")
    return list(results.values())


def _timed_rounds(
    runnable: dict[str, Callable], inputs: Sequence[torch.Tensor], iterations: int,
    rounds: int, max_seconds: float,
) -> dict[str, list[list[float]]]:  # fmt: skip
    """Each round times every path in turn: drift touches them all alike."""
    samples: dict[str, list[list[float]]] = {name: [] for name in runnable}
    for index in range(rounds):
        calls = max(1, iterations // rounds + (index < iterations % rounds))  # sums to iterations
        for name, fn in runnable.items():
            samples[name].append(
                time_calls(
                    lambda fn=fn: fn(*inputs),
                    inputs[0].device,
                    iterations=calls,
                    max_seconds=max_seconds / rounds,
                )
            )
    return samples


def _medians(per_round_samples: list[list[float]]) -> list[float]:
    return [float(np.median(s)) for s in per_round_samples]


def speedup_range(result: PathResult, baseline: PathResult) -> tuple[float, float, float]:
    """(median, lowest, highest) speed-up over ``baseline``: overall and round by round."""
    rounds = [
        b / r for b, r in zip(baseline.round_medians_ms, result.round_medians_ms, strict=False)
    ]
    overall = baseline.latency.median_ms / result.latency.median_ms
    return overall, min(rounds, default=overall), max(rounds, default=overall)


def results_table(results: Sequence[PathResult], baseline: str = "eager fp32"):
    """The comparison as a pandas table, speed-ups against ``baseline`` from the same run."""
    import pandas as pd

    base = next((r for r in results if r.name == baseline and r.latency), None)
    rows = []
    for r in results:
        row = {"path": r.name, "status": r.status}
        if r.latency:
            row.update(p50_ms=r.latency.median_ms, p90_ms=r.latency.p90_ms, n=r.latency.count)
            if base:
                overall, low, high = speedup_range(r, base)
                row.update(speedup=overall, speedup_rounds=f"{low:.2f}-{high:.2f}")
            row["first_call_s"] = r.first_call_s
        if r.diff:
            row.update(max_abs_diff=r.diff.max_abs, min_cosine=r.diff.min_cosine)
        if r.settled_diff:
            row["settled_max_abs_diff"] = r.settled_diff.max_abs
        if r.call_memory_mib is not None:
            row["call_mib"] = r.call_memory_mib
        if r.reason:
            row["reason"] = r.reason[:160]
        rows.append(row)
    table = pd.DataFrame(rows).set_index("path")
    if emulated_speeds():  # every timing table of an emulated run says whose speeds it holds
        table.index.name = f"path ({emulated_speeds()})"
    return table
