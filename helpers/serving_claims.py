"""Notebook 09's verdicts: the article's serving claims against a run and arithmetic.

The notebook computes the ratios (schedulers, limits, GPU-busy shares, cache capacities);
these functions word them, so that every branch has a unit test.
"""

from __future__ import annotations

from helpers.claims import Verdict
from helpers.gpu import emulation

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


#: What a verdict says instead of a judgement its own noise rule voids.
NOT_JUDGED = (
    "not judged: the two passes did not cost the same per step, so the gain is not the "
    "schedule's alone"
)


def in_flight(
    *,
    scheduling_x: float,
    limit_x: float,
    packed_x: float,
    tpot_x: float,
    step_x: float,
    pass_step_ms: tuple[float, float],
    tokens_per_s: float,
    cap: int,
    gpu: bool = True,
) -> Verdict:
    """In-flight against static batches over one step; limit_x: first-come-first-served slots'.

    ``step_x``: in-flight's decode step alone over static batches' (1.0: the same step cost);
    ``pass_step_ms``: each pass's (static, in-flight) time over its steps, prefills included.
    """
    static_ms, in_flight_ms = pass_step_ms
    noisy = beyond_limit(
        scheduling_x=scheduling_x,
        limit_x=limit_x,
        static_step_ms=static_ms,
        in_flight_step_ms=in_flight_ms,
    )
    measured = (
        f"over one {'compiled' if gpu else 'eager'} step, at most {cap} requests in flight: "
        f"in-flight batching {tokens_per_s:.0f} output tokens/s, {scheduling_x:.2f}x static "
        f"batches (the limit of first-come-first-served slots on this mix: {limit_x:.2f}x; "
        f"every slot busy on every step: {packed_x:.2f}x); TPOT p50 {tpot_x:.2f}x static batches'"
    )
    if not gpu:
        return Verdict(IN_FLIGHT, measured, "not testable on a CPU: the speeds need a GPU")
    if noisy:
        return Verdict(IN_FLIGHT, f"{measured}; {'; '.join(noisy)}", NOT_JUDGED)
    share = f"{100 * scheduling_x / limit_x:.0f} % of what the schedule allows"
    if scheduling_x > 1.1 and scheduling_x >= 0.9 * limit_x:
        verdict = f"the mechanism delivers {share}"
    elif scheduling_x > 1.1:
        verdict = f"the mechanism works, at {share}"
    else:
        verdict = "the mechanism bought less than 10 % here"
    if tpot_x > 1.1:
        # the median only: a tail percentile can go the other way, and the table shows it
        verdict += f"; median time per output token {tpot_x:.2f}x static's"
        if step_x <= 1.05:  # the step itself cost the same: the time went between steps
            verdict += ", the step itself no slower: the extra time falls between steps"
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
        "(prefills included)"
    ]


def parting(*, parted: int, requests: int, probe: dict) -> str:
    """What the probe of the step says about two schedulers' outputs that part (or not).

    ``probe``: ``helpers.slots.repeat_probe``'s rows, and rows identical when the same call
    is repeated ("repeat") and when every request moves to another slot ("moved").
    """
    rows, repeat, moved = probe["rows"], probe["repeat"], probe["moved"]
    if not parted:
        return f"the two schedulers gave all {requests} requests the same tokens"
    if repeat < rows and moved == rows:
        return (
            "the same call twice gave different logits, a moved request the same: the "
            "schedulers part through the step's nondeterminism, not the slot"
        )
    if repeat == rows and moved < rows:
        return (
            "the same call repeats bit for bit, but a moved request's logits changed: a "
            "request's slot can tip near-ties"
        )
    if repeat < rows:
        return (
            "the same call twice gave different logits, and so did a moved request: this "
            "probe cannot tell the slot's share from the nondeterminism"
        )
    return (
        "neither repeating a call nor moving a request changed the logits: this probe does "
        "not show why they part"
    )


def utilization(
    busy: dict[str, float | None], naive: str | None = None, in_flight: int | None = None
) -> Verdict:
    """NVML's busy shares per path; what they can and cannot say. ``naive`` names the path
    that stands for the article's "PyTorch with naive batching" (its 60-70 %); ``in_flight``:
    the requests in flight at once (the article's figures are for 100)."""
    # judged as printed: 59.8 % reads "60 %", and 60 % is inside the article's 60-70 %
    known = {name: round(value) for name, value in busy.items() if value is not None}
    if not known:
        return Verdict(
            UTILIZATION,
            "not measured here",
            "not testable here: NVML's counter did not run on this machine",
        )
    measured = "; ".join(f"{name} {value:.0f} %" for name, value in known.items())
    measured += " (share of time with any kernel running, not how well they use the GPU)"
    if emulation():  # this GPU's busy share under a T4's limits, not a T4's
        gpu = emulation().upper()
        verdict = (
            f"not judged: {gpu} limits emulated, so the busy share is this GPU's, not a {gpu}'s"
        )
        return Verdict(UTILIZATION, measured, verdict)
    at = f"at {in_flight} in flight, " if in_flight else ""
    busiest = max(known, key=known.get)
    if naive not in known:
        return Verdict(
            UTILIZATION, measured, f"{at}{busiest} kept the GPU busiest, {known[busiest]:.0f} %"
        )
    others = "".join(f" and {name} {value:.0f} %" for name, value in known.items() if name != naive)
    verdict = f"{at}{naive} kept the GPU busy {known[naive]:.0f} %{others}"
    if len(known) > 1 and known[busiest] < 60:
        every = "both" if len(known) == 2 else "all"
        return Verdict(
            UTILIZATION,
            measured,
            f"{verdict}: {every} below the article's 60-70 % for naive batching",
        )
    where = "below" if known[naive] < 60 else "within" if known[naive] <= 70 else "above"
    return Verdict(UTILIZATION, measured, f"{verdict}: {naive} {where} the article's 60-70 %")


def linear_4x() -> Verdict:
    """'linear with utilization: 4x at peak', from the article's own figures."""
    return Verdict(
        "The throughput difference is linear with utilization: 4x at peak.",
        f"arithmetic, not measured: the article's own figures give at most 100 % / 60 % = "
        f"{100 / 60:.1f}x",
        "a throughput linear in utilization cannot reach 4x from 60-70 % to 95 %+",
    )


def paged(
    *, gain: float, gain_known: float, block_size: int, with_mask: float | None = None
) -> Verdict:
    """Sequences a KV budget holds, paged against contiguous caches, on this mix.

    ``with_mask``: the gain once the library's dense attention mask shares the memory.
    """
    measured = (
        f"arithmetic on this mix: blocks of {block_size} hold {ratio(gain)} the sequences of a "
        f"max-length contiguous cache ({ratio(gain_known)} against one sized to the mix's longest)"
    )
    verdict = f"KV bytes alone: {ratio(gain)}, {_range(gain)} the article's 2-3x"
    if with_mask is not None:
        measured += f"; {ratio(with_mask)} counting the batcher's dense mask beside its cache"
        verdict += (
            f"; transformers' batcher with its dense mask: {ratio(with_mask)}, {_range(with_mask)}"
        )
    return Verdict(PAGED, measured, verdict)


def _range(gain: float) -> str:
    return "inside" if 2 <= gain <= 3 else "outside"


def ratio(value: float) -> str:
    """'2.27x'; 3 decimals where 2 would round it onto the article's 2x or 3x ('1.998x')."""
    edge = round(value, 2) in (2, 3) and round(value, 3) != round(value, 2)
    return f"{value:.3f}x" if edge else f"{value:.2f}x"
