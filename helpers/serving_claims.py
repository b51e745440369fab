"""Notebook 09's verdicts: the article's serving claims against a run and arithmetic.

The notebook computes the ratios (schedulers, limits, GPU-busy shares, cache capacities);
these functions word them, so that every branch has a unit test.
"""

from __future__ import annotations

from helpers.claims import TOO_NOISY, Verdict

IN_FLIGHT = (
    "in-flight batching allows the scheduler to add new sequences to the running batch as soon "
    "as a sequence completes its generation"
)
UTILIZATION = (
    "for a server handling 100 concurrent requests, TensorRT-LLM can achieve 95%+ GPU "
    "utilization, while PyTorch with naive batching typically hovers around 60-70%"
)
PAGED = (
    "TensorRT-LLM's paged approach, combined with its in-flight scheduler, can serve 2-3x more "
    "concurrent requests on the same hardware."
)


def in_flight(
    *,
    scheduling_x: float,
    limit_x: float,
    packed_x: float,
    tpot_x: float,
    tokens_per_s: float,
    cap: int,
    noisy: list[str],
) -> Verdict:
    """In-flight against static batches over one step; limit_x: first-come-first-served slots'."""
    measured = (
        f"over one compiled step, at most {cap} requests in flight: in-flight batching "
        f"{tokens_per_s:.0f} output tokens/s, {scheduling_x:.2f}x static batches (the limit of "
        f"first-come-first-served slots on this mix: {limit_x:.2f}x; every slot busy on every "
        f"step: {packed_x:.2f}x); TPOT p50 {tpot_x:.2f}x static batches'"
    )
    if noisy:
        return Verdict(IN_FLIGHT, measured, f"{'; '.join(noisy)}: {TOO_NOISY}")
    share = f"{100 * scheduling_x / limit_x:.0f} % of what the schedule allows"
    if scheduling_x > 1.1 and scheduling_x >= 0.9 * limit_x:
        verdict = f"the mechanism delivers {share}"
    elif scheduling_x > 1.1:
        verdict = f"the mechanism works, at {share}"
    else:
        verdict = "the mechanism bought nothing here"
    if tpot_x > 1.1:
        verdict += (
            f"; a running request's tokens came {tpot_x:.2f}x as far apart, as newcomers' "
            "prefills ran between its steps"
        )
    return Verdict(IN_FLIGHT, measured, verdict)


def beyond_limit(
    *, scheduling_x: float, limit_x: float, static_step_ms: float, in_flight_step_ms: float
) -> list[str]:
    """Why a gain above the schedule's own limit cannot be read as the schedule's.

    Both run one step on the same shapes: a gain past the limit means a pass cost more per
    step (a first-time cost, or another process on the GPU).
    """
    if scheduling_x <= 1.05 * limit_x:
        return []
    return [
        f"{scheduling_x:.2f}x is above the schedule's own limit of {limit_x:.2f}x: static batches "
        f"took {static_step_ms:.2f} ms per step and in-flight batching {in_flight_step_ms:.2f} ms "
        "(prefills included), so the passes did not cost the same per step"
    ]


def utilization(busy: dict[str, float | None], naive: str | None = None) -> Verdict:
    """NVML's busy shares per path; what they can and cannot say. ``naive`` names the path
    that stands for the article's "PyTorch with naive batching" (its 60-70 %)."""
    known = {name: value for name, value in busy.items() if value is not None}
    if not known:
        return Verdict(UTILIZATION, "not measured here (no GPU counter)", "measure it on a GPU")
    measured = "; ".join(f"{name} {value:.0f} %" for name, value in known.items())
    busiest = max(known, key=known.get)
    verdict = ""
    if naive in known:
        share = known[naive]
        where = "below" if share < 60 else "within" if share <= 70 else "above"
        verdict = f"{naive} (naive batching) {share:.0f} %, {where} the article's 60-70 %; "
    verdict += (
        f"{busiest} kept the GPU busiest ({known[busiest]:.0f} %); NVML counts time with any "
        "kernel running, not how well the kernels use the GPU, so a busy share ranks no engine"
    )
    return Verdict(UTILIZATION, measured, verdict)


def linear_4x() -> Verdict:
    """'linear with utilization: 4x at peak', from the article's own figures."""
    return Verdict(
        "The throughput difference is linear with utilization: 4x at peak.",
        f"the article's own figures give at most 100 % / 60 % = {100 / 60:.1f}x",
        "a throughput linear in utilization cannot reach 4x from 60-70 % to 95 %+",
    )


def paged(
    *, gain: float, gain_known: float, block_size: int, with_mask: float | None = None
) -> Verdict:
    """Sequences a KV budget holds, paged against contiguous caches, on this mix.

    ``with_mask``: the gain once the library's dense attention mask shares the memory.
    """
    measured = (
        f"arithmetic on this mix: blocks of {block_size} hold {gain:.1f}x the sequences of a "
        f"max-length contiguous cache ({gain_known:.1f}x against one sized to the mix's longest)"
    )
    where = "inside" if 2 <= gain <= 3 else "outside"
    verdict = (
        f"{where} the article's 2-3x for this mix, on KV bytes alone: the gap is the reserved "
        "length over the real one, rounded up to whole blocks"
    )
    if with_mask is not None:
        measured += f"; {with_mask:.1f}x counting the batcher's dense mask beside its cache"
        verdict += (
            f"; counting the dense mask transformers' batcher keeps beside it, {with_mask:.1f}x"
        )
    return Verdict(PAGED, measured, verdict)
