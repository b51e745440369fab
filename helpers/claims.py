"""Verdict wording: a notebook computes its few key numbers, these functions say what they mean.

Each function takes numbers and returns ``Verdict`` rows (the source's claim, this run's
measurement, the verdict), so every branch of the wording has a unit test instead of
living in a notebook cell. The series' noise rules live here too: where a run breaks one,
the verdict says ``NOT_JUDGED`` and draws nothing from that measurement (a published run
that breaks them is run again, never published as it is).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from helpers.gpu import emulated_speeds, emulation

#: What a notebook prints where its own noise rule voids a row.
NOT_JUDGED = "not judged"
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
    source: str = ""  # whose words, where not the notebook's source (the post or the article)

    def record(self) -> dict:
        return asdict(self)


def print_verdicts(
    verdicts: Sequence[Verdict],
    *,
    run: str = "",
    caveats: Sequence[str] = (),
    missing: str = "not testable on this machine: the paths it needs did not run (see above)",
    on_gpu: bool = True,
) -> None:
    """This run, then claim, measurement and verdict for each row, then the caveats.

    An emulated run says so beside its verdicts: their speeds are the larger GPU's, or none
    where the lesson ran on CPUs (``on_gpu=False``: 10 with one GPU).
    """
    if emulation():
        gpu = emulation().upper()
        speeds = (
            f"this GPU's speeds, not a {gpu}'s"
            if on_gpu
            else "the lesson ran on CPUs: no GPU speeds"
        )
        run = f"{run}; EMULATED {gpu} limits, {speeds}".lstrip("; ")
    if run:
        print(f"This run: {run}")
    if not verdicts:
        print(f"Verdict: {missing}.")
    for v in verdicts:
        by = f" ({v.source})" if v.source else ""
        print(f"Source{by}: “{v.claim}”" if v.quote else f"Source (our description): {v.claim}")
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


def baseline_line(this_ms: float, other_ms: float | None, limit: float = 1.3) -> str:
    """Eager FP32 here against notebook 01's record of the same series run, or why it cannot
    be checked (``other_ms`` None: no such record, see ``records.run_median``)."""
    if other_ms is None:
        return (
            f"eager fp32 {this_ms:.3f} ms here; not checked against notebook 01: no record of 01 "
            "at this workload from this series run yet (its passing run must come before this one)"
        )
    apart = max(this_ms, other_ms) / min(this_ms, other_ms)
    rule = "beyond" if baseline_moved(this_ms, other_ms, limit) else "within"
    return (
        f"eager fp32 {this_ms:.3f} ms here, {other_ms:.3f} ms in notebook 01 of this run: "
        f"{apart:.2f}x apart, {rule} the {limit}x rule"
    )


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


def _speeds() -> str:
    """The tag for a line of this GPU's rates or limits when it plays another GPU."""
    return f" ({emulated_speeds()}, not a {emulation().upper()}'s)" if emulation() else ""


def sweep_line(path: str, medians_by_batch: dict[int, float]) -> str:
    """What a batch sweep of one path says: noise, where latency starts to grow, or flat."""
    noisy = faster_larger_batches(medians_by_batch)
    if noisy:  # more work cannot take under SWEEP_LIMIT of the time: no conclusion from it
        pairs = ", ".join(f"{large} faster than {small}" for small, large in noisy)
        return f"{path}: batch {pairs}: {NOT_JUDGED} (more work in under 2/3 of the time)"
    floor = min(medians_by_batch.values())
    batches = sorted(medians_by_batch)
    above = {b: medians_by_batch[b] > 1.5 * floor for b in batches}
    grows = next((b for b in batches[1:] if all(above[c] for c in batches if c >= b)), None)
    if grows is not None:
        return (
            f"{path}: from batch {grows} on, latency stays above 1.5x the sweep's lowest median "
            f"({floor:.2f} ms){_speeds()}"
        )
    return (
        f"{path}: {floor:.2f}-{max(medians_by_batch.values()):.2f} ms from batch {batches[0]} to "
        f"{batches[-1]}: latency never stayed above 1.5x the lowest median{_speeds()}"
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

#: The clock without a sync reads under this share of the synchronised one: it stopped early.
SYNC_EARLY = 0.8
#: From this share up the two clocks agree within the noise of two medians of five calls.
SYNC_AGREE = 0.9


def sync_reading(ratio: float) -> str:
    """What the clock without a sync, as a share (``ratio``) of the synchronised one, shows.

    Without a sync the clock stops when the CPU has queued the call; with one, when the GPU
    has run it. A ratio above 1 cannot come from the queue: it is noise between the medians.
    """
    if ratio < SYNC_EARLY:
        return (
            f"{ratio:.2f}: the clock without a sync stopped early, with GPU work still queued "
            "(GPU-bound): leaving out the sync would misreport this call"
        )
    if ratio < SYNC_AGREE:
        return (
            f"{ratio:.2f}: the GPU finished a little after the CPU's last launch; neither clearly "
            "sets the pace"
        )
    noise = " (above 1: noise between the medians)" if ratio > 1 else ""
    return (
        f"{ratio:.2f}{noise}: the clocks agree, so queuing the call took the CPU about as long "
        "as the call (host-bound); a missing sync changes little here"
    )


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
    shown = f"{factor:.1f}x" if factor >= 1 else f"{factor:.2f}x"
    measured = f"first call {cold_ms:.1f} ms, {shown} the warm median ({warm_ms:.3f} ms, n={count})"
    if noisy and not (slowest_warm_ms and cold_ms / slowest_warm_ms > 2):
        return Verdict(POST_4X, measured, f"{NOT_JUDGED}: the timers broke the noise rules (above)")
    against = "the warm median"
    if noisy:
        factor, against = cold_ms / slowest_warm_ms, "even the slowest warm timing"
        measured += f"; {factor:.1f}x the slowest warm timing ({slowest_warm_ms:.3f} ms)"
    if factor < 1 / NOTICEABLE:  # a first call faster than warm ones: the machine was busy
        verdict = (
            f"here the first call took {factor:.2f}x the warm median, less than a warm call: no "
            "start-up cost shows on this machine"
        )
    elif factor <= NOTICEABLE:
        verdict = (
            f"here a first call took {factor:.2f}x {against}, within 10 %: start-up cost would "
            "barely change a number timed from one call"
        )
    else:
        verdict = (
            "if the post's eager time was a first call, its 4x includes start-up cost: here a "
            f"first call took {factor:.1f}x {against}"
        )
    return Verdict(POST_4X, measured, verdict)


# --- notebook 02 ---------------------------------------------------------------------------

POST_4X = (
    "the inference time for a batch of 16 sentences drops from 0.043 seconds to 0.009 seconds "
    "— roughly a 4× speedup"
)


def runner_up(medians: dict[str, float], leave_out=()) -> tuple[str, float] | None:
    """The second-fastest path but ``leave_out`` (the fastest's own kind), and its median over
    the fastest's; None with one path."""
    ranked = sorted(set(medians) - set(leave_out), key=medians.get)
    return (ranked[1], medians[ranked[1]] / medians[ranked[0]]) if len(ranked) > 1 else None


def fp16_speedup(
    *,
    workload: tuple[int, int],
    best_trt: str,
    best_trt_vs_fp32: float,
    fp16_eager: float,
    fp16_graphed: float,
    graph_fp32: float,
    graph_fp16: float,
    trt_vs_fp16: float,
    trt_vs_fp16_graph: float,
    module_vs_fp32: float | None,
    fastest: str,
    best_trt_vs_fastest: float,
    cold_ratio: float | None,
    module_kernel_share: float | None = None,
    noisy: Sequence[str] = (),
    runner_up: tuple[str, float] | None = None,
) -> list[Verdict]:
    """Notebook 02: the post's 4x, credited to FP16, the CUDA graph or TensorRT.

    Each step is measured both ways round, so no credit depends on the order of the steps:
    ``fp16_eager``/``fp16_graphed`` are eager FP32 over eager FP16 without and with a CUDA
    graph, ``graph_fp32``/``graph_fp16`` a path over its CUDA graph in FP32 and FP16, and
    ``trt_vs_fp16``/``trt_vs_fp16_graph`` eager FP16 (without, with a graph) over the best
    TensorRT path. ``module_kernel_share`` (a profile's, deep dive only) is the share of the
    dynamic-batch module's wall time its kernels take. Nothing is judged on noisy timings.
    ``runner_up`` is the second-fastest path and its time over the fastest's: within
    ``NOTICEABLE``, a fastest TensorRT path only ties it.
    """
    where = "" if workload == (16, 32) else f" (at {workload[0]} x {workload[1]}, not 16 x 32)"
    measured = (
        f"{best_trt} {best_trt_vs_fp32:.2f}x eager FP32. FP16 alone: {fp16_eager:.2f}x eager, "
        f"{fp16_graphed:.2f}x in CUDA graphs; a CUDA graph alone: {graph_fp32:.2f}x in FP32, "
        f"{graph_fp16:.2f}x in FP16; eager FP16 / {best_trt}: {trt_vs_fp16:.2f}x, "
        f"{trt_vs_fp16_graph:.2f}x with both in CUDA graphs"
    )
    if noisy:
        verdict = f"{NOT_JUDGED}: {'; '.join(noisy)}"
    else:
        holds = "holds" if best_trt_vs_fp32 >= 3.5 else "does not hold"
        head = f"{holds} for the best TensorRT path{where}: {best_trt_vs_fp32:.2f}x"
        if best_trt_vs_fp32 < NOTICEABLE:
            credit = "TensorRT's best path is not noticeably faster than eager FP32"
        elif trt_vs_fp16 < 1 / NOTICEABLE:
            credit = (
                f"TensorRT's best path takes {1 / trt_vs_fp16:.2f}x eager FP16's time: the gain "
                "is FP16's, not TensorRT's"
            )
        elif trt_vs_fp16_graph < 1 / NOTICEABLE:
            credit = (
                f"eager FP16 in a CUDA graph is {1 / trt_vs_fp16_graph:.2f}x faster than "
                "TensorRT: the gain is FP16's and the graph's, not TensorRT's"
            )
        elif trt_vs_fp16_graph < NOTICEABLE:
            credit = (
                "eager FP16 in a CUDA graph matches it: the gain is FP16's and the graph's, "
                "not TensorRT's"
            )
        else:
            credit = f"TensorRT adds {trt_vs_fp16_graph:.2f}x over eager FP16 in a CUDA graph"
        verdict = f"{head}; {credit}"
    rows = [Verdict(POST_4X, measured, verdict)]
    if _known(module_vs_fp32):
        if _known(module_kernel_share):
            runtime = 1 - module_kernel_share
            judged = (
                f"its kernels fill {100 * module_kernel_share:.0f} % of its profiled time: "
                + (
                    f"Torch-TensorRT's runtime takes the other {100 * runtime:.0f} %"
                    if runtime > 0.5
                    else "the module is bound by its kernels"
                )
            )
        elif noisy:
            judged = f"{NOT_JUDGED}: {'; '.join(noisy)}"
        else:
            holds = "holds" if module_vs_fp32 >= 3.5 else "does not hold"
            judged = (
                f"the 4x {holds} for the post's kind of module: {module_vs_fp32:.2f}x; the deep "
                "dive's profile shows where its time goes"
            )
        rows.append(
            Verdict(
                "the post's engine: torch_tensorrt.compile with a dynamic batch, as a module",
                f"{module_vs_fp32:.2f}x eager FP32",
                judged,
                quote=False,
            )
        )
    rows.append(
        Verdict(
            "the best TensorRT path against the fastest verified path",
            f"{best_trt} fastest; next, {runner_up[0]}, at {runner_up[1]:.2f}x its time"
            if best_trt == fastest and runner_up
            else f"{best_trt} {best_trt_vs_fastest:.2f}x the time of {fastest}",
            f"TensorRT ties {runner_up[0]} here ({runner_up[1]:.2f}x): within {NOTICEABLE}x"
            if best_trt == fastest and runner_up and runner_up[1] <= NOTICEABLE
            else "TensorRT is the fastest path here"
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


def engine_kernels(
    *,
    engine: str,
    engine_kernel_ms: float,
    engine_kernels: float,
    engine_matrix_ms: float,
    engine_wall_ms: float,
    eager: str,
    eager_kernel_ms: float,
    eager_kernels: float,
    eager_matrix_ms: float,
    eager_wall_ms: float,
    engine_attention_ms: float | None = None,
    eager_attention_ms: float | None = None,
) -> Verdict:
    """Deep dive 02d: where TensorRT's gain over eager FP16 comes from, both in CUDA graphs.

    From two profiles: kernel time, kernel count and matrix-product time of each, and the
    wall time each leaves idle (wall minus kernels). A cause is named only where the
    profile shows it. An emulated T4 denies PyTorch's attention its flash and cuDNN kernels,
    not TensorRT's: the verdict says so, with the kernel ratio without attention where given.
    """
    gain = eager_wall_ms / engine_wall_ms
    kernel_ratio = eager_kernel_ms / engine_kernel_ms
    idle_engine = max(0.0, engine_wall_ms - engine_kernel_ms)
    idle_eager = max(0.0, eager_wall_ms - eager_kernel_ms)
    measured = (
        f"{engine}: {engine_kernels:.0f} kernels, {engine_kernel_ms:.3f} ms in kernels "
        f"({engine_matrix_ms:.3f} ms matrix products), {idle_engine:.3f} ms idle; {eager}: "
        f"{eager_kernels:.0f} kernels, {eager_kernel_ms:.3f} ms ({eager_matrix_ms:.3f} ms), "
        f"{idle_eager:.3f} ms idle"
    )
    if gain < NOTICEABLE:
        verdict = f"the engine is not noticeably faster ({gain:.2f}x): there is no gain to explain"
    elif kernel_ratio >= NOTICEABLE:
        verdict = f"the engine's kernels take {kernel_ratio:.2f}x less time: its kernels are faster"
        if emulation() and engine_attention_ms is not None and eager_attention_ms is not None:
            rest = (eager_kernel_ms - eager_attention_ms) / (engine_kernel_ms - engine_attention_ms)
            if rest < NOTICEABLE:  # the gap is attention's: do not call the kernels faster
                verdict = (
                    f"the engine's kernels take {kernel_ratio:.2f}x less time, {rest:.3f}x "
                    "without attention: most of the gap is attention"
                )
            else:
                verdict += f"; {rest:.2f}x without attention"
    else:
        fewer = "fewer kernels and " if engine_kernels < eager_kernels else ""
        slower = (
            "; its matrix-product kernels, fusions included, take longer"
            if engine_matrix_ms > NOTICEABLE * eager_matrix_ms
            else ""
        )
        verdict = (
            f"about the same kernel time: the {gain:.2f}x is {fewer}less idle time between "
            f"kernels{slower}"
        )
    if emulation():
        verdict += " (PyTorch's attention ran without flash/cuDNN: emulated T4)"
    return Verdict(
        "TensorRT's kernels against PyTorch's, both in CUDA graphs", measured, verdict, quote=False
    )


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
        f"{100 * matrix_tflops / ceiling_tflops:.0f} % of the FP16 ceiling{_speeds()}"
    )


# --- notebook 03 ---------------------------------------------------------------------------

POST_FP32_SPEED = (
    "if the precision is kept as torch.float32, there is no noticeable improvement in speed or "
    "memory usage"
)
POST_FP32_ARITHMETIC = "Torch-TensorRT performs static kernel compilation but still uses full FP32"


def faster_or_slower(x: float, than: str) -> str:
    """'2.50x faster than X', '1.45x slower than X' or 'within 10 % of X': ``x`` is X's time over
    the path's, so a ratio below 1 is a slowdown."""
    if x > NOTICEABLE:
        return f"{x:.2f}x faster than {than}"
    if x < 1 / NOTICEABLE:
        return f"{1 / x:.2f}x slower than {than}"
    return f"within 10 % of {than} ({x:.2f}x)"


def _holds_for_speed(x: float) -> str:
    """The post says 'no noticeable improvement': a slowdown keeps it, and is named."""
    if x > NOTICEABLE:
        return "does not hold"
    return "holds, as a slowdown" if x < 1 / NOTICEABLE else "holds"


def fp32_claims(
    *,
    has_tf32: bool,
    strict_x: float,
    tf32_like_x: float | None,
    error_vs_floor: float,
    memory_ratio: float,
    memory_delta_mib: float,
    tf32_error_vs_floor: float | None = None,
    noisy: Sequence[str] = (),
    least_x: float | None = None,
    with_notebook_01: bool = False,
) -> list[Verdict]:
    """Notebook 03, one row per part: speed (like for like), memory (the engine's device memory
    against eager's, weights included) and arithmetic (error against the FP32 noise floor).

    ``strict_x``/``tf32_like_x``: eager FP32 without/with TF32 over the disable_tf32=True
    engine (above 1: the engine is faster). Noisy timings void the speed row unless
    ``least_x``, the engine's slowest round against the fastest eager timing of the run
    (notebook 01's too when ``with_notebook_01``), is still noticeable.
    """
    in_fp32 = error_vs_floor < 10
    stand_in = has_tf32 and not in_fp32 and tf32_like_x is not None
    speed_measured = f"disable_tf32=True engine {faster_or_slower(strict_x, 'strict eager FP32')}"
    if tf32_like_x is not None:
        speed_measured += f", {faster_or_slower(tf32_like_x, 'eager with TF32 allowed')}"
        if tf32_like_x > NOTICEABLE and strict_x / tf32_like_x < NOTICEABLE:
            speed_measured += (
                f"; TF32 speeds eager up by no more than 10 % ({strict_x / tf32_like_x:.2f}x), so "
                "matrix-product arithmetic is not what limits eager here"
            )
    if noisy and least_x is not None and least_x > NOTICEABLE:
        speed = (
            "does not hold, whatever the noise: the engine's slowest round is "
            f"{least_x:.2f}x faster than the fastest eager timing"
        )
        speed += ", notebook 01's included" if with_notebook_01 else ""
        speed = f"on this GPU and build, {speed}" if stand_in else speed
    elif noisy:
        speed = f"{NOT_JUDGED}: the timed rounds broke the noise rules (above)"
    elif stand_in:
        speed = (
            f"on this GPU and build, like for like, {_holds_for_speed(tf32_like_x)}: the engine "
            f"is {faster_or_slower(tf32_like_x, 'eager with TF32 allowed')}"
        )
    elif not in_fp32:
        speed = (
            "not testable like for like: the engine's error is beyond FP32 rounding; it is "
            f"{faster_or_slower(strict_x, 'strict eager FP32')}"
        )
    else:
        speed = (
            f"{_holds_for_speed(strict_x)}: the engine is "
            f"{faster_or_slower(strict_x, 'strict eager FP32')}"
        )
    if memory_ratio < 0.9 and -memory_delta_mib >= 64:
        memory = (
            f"does not hold: the engine needs {memory_ratio:.2f}x eager's device memory, "
            f"{-memory_delta_mib:.0f} MiB less"
        )
    elif memory_ratio > 1.1 and memory_delta_mib >= 64:
        memory = (
            f"holds: no improvement shows; the engine's upper bound is {memory_ratio:.2f}x eager's "
            f"(+{memory_delta_mib:.0f} MiB; its build's drop in free memory may hold torch's cache)"
        )
    else:
        memory = f"holds: {memory_ratio:.2f}x eager's device memory, no noticeable change"
    like_tf32 = tf32_error_vs_floor is not None and error_vs_floor >= tf32_error_vs_floor / 3
    size = "the size TF32 gives" if like_tf32 else "beyond FP32 rounding"
    if in_fp32:
        arithmetic = "holds: the engine's error is the size of FP32 rounding"
    elif has_tf32:
        arithmetic = (
            "not testable as the post meant it (its T4 has no TF32): here the error is "
            f"{size}, although disable_tf32=True was set"
        )
    elif emulation():  # a T4's limits bind PyTorch only: this GPU's TensorRT may use TF32
        arithmetic = (
            f"{NOT_JUDGED}: TensorRT is not emulated and may use this GPU's TF32; the engine's "
            f"error is {size}"
        )
    else:
        arithmetic = f"does not hold on this GPU and build: the engine's error is {size}"
    floor = (
        f"the disable_tf32=True engine's max |diff| is {error_vs_floor:.0f}x the FP32 noise floor"
    )
    if tf32_error_vs_floor is not None:
        floor += f" (eager with TF32 allowed: {tf32_error_vs_floor:.0f}x)"
    return [
        Verdict(POST_FP32_SPEED, f"speed: {speed_measured}", speed),
        Verdict(
            POST_FP32_SPEED,
            f"memory: the engine needs at most {memory_ratio:.2f}x eager's device memory "
            f"({memory_delta_mib:+.0f} MiB, an upper bound) to serve this batch",
            memory,
        ),
        Verdict(POST_FP32_ARITHMETIC, floor, arithmetic),
    ]


# --- notebook 04 ---------------------------------------------------------------------------

POST_SHARE = (
    "the TensorRT model with torch.float16 has about 0.1% of data points with a difference "
    "exceeding 0.01"
)


def accumulation_cause(*, ratio: float, acc_ratio: float, identical: bool) -> str:
    """What use_fp32_acc=True says about the engine's error against eager FP16's."""
    if identical:
        return (
            "its output is bit for bit the plain engine's: the setting changed nothing in this "
            "output, and this run cannot tell whether accumulation causes the gap"
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
        verdict = f"{NOT_JUDGED}: the engine's output was still changing late in its window"
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


#: What an engine's size shows about its weights (``weights_stored``).
EIGHT_BIT, SIXTEEN_BIT = "8-bit", "16-bit"


def weights_stored(engine_mib: float | None, fp16_mib: float | None, saving_mib: float) -> str:
    """'8-bit' when an engine is smaller than the FP16 engine by at least half of what
    storing its quantized weights in 8 bits saves (``saving_mib``), else '16-bit'; '?'
    without both sizes. An engine whose weights stayed 16-bit is not an 8-bit engine."""
    if engine_mib is None or fp16_mib is None:
        return "?"
    saved = fp16_mib - engine_mib
    return EIGHT_BIT if saving_mib > 0 and saved >= saving_mib / 2 else SIXTEEN_BIT


def parameters_claim(
    *,
    testable: bool,
    fp16_ok: bool,
    engines: dict[str, str],
    speeds: dict[str, float | None] | None = None,
    kept: dict[str, float] | None = None,
) -> Verdict:
    """The post's 'simply passing parameters', for INT8: a calibration and an export first.

    ``engines`` maps each quantized engine to what stopped it ('not built', 'failed its gate',
    'failed to run') or, once it passed its gate, to what its size shows ('8-bit', '16-bit',
    '?'). ``speeds``: the FP16 engine's latency over its own (None: not judged, where either
    drifted between rounds or no FP16 engine was timed);
    ``kept``: its share of FP32's nearest neighbours kept. Only an engine with 8-bit
    weights speaks for INT8's speed.
    """
    speeds, kept = speeds or {}, kept or {}

    sized = (EIGHT_BIT, SIXTEEN_BIT, "?")

    def shown(name: str, outcome: str) -> str:
        if outcome not in sized:
            return f"{name}: {outcome}"
        speed = speeds.get(name)
        ran = f"{speed:.2f}x the FP16 engine's speed" if speed else "speed not judged"
        size = f"{outcome} weights by its size" if outcome != "?" else "size unknown"
        return f"{name}: {size}, {ran}, {kept.get(name, math.nan):.0%} of neighbours kept"

    measured = "; ".join(shown(n, o) for n, o in engines.items()) or "no INT8 engine"
    if not testable:
        verdict = "not testable here without Torch-TensorRT and a GPU"
        return Verdict(POST_PARAMETERS, measured, verdict)
    verdict = "holds for FP16 (notebook 02), not INT8" if fp16_ok else "does not hold for INT8"
    verdict += ": it needs a calibration and an export first; "
    eight_bit = [n for n, o in engines.items() if o == EIGHT_BIT]
    judged = [n for n in eight_bit if speeds.get(n)]
    if judged:
        rate = [speeds[n] for n in judged]
        share = [kept.get(n, math.nan) for n in judged]
        verdict += (
            f"{'its 8-bit engine' if len(judged) == 1 else '8-bit engines'}: "
            f"{_span(rate, '{:.2f}')}x the FP16 engine's speed, "
            f"{_span(share, '{:.0%}')} of FP32's nearest neighbours kept"
        )
    elif eight_bit:
        verdict += f"8-bit engines' speed: {NOT_JUDGED} (drifted rounds, or no FP16 engine timed)"
    elif any(o in sized for o in engines.values()):
        verdict += "no engine's size showed 8-bit weights: no INT8 speed to judge"
    elif engines and all(o == "not built" for o in engines.values()):
        verdict += "no INT8 engine was built here: the build errors above say why"
        verdict += " (unemulated TensorRT)" if emulation() else ""
    else:
        verdict += "no INT8 engine built here passed its gate"
    return Verdict(POST_PARAMETERS, measured, verdict)


def _span(values: Sequence[float], style: str) -> str:
    """'1.20' or '1.20-1.40': one value, or the lowest and highest."""
    low, high = style.format(min(values)), style.format(max(values))
    return low if low == high else f"{low}-{high}"


def spearman_resolution(pairs: int) -> float:
    """The smallest gap between two rank correlations over ``pairs`` that means anything.

    On Fisher's z scale (atanh) one estimate has a standard error of 1/sqrt(pairs - 3); two
    estimates differ beyond noise when their z values are about 2 standard errors of a
    difference apart (2 * sqrt(2) / sqrt(pairs - 3)).
    """
    return 2 * math.sqrt(2) / math.sqrt(pairs - 3)


def _fisher_z(value: float, pairs: int) -> float:
    """Fisher's z of a rank correlation, capped at the highest one below 1 that ``pairs``
    pairs can give (one swap of neighbours): at 1 itself the scale has no end."""
    cap = 1 - 12 / (pairs * (pairs**2 - 1))
    return math.atanh(max(min(value, cap), -cap))


def quant_ranking(spearman: dict[str, float], pairs: int) -> str:
    """Best and worst recipe by rank correlation, or why they cannot be ranked."""
    best, worst = max(spearman, key=spearman.get), min(spearman, key=spearman.get)
    shown = f"best '{best}' ({spearman[best]:.4f}), worst '{worst}' ({spearman[worst]:.4f})"
    if _fisher_z(spearman[best], pairs) - _fisher_z(spearman[worst], pairs) > spearman_resolution(
        pairs
    ):
        return f"{shown}: a gap beyond what {pairs} pairs resolve"
    return f"no ranking: {shown} lie within what {pairs} pairs resolve"


#: 06's accuracy measures, and whether a higher value is the better one.
HIGHER_IS_BETTER = {
    "max_abs": False,
    "mean_abs": False,
    "% > threshold": False,
    "min_cosine": True,
    "spearman_vs_scores": True,
    "spearman_vs_fp32": True,
    "neighbours_kept": True,
}


def smoothquant_effect(*, with_smoothquant: dict, without: dict, pairs: int) -> str:
    """What SmoothQuant did, measure by measure: better, worse, unchanged, or (a rank
    correlation) within what ``pairs`` pairs resolve. True whichever way each one moved."""
    moved: dict[str, list[str]] = {"better": [], "worse": [], "unchanged": [], "unresolved": []}
    for measure, higher in HIGHER_IS_BETTER.items():
        if measure not in with_smoothquant or measure not in without:
            continue
        new, old = with_smoothquant[measure], without[measure]
        gap = (
            _fisher_z(new, pairs) - _fisher_z(old, pairs)
            if measure.startswith("spearman")
            else None
        )
        if gap is not None and abs(gap) <= spearman_resolution(pairs):
            moved["unresolved"].append(measure)
        elif new == old:
            moved["unchanged"].append(measure)
        else:
            moved["better" if (new > old) == higher else "worse"].append(measure)
    words = {"unresolved": f"within what {pairs} pairs resolve"}
    parts = [f"{words.get(k, k)}: {', '.join(v)}" for k, v in moved.items() if v]
    if moved["better"] and moved["worse"]:
        summary = "mixed"
    elif moved["better"] or moved["worse"]:
        summary = f"{'better' if moved['better'] else 'worse'} on every measure that moved"
    else:
        summary = "no measure moved"
    return f"SmoothQuant against the same recipe without it: {summary} ({'; '.join(parts)})"


def fp8_rate(
    *,
    rate: float | None,
    low: float,
    high: float,
    device: str,
    capability: str,
    why: str = "FP8 tensor cores need compute capability 8.9 or newer",
) -> Verdict:
    """The article's '2x the throughput of FP16' against FP8 and FP16 products timed in
    rounds; ``rate`` None where no FP8 product ran (``why``)."""
    if rate is None:
        measured = f"no FP8 product ran on {device} (compute capability {capability or 'none'})"
        return Verdict(ARTICLE_FP8_RATE, measured, f"not testable here: {why}")
    if low >= 1.8:
        judged = "holds"
    elif high < 1.8:
        judged = "does not hold"
    else:
        judged = f"not decided: rounds {low:.2f}-{high:.2f}x straddle 1.8x"
    measured = (
        f"FP8 / FP16 matrix-product rate {rate:.2f}x (rounds {low:.2f}-{high:.2f}x) on {device}, "
        f"compute capability {capability}"
    )
    return Verdict(
        ARTICLE_FP8_RATE,
        measured,
        f"{judged} on {device} (the article's claim names the H100): "
        f"median {rate:.2f}x FP16's rate",
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
    length_range: float | None,
    static_shape: float | None,
    shared_failed: Sequence[int] = (),
    length_also: str = "",
    static_also: str = "",
    noisy: Sequence[str] = (),
) -> list[Verdict]:
    """Notebook 05: does a dynamic length work, and what do the length range and a static shape
    change at the workload?

    ``shared_lengths`` / ``shared_failed``: lengths where the shared-length engine passed /
    failed the gate; ``length_range``: its time over the dynamic-batch engine's;
    ``static_shape``: the dynamic-batch engine's time over the static engine's; ``*_also``:
    what else differs between the two builds (settings, engine count; "" for nothing);
    ``noisy``: paths whose rounds drifted, whose comparisons are not judged.
    """
    post_ok = post_call.startswith("compiled, and correct")
    went = "gave wrong outputs" if post_call.startswith("compiled but WRONG") else "failed"
    correct = (
        f"one exported shared length is correct at {len(shared_lengths)} lengths, "
        f"{min(shared_lengths)} to {max(shared_lengths)}, settled kernels included"
        if shared_lengths and not shared_failed
        else ""
    )
    failed = f"one exported shared length failed at {list(shared_failed)}" if shared_failed else ""
    if post_ok:
        verdict = "does not hold on this version: per-input length ranges compile and are correct"
        verdict += f", and {correct}" if correct else (f", but {failed}" if failed else "")
    elif correct:
        verdict = f"holds for per-input ranges, which {went} here; {correct}"
    else:
        verdict = f"holds on this version: per-input ranges {went}, and "
        verdict += failed or "no shared-length engine ran"
    measured = f"post's call: {post_call}; shared-length engine correct at {list(shared_lengths)}"
    measured += f", failed at {list(shared_failed)}" if shared_failed else ""
    rows = [Verdict(POST_DYNAMIC, measured, verdict)]
    pairs = (
        ("the length range", "shared-length", length_range, length_also),
        ("a static shape", "static", static_shape, static_also),
    )
    for change, engine, ratio, also in pairs:
        if not _known(ratio):
            continue
        measured = f"{engine} / dynamic-batch engine time: {ratio:.2f}"
        if engine == "static":
            measured = f"dynamic-batch / static engine time: {ratio:.2f}"
        drifted = [p for p in noisy if p in (f"{engine} engine", "dynamic-batch engine")]
        if drifted:
            verdict = f"not judged: {' and '.join(drifted)} drifted between rounds"
        else:
            verdict = _change_effect(change, ratio)
            verdict += f"; its build also differs ({also}): not {change} alone" if also else ""
        rows.append(Verdict(f"what {change} changes at the workload", measured, verdict, False))
    return rows


def _change_effect(change: str, ratio: float) -> str:
    """How ``ratio`` (the time of the engine that should be slower over the other's) reads."""
    if change == "the length range":
        if ratio >= NOTICEABLE:
            return f"the length range costs {ratio:.2f}x at the workload"
        if ratio <= 1 / NOTICEABLE:
            faster = f"{1 / ratio:.2f}x faster"
            return f"the shared-length engine ran {faster} than the dynamic-batch one"
        return f"no noticeable cost from the length range ({ratio:.2f}x)"
    if ratio >= NOTICEABLE:
        return f"the static engine is {ratio:.2f}x faster than the dynamic-batch one"
    if ratio <= 1 / NOTICEABLE:
        return f"the static engine is {1 / ratio:.2f}x slower than the dynamic-batch one"
    return f"no noticeable gain from a static shape ({ratio:.2f}x)"


def build_differences(settings: dict, other: dict, engines: int, other_engines: int) -> str:
    """What a build's settings and engine count add to another's ("" when nothing)."""
    added = [f"{k}={v!r}" for k, v in settings.items() if other.get(k, "unset") != v]
    if engines != other_engines:
        added.append(f"{engines} TensorRT engine(s) against {other_engines}")
    return ", ".join(added)


def sweep_medians(sweep: dict, paths: Sequence[str]) -> tuple[dict, dict]:
    """Per path and length: the median latency, and the spread of its round medians."""
    p50, spread = {}, {}
    for length, results in sweep.items():
        for r in results:
            if r.latency and r.name in paths:
                p50.setdefault(r.name, {})[length] = r.latency.median_ms
                spread.setdefault(r.name, {})[length] = round_spread(r.round_medians_ms)
    return p50, spread


def sweep_noise(
    p50_ms: dict[str, dict[int, float]], spread: dict[str, dict[int, float]]
) -> dict[int, str]:
    """Per length, why its row is not judged ("" when it is): a path whose rounds drifted
    beyond ROUND_SPREAD_LIMIT, or that ran a longer length under SWEEP_LIMIT of a shorter's."""
    notes: dict[int, list[str]] = {n: [] for by_length in p50_ms.values() for n in by_length}
    for path, by_length in p50_ms.items():
        drifted = {n for n, drift in spread.get(path, {}).items() if drift > ROUND_SPREAD_LIMIT}
        for length in sorted(drifted):
            notes[length].append(f"{path} drifted {spread[path][length]:.2f}x")
        steady = {n: ms for n, ms in by_length.items() if n not in drifted}
        for short, long in faster_larger_batches(steady):
            for length in (short, long):
                notes[length].append(f"{path} faster at {long} than at {short}")
    return {length: "; ".join(found) for length, found in sorted(notes.items())}


# --- notebook 07 ---------------------------------------------------------------------------

POST_PROMISE = (
    "convert a PyTorch model into an ONNX model, then build a TensorRT engine manually, and "
    "directly manage dynamic shapes, precision, and GPU memory during inference"
)


def deploy_promise(
    *, built: bool, on_gpu: bool, engine_ok: bool, memory_managed: bool, failure: str = ""
) -> str:
    """Notebook 07d: how much of the post's closing promise this run kept (``failure``: the
    hand-built engine's status when it did not pass)."""
    if not built:
        return "not testable here: no TensorRT Python module to build with"
    if not on_gpu:
        return (
            "followed up to the engine build: export, profile and precision by hand work here; "
            "running the engine needs a GPU"
        )
    if not engine_ok:
        failure = " ".join((failure or "failed").split()[:6])
        return f"not kept here: the engine was built, but running it gave '{failure}' (table above)"
    memory = "activation memory allocated by us" if memory_managed else "memory read, not managed"
    return (
        "kept: ONNX export, a hand-built engine with one batch-and-length profile, FP16 by "
        f"export, {memory}; it passed the accuracy gate"
    )


def round_ranking(
    a: str, a_rounds_ms: Sequence[float], b: str, b_rounds_ms: Sequence[float]
) -> str:
    """Which of two paths timed in the same rounds is faster: only where their ranges part.

    One ranks only when its slowest round median beats the other's fastest by NOTICEABLE;
    overlapping rounds show no difference, whatever the overall medians say.
    """
    if min(len(a_rounds_ms), len(b_rounds_ms)) < 2:
        return "not judged: fewer than two timed rounds of each"
    for fast, fast_ms, slow_ms in ((a, a_rounds_ms, b_rounds_ms), (b, b_rounds_ms, a_rounds_ms)):
        if max(fast_ms) < min(slow_ms):
            ratio = min(slow_ms) / max(fast_ms)
            if ratio < NOTICEABLE:  # apart in every round, by a gap too small to rank
                return f"alike within {NOTICEABLE}x: the closest rounds are {ratio:.2f}x apart"
            return f"{fast} faster in every round (by at least {ratio:.2f}x)"
    return "no difference this run shows: their round medians overlap"


#: Notebook 07's question (our description): what every earlier notebook's rebuild leaves open.
KEEP_CLAIM = "a service starts sooner loading a saved Torch-TensorRT program than compiling it"


def keep_compiled(
    *, gate_ok: bool | None, load_s: float | None, rebuild_s: float | None, eager_s: float | None
) -> str:
    """Notebook 07: launch to first output of a fresh process, one start each (``gate_ok``:
    the reloaded module passed its gate; None where nothing could be compiled)."""
    if gate_ok is None:
        return "not testable here: it needs Torch-TensorRT and a GPU"
    if not gate_ok:
        return "not judged: saving or loading failed, or the loaded module failed its gate (above)"
    if load_s is None or rebuild_s is None:
        return "not judged: a fresh process failed before its first output (table above)"
    if rebuild_s > NOTICEABLE * load_s:
        verdict = f"holds: loading answered {rebuild_s / load_s:.1f}x sooner than rebuilding"
    elif load_s > NOTICEABLE * rebuild_s:
        verdict = "does not hold here: loading answered later than rebuilding"
    else:
        verdict = f"no difference this run shows: within {NOTICEABLE}x of rebuilding"
    if eager_s is None:
        return verdict
    if load_s > NOTICEABLE * eager_s:
        return f"{verdict}; eager PyTorch answered {load_s / eager_s:.1f}x sooner than loading"
    if eager_s > NOTICEABLE * load_s:
        return f"{verdict}; eager PyTorch answered later than loading"
    return f"{verdict}; eager PyTorch answered within {NOTICEABLE}x of loading"
