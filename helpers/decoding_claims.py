"""Notebook 08's verdicts: the TensorRT-LLM article's decoding claims against a run and a roof.

The notebook measures a few numbers; these functions word them as ``Verdict`` rows, so that
every branch has a unit test. The 70B claims are judged in bfloat16 and FP8 (both named).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from helpers.claims import (
    H100_GB,
    H100_TB_S,
    NOT_JUDGED,
    PARAMS_70B,
    ROUND_SPREAD_LIMIT,
    Verdict,
    faster_larger_batches,
    timers_disagree,
)
from helpers.gpu import emulation

#: What an emulated T4 changes in a decode step: its attention kernels (PyTorch's only).
EMULATED_STEP = "T4 limits emulated on this GPU: no flash or cuDNN attention"

TITLE = "Why TensorRT-LLM Beats Raw PyTorch by 4x"
BYTES_PER_PARAM = {"bfloat16": 2.0, "FP8": 1.0}  # Llama 3.1 70B, in the precisions it names
NO_GPU = "not measured here (no GPU)"


def launch_cost(launch_us: float | None) -> Verdict:
    """'5-20 microseconds' per launch, against the host's launch calls in the eager step's trace.

    The eager step is the model as loaded, uncompiled, over a static cache: not `generate`,
    whose own host work comes on top, so its launches are not called raw PyTorch's here.
    """
    claim = "each launch incurs a latency of 5-20 microseconds on CUDA"
    if launch_us is None:
        return Verdict(claim, NO_GPU, "count them on a GPU")
    measured = (
        f"the model's eager decode step (as loaded, static cache): {launch_us:.1f} µs per "
        "launch call on the host (from the trace)"
    )
    if launch_us < 5:
        verdict = "below the article's range on this GPU and build: a launch costs the host less"
    elif launch_us <= 20:
        verdict = "within the article's range on this GPU and build"
    else:
        verdict = "above the article's range on this GPU and build"
    return Verdict(claim, measured, verdict)


def launch_overhead(
    launches_per_layer: float | None,
    launch_us: float | None,
    idle_per_layer_ms: float | None = None,
) -> Verdict:
    """'hundreds of milliseconds' of launches per forward pass of an 80-layer model.

    ``idle_per_layer_ms``, the eager step's idle time per layer, counts the host's work and
    the gaps it leaves (Python dispatch included), not the launch calls alone.
    """
    claim = "that adds up to hundreds of milliseconds of pure overhead per forward pass"
    if launches_per_layer is None or launch_us is None:
        return Verdict(claim, NO_GPU, "count them on a GPU")
    here_ms = 80 * launches_per_layer * launch_us / 1e3
    worst_ms = 80 * launches_per_layer * 20 / 1e3
    measured = (
        f"{launches_per_layer:.0f} launches per layer; Llama 3.1 70B's 80 layers x that x "
        f"{launch_us:.1f} µs = {here_ms:.1f} ms (at the article's worst 20 µs: {worst_ms:.0f} ms)"
    )
    host_ms = 0.0
    if idle_per_layer_ms is not None:
        host_ms = 80 * idle_per_layer_ms
        measured += (
            "; the eager step's idle time (the host's work and the gaps it leaves) scales to "
            f"{host_ms:.0f} ms"
        )
    if here_ms >= 200:
        verdict = "hundreds of ms, as claimed"
    elif worst_ms >= 200:
        verdict = "hundreds of ms only at the article's worst launch cost, not at this run's"
    else:
        verdict = (
            "not hundreds of ms, even at the article's worst 20 µs; its own 18 tokens/s leaves "
            f"{1e3 / 18:.0f} ms per token for everything"
        )
    if host_ms >= 200 and here_ms < 200:
        verdict += "; the host's whole cost, Python dispatch included, does reach hundreds of ms"
    return Verdict(claim, measured, verdict)


#: decoding.measure's NaN: a prefill timed as long as the whole run left no step time.
UNREADABLE = f"{NOT_JUDGED}: a step time was unreadable (its prefill timed as long as its run)"


def _unreadable(*values: float | None) -> bool:
    return any(v is not None and not math.isfinite(v) for v in values)


def _place(pct: float) -> str:
    """Where a share of the roof lies against the article's 40-50 %."""
    return "below" if pct < 40 else "within" if pct <= 50 else "above"


def bandwidth_share(*, eager_pct: float | None, best_pct: float | None, best_name: str) -> Verdict:
    """'raw PyTorch typically achieves only 40-50%' of the memory bandwidth."""
    claim = "raw PyTorch typically achieves only 40-50% of that"
    if eager_pct is None or best_pct is None:
        return Verdict(claim, NO_GPU, "measure it on a GPU")
    measured = (
        f"Hugging Face generate {eager_pct:.0f} %, {best_name} {best_pct:.1f} % of the memory roof"
    )
    if _unreadable(eager_pct, best_pct):
        return Verdict(claim, measured, UNREADABLE)
    raw = f"generate (raw PyTorch) is {_place(eager_pct)} the range at {eager_pct:.0f} %"
    if best_pct > 50:
        verdict = f"PyTorch itself reaches {best_pct:.1f} % once the host is out of the way; {raw}"
    else:
        verdict = f"{raw}, and {best_name} {_place(best_pct)} it at {best_pct:.1f} %"
    # emulated: the short tag, so that both branches stay within 30 words
    verdict += (
        " (T4 limits emulated)" if emulation() else " (shares of the copy bandwidth measured here)"
    )
    need = 18 * PARAMS_70B * 2 / 1e12
    measured += (
        "; arithmetic, not measured: the article's 18 tokens/s on 70B in bfloat16 would read "
        f"{need:.2f} TB/s, "
        f"{100 * need / H100_TB_S:.0f} % of an H100's {H100_TB_S} TB/s (in FP8, "
        f"{50 * need / H100_TB_S:.0f} %), though 70B in bfloat16 does not fit in one H100's "
        f"{H100_GB} GB"
    )
    return Verdict(claim, measured, verdict)


def pytorch_peak(*, best_tb_s: float | None, device_name: str) -> Verdict:
    """'PyTorch with FP16 typically peaks at 2.0 TB/s' (said of an H200)."""
    claim = "PyTorch with FP16 typically peaks at 2.0 TB/s"
    if best_tb_s is None:
        return Verdict(claim, NO_GPU, "measure it on a GPU")
    where = (
        "on an H200 (the GPU the article says it of)"
        if "H200" in device_name
        else "on this GPU and build"
    )
    measured = f"best 16-bit PyTorch step here: {best_tb_s:.2f} TB/s of weights and cache read"
    if _unreadable(best_tb_s):
        return Verdict(claim, measured, UNREADABLE)
    if emulation():  # not the H200 the article means, nor a T4's bandwidth
        return Verdict(claim, measured, f"{NOT_JUDGED}: {EMULATED_STEP}")
    if best_tb_s > 2.0 * 1.1:
        verdict = f"PyTorch went past 2.0 TB/s {where}"
    elif best_tb_s >= 2.0 / 1.1:
        verdict = f"about 2.0 TB/s {where} with this model, as claimed"
    else:
        verdict = f"under 2.0 TB/s {where}"
    return Verdict(claim, measured, verdict)


def _70b_fits(tokens_per_s: float) -> dict[str, tuple[float, float, bool, bool]]:
    """Per precision: GB of weights, the TB/s tokens_per_s needs, and whether they fit."""
    result = {}
    for precision, per_param in BYTES_PER_PARAM.items():
        gb = PARAMS_70B * per_param / 1e9
        tb_s = tokens_per_s * gb / 1e3
        result[precision] = (gb, tb_s, tb_s <= H100_TB_S, gb <= H100_GB)
    return result


def article_70b(tokens_per_s: float, claim: str) -> Verdict:
    """A 70B tokens/s at batch 1 on one H100, against its bandwidth and memory, per precision."""
    parts, possible = [], []
    for precision, (gb, tb_s, fast_enough, fits) in _70b_fits(tokens_per_s).items():
        parts.append(
            f"{precision}: {gb:.0f} GB, {tb_s:.2f} TB/s ({tb_s / H100_TB_S:.1f}x the bandwidth)"
        )
        reasons = [r for r, ok in (("bandwidth", fast_enough), ("memory", fits)) if not ok]
        possible.append(
            f"in {precision} "
            + ("possible" if not reasons else "exceeds its " + " and ".join(reasons))
        )
    measured = f"arithmetic, not measured: {'; '.join(parts)}"
    return Verdict(claim, measured, f"on one H100 at batch 1: {'; '.join(possible)}")


#: The lowest logits cosine with bf16 at which a weight-only path counts as close to it.
CLOSE_TO_BF16 = 0.98


def weight_only(
    *,
    precision: str,
    path: str,
    bytes_ratio: float,
    speedup: float | None,
    roof_pct: float | None,
    agreement: float,
    cosine: float,
    min_cosine: float,
    baseline: str = "bf16",
    profile: Mapping[str, float] | None = None,
) -> Verdict:
    """A weight-only path against the 16-bit model: bytes saved, speed gained, answers changed.

    ``speedup`` is None when its compiled step did not compute what its eager step does;
    ``baseline`` names the 16-bit dtype that ran (fp16 on a T4); ``profile``, the path's row
    of the step profile ("matrix ms", "other ms", "matrix % of copy"): the verdict names the
    larger of the matrix products' time over copy rate and the kernel time outside them.
    A path whose answers fail the series' rule gets no speed verdict.
    """
    claims = {
        "fp8": (
            "it uses FP8 quantization for both weights and activations, which halves the memory "
            "traffic compared to FP16/BF16",
            True,
        ),
        "int8": (
            "gpt-fast's README: int8 weight-only decoding at 1.47x bf16's tokens/s "
            "(Llama 3.1 8B, one A100 power-limited to 330 W, batch 1)",
            False,
        ),
    }
    claim, quote = claims[precision]
    against_bf16 = (
        f"top-1 agreement with {baseline} {100 * agreement:.1f} %, logits cosine {cosine:.4f} "
        f"on the first step, {min_cosine:.4f} at the lowest"
    )
    if speedup is None or roof_pct is None:
        measured = (
            f"{path}: {precision} weights are {bytes_ratio:.2f}x {baseline}'s bytes; {against_bf16}"
        )
        verdict = (
            "not judged: its compiled step did not compute what its eager step does, "
            "so it was not timed"
        )
        return Verdict(claim, measured, verdict, quote)
    moved = " (answers moved: not judged)" if min_cosine < CLOSE_TO_BF16 else ""
    measured = (
        f"{path}: {precision} weights are {bytes_ratio:.2f}x {baseline}'s bytes; the step "
        f"decodes at {speedup:.2f}x {baseline}'s tokens/s{moved}, {roof_pct:.0f} % of its own "
        f"roof; {against_bf16}"
    )
    if _unreadable(speedup, roof_pct):
        return Verdict(claim, measured, UNREADABLE, quote=quote)
    if moved:  # the series' accuracy rule: no speed headline for it
        verdict = (
            f"{NOT_JUDGED}: its answers moved beyond a {CLOSE_TO_BF16} cosine from {baseline}'s; "
            "judging it takes trained weights (this run's are random)"
        )
        return Verdict(claim, measured, verdict, quote=quote)
    fewer = f"the bytes fell to {bytes_ratio:.2f}x"
    if speedup >= 0.9 / bytes_ratio:
        verdict = f"{fewer} and the time followed"
    elif speedup >= 1.1:
        verdict = f"{fewer}, the time only to {1 / speedup:.2f}x"
    elif speedup >= 0.9:
        verdict = f"{fewer}, the speed barely changed ({speedup:.2f}x)"
    else:
        verdict = f"{fewer}, the step got slower ({speedup:.2f}x)"
    if speedup < 0.9 / bytes_ratio and profile is None:
        verdict += "; its profile above shows where the time goes"
    elif speedup < 0.9 / bytes_ratio:  # the larger part: time over copy rate, or outside
        matrix, outside, pct = (profile[k] for k in ("matrix ms", "other ms", "matrix % of copy"))
        verdict += (
            f"; profile: matrix products at {pct:.0f} % of copy rate"
            if matrix * (1 - pct / 100) > outside
            else f"; profile: {outside:.2f} ms a step outside the matrix products"
        )
    verdict += f" ({EMULATED_STEP})" if emulation() else ""  # ≤ 30 words with it
    return Verdict(claim, measured, verdict, quote=quote)


def title_claim(
    *,
    best_name: str,
    speedup: float,
    decode_x: float,
    roof_pct: float,
    headroom: dict[str, float],
    noisy: list[str],
    generate_noisy: Sequence[str] = (),
) -> Verdict:
    """The title's 4x: how far PyTorch gets, and what an engine could add at most, per precision.

    ``noisy`` (the compiled step's timings) voids the verdict; ``generate_noisy`` voids only
    the factor over generate: the roof's bound rests on the compiled step alone. ``headroom``
    maps weights ("bf16", "8-bit", "4-bit") to roof / this step; the 4x bound is stated for
    weights of 8 bits or more, since 4-bit weights lower the roof further.
    """
    measured = (
        f"{best_name} vs Hugging Face generate: {speedup:.1f}x end to end, "
        f"{decode_x:.1f}x in decode, "
        f"at {roof_pct:.1f} % of the memory roof"
    )
    if noisy:
        return Verdict(TITLE, measured, f"{NOT_JUDGED}: {'; '.join([*noisy, *generate_noisy])}")
    if _unreadable(speedup, decode_x, roof_pct):
        return Verdict(TITLE, measured, UNREADABLE)
    bounds = [f"{x:.1f}x ({p})" for p, x in headroom.items()]
    if bounds:  # the first over this step, not over generate; the last names the weights
        bounds[0] = bounds[0].replace(" (", " this step (", 1)
        bounds[-1] = bounds[-1].removesuffix(")") + " weights)"
    eight_or_more = [x for p, x in headroom.items() if not p.startswith("4")]
    if generate_noisy:  # why, beside the numbers: the verdict stays short
        measured += f"; generate: {'; '.join(generate_noisy)}"
    against_generate = (
        f"generate's {decode_x:.1f}x is not judged (noise)"
        if generate_noisy
        else f"the compiled step decoded {decode_x:.1f}x faster than generate"
    )
    cap = f"the roof caps any engine at {', '.join(bounds)}" if bounds else "no roof bound here"
    verdict = f"{against_generate}; {cap}"
    if eight_or_more and max(eight_or_more) < 4:
        verdict += "; 4x needs weights under 8 bits"
    return Verdict(TITLE, measured, verdict, quote=True)


def sweep_note(path: str, ms_by_batch: dict[int, float], *, batch: int, measured_ms: float) -> str:
    """What 08d's batch sweep of one step says: not judged where a noise rule breaks.

    The rules: a larger batch must not take under SWEEP_LIMIT of a smaller one's time a step,
    and the sweep's row at the lesson's ``batch`` must agree with its main measurement.
    """
    noise = [
        f"batch {large} faster per step than batch {small}"
        for small, large in faster_larger_batches(ms_by_batch)
    ]
    if batch in ms_by_batch and timers_disagree(
        ms_by_batch[batch], measured_ms, ROUND_SPREAD_LIMIT
    ):
        noise.append(
            f"batch {batch}: {ms_by_batch[batch]:.2f} ms a step here, {measured_ms:.2f} ms above"
        )
    if _unreadable(measured_ms, *ms_by_batch.values()):
        noise.append("a step time was unreadable")
    if noise:
        return f"{path}: {NOT_JUDGED} ({'; '.join(noise)})"
    first, last = min(ms_by_batch), max(ms_by_batch)
    growth = f"decode throughput {last * ms_by_batch[first] / (first * ms_by_batch[last]):.1f}x"
    grows = [b for b in sorted(ms_by_batch) if ms_by_batch[b] > 1.5 * ms_by_batch[first]]
    if grows:
        return (
            f"{path}: a step takes over 1.5x batch {first}'s from batch {grows[0]} on; "
            f"{growth} from batch {first} to {last}"
        )
    return f"{path}: a step stays within 1.5x of batch {first}'s up to batch {last}; {growth}"
