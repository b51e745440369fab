"""Verdict wording: a notebook computes its few key numbers, these functions say what they mean.

Each function takes numbers and returns ``Verdict`` rows (the source's claim, this run's
measurement, the verdict), so every branch of the wording has a unit test instead of
living in a notebook cell. The series' noise rules live here too: where a run breaks one,
the verdict says ``TOO_NOISY`` and judges nothing on that measurement.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from helpers.gpu import emulation

TOO_NOISY = "too noisy to judge here: rerun"
#: A speed-up counts as noticeable above this ratio (notebook 03's rule).
NOTICEABLE = 1.1
#: Round medians of one path further apart than this make its ratios unreadable.
ROUND_SPREAD_LIMIT = 1.3
#: More work cannot take less time: a larger batch under this share of a smaller one's is noise.
SWEEP_LIMIT = 2 / 3
#: The TensorRT-LLM article's hardware and model: NVIDIA's published H100 SXM bandwidth (TB/s)
#: and memory (GB), and Llama 3.1 70B's parameter count (its bytes in FP8).
H100_TB_S, H100_GB, PARAMS_70B = 3.35, 80, 70.6e9


@dataclass(frozen=True)
class Verdict:
    """One judged claim, as printed at the end of a notebook and kept in its record."""

    claim: str
    measured: str
    verdict: str
    quote: bool = True  # False: our description of the source, not its words

    def record(self) -> dict:
        return asdict(self)


def print_verdicts(
    verdicts: Sequence[Verdict],
    *,
    run: str = "",
    caveats: Sequence[str] = (),
    missing: str = "not testable on this machine: the paths it needs did not run (see above)",
) -> None:
    """This run, then claim, measurement and verdict for each row, then the caveats.

    An emulated run says so beside its verdicts: their speeds are the larger GPU's.
    """
    if emulation():
        run = f"{run}; EMULATED {emulation().upper()} limits, this GPU's speeds".lstrip("; ")
    if run:
        print(f"This run: {run}")
    if not verdicts:
        print(f"Verdict: {missing}.")
    for v in verdicts:
        print(f"Source: “{v.claim}”" if v.quote else f"Source (our description): {v.claim}")
        print(f"  this run: {v.measured}")
        print(f"  verdict: {v.verdict}")
    for caveat in caveats:
        print(f"Caveat: {caveat}")


# --- noise rules ---------------------------------------------------------------------------


def round_spread(round_medians_ms: Sequence[float]) -> float:
    """Slowest round's median over the fastest's (1.0 with fewer than two rounds)."""
    rounds = [m for m in round_medians_ms if m > 0]
    return max(rounds) / min(rounds) if len(rounds) > 1 else 1.0


def unsteady_paths(round_medians: dict[str, Sequence[float]]) -> list[str]:
    """Paths whose round medians drifted beyond ROUND_SPREAD_LIMIT."""
    return [n for n, m in round_medians.items() if round_spread(m) > ROUND_SPREAD_LIMIT]


def timers_disagree(a_ms: float, b_ms: float, drift: float) -> bool:
    """Two timers of the same path differ by more than its rounds drift (notebook 01's rule)."""
    return max(a_ms, b_ms) / min(a_ms, b_ms) > max(drift, 1.0)


def faster_larger_batches(medians_by_batch: dict[int, float]) -> list[tuple[int, int]]:
    """(smaller, larger) batch pairs where the larger took under SWEEP_LIMIT of the time."""
    batches = sorted(medians_by_batch)
    return [
        (small, large)
        for i, small in enumerate(batches)
        for large in batches[i + 1 :]
        if medians_by_batch[large] < SWEEP_LIMIT * medians_by_batch[small]
    ]


def baseline_moved(this_ms: float, other_ms: float | None, limit: float = 1.3) -> bool:
    """The eager FP32 baseline moved by more than ``limit`` between notebooks of one run."""
    return other_ms is not None and max(this_ms, other_ms) / min(this_ms, other_ms) > limit


def noise_flags(
    round_medians: dict[str, Sequence[float]],
    *,
    baseline_ms: float | None = None,
    other_baseline_ms: float | None = None,
) -> list[str]:
    """What breaks the noise rules: paths that drifted between rounds, a baseline that moved."""
    flags = [f"{name} drifted between rounds" for name in unsteady_paths(round_medians)]
    if baseline_ms is not None and baseline_moved(baseline_ms, other_baseline_ms):
        flags.append(f"eager fp32 moved to {other_baseline_ms:.3f} ms in notebook 01 of this run")
    return flags


def _known(value: float | None) -> bool:
    return value is not None and not math.isnan(value)


def sweep_line(path: str, medians_by_batch: dict[int, float]) -> str:
    """What a batch sweep of one path says: noise, where latency starts to grow, or flat."""
    noisy = faster_larger_batches(medians_by_batch)
    if noisy:
        pairs = ", ".join(f"{large} faster than {small}" for small, large in noisy)
        return f"{path}: batch {pairs}: {TOO_NOISY}"
    floor = min(medians_by_batch.values())
    batches = sorted(medians_by_batch)
    above = {b: medians_by_batch[b] > 1.5 * floor for b in batches}
    grows = next((b for b in batches[1:] if all(above[c] for c in batches if c >= b)), None)
    if grows is not None:
        return (
            f"{path}: from batch {grows} on, latency stays above 1.5x the sweep's lowest median "
            f"({floor:.2f} ms): that is where launch overhead stops dominating"
        )
    return (
        f"{path}: {floor:.2f}-{max(medians_by_batch.values()):.2f} ms from batch {batches[0]} to "
        f"{batches[-1]}, not rising with the batch: launch-bound across the sweep"
    )


def timer_noise(rounds: Sequence[tuple[float, float]]) -> list[str]:
    """Notebook 01's rules for two timers alternated in rounds: what makes them unreadable.

    ``rounds`` holds (our loop's median, the other timer's median) per round, in ms.
    """
    flags = []
    drift = round_spread([ours for ours, _ in rounds])
    if drift > ROUND_SPREAD_LIMIT:
        flags.append(f"our loop's median moved {drift:.2f}x between rounds")
    for number, (ours, theirs) in enumerate(rounds, 1):
        if timers_disagree(ours, theirs, drift=ROUND_SPREAD_LIMIT):
            gap = max(ours, theirs) / min(ours, theirs)
            flags.append(f"in round {number} the two timers differ {gap:.2f}x")
    return flags


# --- notebook 01 ---------------------------------------------------------------------------


def first_call(
    *,
    cold_ms: float,
    warm_ms: float,
    count: int,
    noisy: list[str],
    slowest_warm_ms: float | None = None,
) -> Verdict:
    """The post's 4x rests on one first call per model: what a first call is against warm ones.

    Noisy timers void the verdict unless even the slowest warm timing (``slowest_warm_ms``)
    leaves the first call over twice a warm one: then the noise cannot change it.
    """
    factor = cold_ms / warm_ms
    measured = (
        f"cold first call {cold_ms:.1f} ms, warm median {warm_ms:.3f} ms (n={count}): the cold "
        f"call is {factor:.1f}x the warm median"
    )
    if noisy and not (slowest_warm_ms and cold_ms / slowest_warm_ms > 2):
        return Verdict(POST_4X, measured, f"{'; '.join(noisy)}: {TOO_NOISY}")
    against = "the warm median"
    if noisy:
        factor, against = cold_ms / slowest_warm_ms, "the slowest warm timing"
        measured += (
            f"; the timers broke the noise rules ({'; '.join(noisy)}), but against the slowest "
            f"warm timing ({slowest_warm_ms:.3f} ms) it is still {factor:.1f}x"
        )
    verdict = (
        "a speed-up whose baseline is a first call carries start-up cost in its numerator; here "
        f"the first call took {factor:.1f}x {against}. If the post's number is a single first "
        "call, it cannot be split into start-up and steady state, and its 4x is not a "
        "warm-against-warm speed-up"
    )
    return Verdict(POST_4X, measured, verdict)


# --- notebook 02 ---------------------------------------------------------------------------

POST_4X = (
    "the inference time for a batch of 16 sentences drops from 0.043 seconds to 0.009 seconds "
    "— roughly a 4× speedup"
)


def fp16_speedup(
    *,
    workload: tuple[int, int],
    best_trt: str,
    best_trt_vs_fp32: float,
    steps: dict[str, float],
    module_vs_fp32: float | None,
    module_kernel_share: float | None,
    fastest: str,
    best_trt_vs_fastest: float,
    cold_ratio: float | None,
    noisy: Sequence[str] = (),
) -> list[Verdict]:
    """Notebook 02: the post's 4x, split into what each step buys, and where the time goes.

    ``steps`` are the factors from eager FP32 to ``best_trt``, one change at a time (FP16,
    the host out of the way, TensorRT's kernels); ``module_kernel_share`` is the share of
    the Torch-TensorRT module's wall time its kernels take (the rest is its runtime).
    """
    where = "" if workload == (16, 32) else f" (at {workload[0]} x {workload[1]}, not 16 x 32)"
    split = ", ".join(f"{name} {factor:.2f}x" for name, factor in steps.items())
    measured = f"{best_trt} {best_trt_vs_fp32:.2f}x eager FP32 ({split})"
    if noisy:
        verdict = f"{TOO_NOISY} ({'; '.join(noisy)})"
    else:
        holds = "holds" if best_trt_vs_fp32 >= 3.5 else "does not hold"
        kernels = steps.get("TensorRT's kernels")
        gains = [n for n, f in steps.items() if f >= NOTICEABLE and n != "TensorRT's kernels"]
        gain = " and ".join(gains) or "nothing measurable"
        if kernels is None:
            own = ""
        elif kernels >= NOTICEABLE:
            own = (
                f"; TensorRT's kernels add {kernels:.2f}x over PyTorch's with the host out of "
                "the way"
            )
        elif kernels > 1 / NOTICEABLE:
            own = f"; TensorRT's kernels add nothing measurable: the gain is {gain}"
        else:
            own = (
                f"; TensorRT's path takes {1 / kernels:.2f}x the time of PyTorch's with the host "
                f"out of the way: the gain is {gain}, and TensorRT's kernels are slower"
            )
        largest = max(steps, key=steps.get) if steps else None
        most = f", most of it from {largest} ({steps[largest]:.2f}x)" if largest else ""
        verdict = f"{holds}{where} for TensorRT's engine: {best_trt_vs_fp32:.2f}x{most}{own}"
    rows = [Verdict(POST_4X, measured, verdict)]
    if _known(module_vs_fp32) and _known(module_kernel_share):
        runtime = 1 - module_kernel_share
        rows.append(
            Verdict(
                "the post's engine: torch_tensorrt.compile with a dynamic batch, as a module",
                f"{module_vs_fp32:.2f}x eager FP32; its kernels fill "
                f"{100 * module_kernel_share:.0f} % of its wall time",
                f"Torch-TensorRT's runtime on this build takes {100 * runtime:.0f} % of the "
                "module's time"
                + (
                    ": the module's latency says little about TensorRT's kernels"
                    if runtime > 0.5
                    else ": the module is bound by its kernels"
                ),
                quote=False,
            )
        )
    rows.append(
        Verdict(
            "the best TensorRT path against the fastest verified path",
            f"{best_trt} {best_trt_vs_fastest:.2f}x the time of {fastest}",
            "TensorRT is the fastest path here"
            if best_trt == fastest
            else f"within {NOTICEABLE}x of the fastest"
            if best_trt_vs_fastest <= NOTICEABLE
            else f"{best_trt_vs_fastest:.2f}x slower than {fastest}",
            quote=False,
        )
    )
    if _known(cold_ratio):
        rows.append(
            Verdict(
                "the post's method: one eager call against one engine call",
                f"cold eager FP32 call / first engine call = {cold_ratio:.1f}x",
                "a first call measures start-up cost, not latency",
                quote=False,
            )
        )
    return rows


def kernel_floor_line(
    *,
    path: str,
    wall_ms: float,
    kernel_ms: float,
    matrix_ms: float,
    matrix_tflops: float,
    ceiling_tflops: float,
) -> str:
    """What bounds a path: the host (kernels fill little of its time) or its kernels, and the
    rate of its matrix products against the FP16 ceiling (notebook 02)."""
    share = min(1.0, kernel_ms / wall_ms)
    bound = (
        "bound by its kernels: only faster kernels would make it faster"
        if share >= 0.8
        else f"the GPU is idle {100 * (1 - share):.0f} % of the time: the host is in the way"
    )
    return (
        f"{path}: kernels {kernel_ms:.3f} ms of its {wall_ms:.3f} ms ({bound}); its matrix "
        f"products (with what they fuse) take {matrix_ms:.3f} ms, {matrix_tflops:.0f} TFLOP/s, "
        f"{100 * matrix_tflops / ceiling_tflops:.0f} % of the FP16 ceiling"
    )


# --- notebook 03 ---------------------------------------------------------------------------

POST_FP32 = (
    "if the precision is kept as torch.float32, there is no noticeable improvement in speed or "
    "memory usage. In this case, Torch-TensorRT performs static kernel compilation but still "
    "uses full FP32."
)
NOT_STRICT = "whose engine's error is the size TF32 gives, not strict FP32's"


def fp32_claim(
    *,
    has_tf32: bool,
    strict_x: float,
    tf32_like_x: float | None,
    error_vs_floor: float,
    memory_ratio: float,
    memory_delta_mib: float,
    noisy: Sequence[str] = (),
    least_x: float | None = None,
    with_notebook_01: bool = False,
) -> Verdict:
    """Notebook 03: speed (like for like), arithmetic (error against the FP32 noise floor) and
    memory (the engine's device memory against eager's, both including weights).

    ``with_notebook_01``: ``least_x`` counted notebook 01's eager timing of the same run.

    Noisy timings void the speed part unless ``least_x``, the engine's smallest speed-up over
    any eager timing of the run, is still noticeable: then the noise cannot change it.
    """
    in_fp32 = error_vs_floor < 10
    if noisy and least_x is not None and least_x > NOTICEABLE:
        robust = f"whatever the noise ({'; '.join(noisy)}), even its slowest round is still "
        robust += f"{least_x:.2f}x the fastest eager timing of this run"
        robust += " (notebook 01's included)" if with_notebook_01 else ""
        speed = f"does not hold for speed, {robust}"
        if has_tf32 and not in_fp32 and tf32_like_x is not None:  # no strict-FP32 engine
            speed = f"cannot be tested as stated for speed on this GPU and build, {NOT_STRICT}; "
            speed += f"{robust}; against eager with TF32 allowed, the like-for-like stand-in, "
            speed += f"it is {tf32_like_x:.2f}x"
    elif noisy:  # the arithmetic and memory parts do not rest on the timings
        speed = f"speed: {TOO_NOISY} ({'; '.join(noisy)})"
    elif not has_tf32:
        speed = "not testable here for TF32 (this GPU has none, like the post's T4); "
        speed += f"the engine is {strict_x:.2f}x strict eager FP32"
    elif in_fp32 or tf32_like_x is None:
        holds = "does not hold" if strict_x > NOTICEABLE else "holds"
        speed = f"{holds} for speed: the engine is {strict_x:.2f}x strict eager FP32"
    else:
        noticeable = "a noticeable" if tf32_like_x > NOTICEABLE else "no noticeable"
        speed = (
            f"cannot be tested as stated for speed on this GPU and build, {NOT_STRICT}: against "
            f"eager with TF32 allowed, the like-for-like stand-in, it is {tf32_like_x:.2f}x "
            f"({noticeable} improvement), and {strict_x:.2f}x strict eager FP32"
        )
        if tf32_like_x > NOTICEABLE and strict_x / tf32_like_x < NOTICEABLE:  # TF32: no gain
            speed += f"; eager gains {strict_x / tf32_like_x:.2f}x from TF32, so the engine's gain"
            speed += " is mostly host work removed, not faster arithmetic"
    if in_fp32:
        arithmetic = "“still uses full FP32” holds: its error is FP32 rounding"
    else:  # the post's T4 has no TF32: what a TF32 GPU does says nothing against it
        arithmetic = (
            "“still uses full FP32” is not testable here as the post meant it (its T4 has no "
            f"TF32); on this GPU and build the engine's error is {error_vs_floor:.0f}x the FP32 "
            "noise floor, the size TF32 gives, although disable_tf32=True was set"
        )
    if memory_ratio < 0.9 and -memory_delta_mib >= 64:
        memory = (
            f"does not hold for memory: {memory_ratio:.2f}x eager's "
            f"({-memory_delta_mib:.0f} MiB less)"
        )
    elif memory_ratio > 1.1 and memory_delta_mib >= 64:
        memory = (
            f"holds for memory, and memory may be worse: {memory_ratio:.2f}x eager's "
            f"({memory_delta_mib:.0f} MiB more, an upper bound: the build's drop in free memory "
            "may hold torch's cache)"
        )
    else:
        memory = f"holds for memory: {memory_ratio:.2f}x eager's, no noticeable saving"
    measured = (
        f"disable_tf32=True engine {strict_x:.2f}x strict eager FP32, error {error_vs_floor:.0f}x "
        f"the FP32 floor; device memory {memory_ratio:.2f}x eager's"
    )
    return Verdict(POST_FP32, measured, f"{speed}; {arithmetic}; {memory}")


# --- notebook 04 ---------------------------------------------------------------------------

POST_SHARE = (
    "the TensorRT model with torch.float16 has about 0.1% of data points with a difference "
    "exceeding 0.01"
)


def accumulation_cause(*, ratio: float, acc_ratio: float, identical: bool) -> str:
    """What use_fp32_acc=True says about the engine's error against eager FP16's."""
    if identical:
        return (
            "its output is bit for bit the plain engine's, so the setting did not change the "
            "engine on this build and this run cannot tell whether accumulation causes the gap"
        )
    if acc_ratio < 0.5 * ratio + 0.5:
        return "FP16 accumulation explains most of the gap"
    return "accumulation is not the main cause here; the rest comes from other kernels and fusions"


def fp16_share(
    *,
    share: float,
    first_share: float | None,
    threshold: float,
    weights: str,
    trained: bool,
    settled: bool = True,
) -> Verdict:
    """The post's 'about 0.1 %', judged on trained weights only: random ones cannot show it."""
    measured = f"{share:.3f} % of real-token elements above {threshold} ({weights} weights)"
    if first_share is not None:
        measured += f", the engine's first call {first_share:.3f} %"
    if not settled:
        verdict = f"the engine's output was still changing: {TOO_NOISY}"
    elif not trained:
        verdict = (
            "not testable on random weights: their activations are not a trained model's, so "
            "the share says nothing about the post's; the gate still separates rounding from "
            "wrong models"
        )
    elif 0.05 <= share <= 0.2:  # "about 0.1 %": within a factor of two
        verdict = "matches “about 0.1%” on this GPU and build (real tokens only)"
    else:
        verdict = "does not match “about 0.1%” on this GPU and build (real tokens only)"
    return Verdict(POST_SHARE, measured, verdict)


# --- notebook 06 ---------------------------------------------------------------------------

POST_PARAMETERS = "you can enable these optimizations by simply passing parameters to its functions"
ARTICLE_FP8_RATE = (
    "it leverages the H100's native FP8 tensor cores, which can process matrix multiplications "
    "at 2x the throughput of FP16"
)


def parameters_claim(
    *,
    testable: bool,
    fp16_ok: bool,
    built: list[str],
    passed: list[str],
    refused: list[str],
    quantized: int,
    speeds: list[float],
    full_size: Sequence[str] = (),
) -> Verdict:
    """The post's 'simply passing parameters': FP16 is a setting, quantization a calibration.

    ``full_size`` names engines that passed but are no smaller than the FP16 engine: their
    weights stayed 16-bit, whatever their recipe.
    """
    measured = (
        f"built {built or 'none'}; passed the gate {passed or 'none'}; refused {refused or 'none'}"
    )
    if not testable:
        return Verdict(
            POST_PARAMETERS, measured, "not testable here without Torch-TensorRT and a GPU"
        )
    verdict = (
        "holds for FP16, which needs no calibration (a setting or a cast, notebook 02), but not "
        "for quantization: "
        if fp16_ok
        else "does not hold for quantization: "
    )
    verdict += (
        "a quantized engine first needs a calibration with mtq.quantize and an export under "
        "export_torch_mode()"
    )
    if refused:
        verdict += f"; {len(refused)} of the {quantized} quantized engines could not be built here"
    if any(name != "torch-tensorrt fp16" for name in built):
        verdict += (
            f"; those that passed the gate ran at {min(speeds):.2f}-{max(speeds):.2f}x the FP16 "
            "engine's speed at the two batches"
            if speeds
            else "; none of those built passed the gate"
        )
    if full_size:
        verdict += (
            f"; {', '.join(full_size)} no smaller than the FP16 engine: its weights stayed 16-bit, "
            "so its speed says nothing about 8-bit weights"
        )
    return Verdict(POST_PARAMETERS, measured, verdict)


def spearman_resolution(pairs: int) -> float:
    """The smallest gap between two rank correlations over ``pairs`` that means anything.

    On Fisher's z scale (atanh) one estimate has a standard error of 1/sqrt(pairs - 3); two
    estimates differ beyond noise when their z values are about 2 standard errors of a
    difference apart (2 * sqrt(2) / sqrt(pairs - 3)).
    """
    return 2 * math.sqrt(2) / math.sqrt(pairs - 3)


def quant_ranking(spearman: dict[str, float], pairs: int) -> str:
    """Best and worst recipe by rank correlation, or why they cannot be ranked."""
    best, worst = max(spearman, key=spearman.get), min(spearman, key=spearman.get)
    z = {name: math.atanh(min(value, 0.999999)) for name, value in spearman.items()}
    shown = f"best '{best}' ({spearman[best]:.4f}), worst '{worst}' ({spearman[worst]:.4f})"
    if z[best] - z[worst] > spearman_resolution(pairs):
        return f"{shown}: a gap beyond what {pairs} pairs resolve"
    return f"no ranking: {shown} lie within what {pairs} pairs resolve"


def smoothquant_effect(*, with_smoothquant: float, without: float) -> str:
    """What SmoothQuant did to the worst sentence's cosine, in words."""
    moved = "raised" if with_smoothquant > without else "lowered"
    helped = "it helped here" if with_smoothquant > without else "it hurt here"
    return (
        f"SmoothQuant {moved} the min cosine against FP32 from {without:.3f} to "
        f"{with_smoothquant:.3f}: {helped}"
    )


def fp8_rate(*, rate: float, low: float, high: float, device: str, capability: str) -> Verdict:
    """The article's '2x the throughput of FP16' against FP8 and FP16 products timed in rounds."""
    if low >= 1.8:
        judged = "holds"
    elif high < 1.8:
        judged = "does not hold"
    else:
        judged = "cannot be decided by this run (its rounds fall on both sides of 1.8x)"
    where = "the article's GPU is an H100"
    measured = f"FP8 / FP16 matrix-product rate {rate:.2f}x (rounds {low:.2f}-{high:.2f}x)"
    return Verdict(
        ARTICLE_FP8_RATE,
        measured,
        f"{judged} on {device} (compute capability {capability}; {where}): FP8 products ran "
        f"at {rate:.2f}x FP16's rate",
    )


# --- notebook 05 ---------------------------------------------------------------------------

POST_DYNAMIC = (
    "specifying different sequence lengths (the second dimension) will currently cause an "
    "error. This indicates that Torch-TensorRT currently only supports dynamic batch sizes "
    "(the first dimension of the input shape)."
)


def dynamic_shapes(
    *,
    post_call: str,
    shared_lengths: Sequence[int],
    static_vs_shared: float | None,
    static_vs_batch: float | None,
) -> list[Verdict]:
    """Notebook 05: does a dynamic length work, and what does a wide profile cost?"""
    post_ok = post_call.startswith("compiled, and correct")
    shared = (
        f"one exported shared length is correct from {min(shared_lengths)} to "
        f"{max(shared_lengths)}, settled kernels included"
        if shared_lengths
        else ""
    )
    if post_ok:
        verdict = "does not hold on this version: per-input length ranges compile and are correct"
        verdict += f", and {shared}" if shared else ""
    elif shared:
        verdict = f"holds only for the post's call ({post_call}): {shared}"
    else:
        verdict = f"holds on this version: {post_call}, and no shared-length engine was built"
    rows = [
        Verdict(
            POST_DYNAMIC,
            f"post's call: {post_call}; shared-length engine correct at {list(shared_lengths)}",
            verdict,
        )
    ]
    if _known(static_vs_shared):
        cost = (
            f"a static engine is {static_vs_shared:.2f}x faster than the shared-length one"
            if static_vs_shared >= NOTICEABLE
            else f"no noticeable cost ({static_vs_shared:.2f}x)"
        )
        batch = (
            f"; against the dynamic-batch engine {static_vs_batch:.2f}x"
            if _known(static_vs_batch)
            else ""
        )
        rows.append(
            Verdict(
                "what a dynamic profile costs at the workload",
                f"static / shared-length engine time: 1 / {static_vs_shared:.2f}{batch}",
                f"{cost}: the dynamic range buys flexibility with that speed",
                quote=False,
            )
        )
    return rows


# --- notebook 07 ---------------------------------------------------------------------------

POST_PROMISE = (
    "convert a PyTorch model into an ONNX model, then build a TensorRT engine manually, and "
    "directly manage dynamic shapes, precision, and GPU memory during inference"
)


def deploy_promise(
    *, built: bool, on_gpu: bool, engine_ok: bool, memory_managed: bool, failure: str = ""
) -> str:
    """Notebook 07: how much of the post's closing promise this run kept."""
    if not built:
        return "not testable here: no TensorRT Python module to build with"
    if not on_gpu:
        return (
            "followed up to the engine build: converting, building and managing shapes and "
            "precision by hand works here; running it needs a GPU"
        )
    if not engine_ok:
        return f"not kept here: the engine was built, but running it {failure or 'failed'}"
    memory = (
        "and its activation memory allocated by us for the shapes we ran"
        if memory_managed
        else "but its memory only read, not managed (see above)"
    )
    return (
        "kept: the ONNX export, a hand-built engine with one profile for batch and length, FP16 "
        f"by export, {memory}; the engine passed the accuracy gate"
    )
