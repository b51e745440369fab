"""Every branch of notebook 08's verdict wording."""

import pytest

from helpers import decoding_claims as dc
from helpers.claims import NOT_JUDGED
from helpers.profiling import decode_kernel_kind


@pytest.mark.parametrize(
    ("launch_us", "expected"),
    [(None, "count them"), (2.0, "below"), (8.0, "within"), (30.0, "above")],
)
def test_launch_cost(launch_us, expected):
    assert expected in dc.launch_cost(launch_us).verdict


def test_launch_overhead_branches():
    assert "count them" in dc.launch_overhead(None, 3.0).verdict
    assert "not hundreds" in dc.launch_overhead(10, 3.0).verdict  # 80 x 10 x 20 µs = 16 ms
    assert "only at the article's worst" in dc.launch_overhead(200, 3.0).verdict  # 320 ms at 20 µs
    assert "as claimed" in dc.launch_overhead(200, 15.0).verdict
    assert "as claimed" in dc.launch_overhead(100, 30.0).verdict  # 240 ms here, 160 at 20 µs
    host = dc.launch_overhead(46, 6.3, idle_per_layer_ms=1.1)  # 23 ms of launches, 88 of host
    assert "scales to 88 ms" in host.measured and "does reach" not in host.verdict
    slow_host = dc.launch_overhead(46, 6.3, idle_per_layer_ms=3.0).verdict
    assert "not hundreds" in slow_host and "Python dispatch included, does reach" in slow_host


def test_bandwidth_share_branches():
    assert "measure it" in dc.bandwidth_share(eager_pct=None, best_pct=None, best_name="x").verdict
    just_under = dc.bandwidth_share(eager_pct=10, best_pct=69.8, best_name="x").verdict
    assert "reaches 69.8 %" in just_under  # one decimal: 69.8 must not read as 70
    assert (
        "is above the range" in dc.bandwidth_share(eager_pct=55, best_pct=69, best_name="x").verdict
    )
    low = dc.bandwidth_share(eager_pct=6, best_pct=47, best_name="x").verdict
    assert "is below the range at 6 %" in low and "x within it at 47.0 %" in low
    within = dc.bandwidth_share(eager_pct=42, best_pct=48, best_name="x").verdict
    shares = dc.bandwidth_share(eager_pct=42, best_pct=48, best_name="x")
    assert "is within the range" in within and "76 % of an H100's" in shares.measured  # 141 GB
    assert "does not fit in one H100's 80 GB" in shares.measured


def test_pytorch_peak_scope():
    assert (
        "on an H200 (the GPU the article says it of)"
        in dc.pytorch_peak(best_tb_s=2.9, device_name="NVIDIA H200").verdict
    )
    assert "went past" in dc.pytorch_peak(best_tb_s=2.9, device_name="NVIDIA H200").verdict
    assert "this GPU and build" in dc.pytorch_peak(best_tb_s=0.2, device_name="Tesla T4").verdict
    assert "under" in dc.pytorch_peak(best_tb_s=0.2, device_name="Tesla T4").verdict
    assert "as claimed" in dc.pytorch_peak(best_tb_s=2.0, device_name="x").verdict
    assert "measure it" in dc.pytorch_peak(best_tb_s=None, device_name="x").verdict


def test_an_emulated_t4_step_is_not_judged_as_the_articles_h200(monkeypatch):
    monkeypatch.setenv("SERIES_EMULATE", "t4")
    peak = dc.pytorch_peak(best_tb_s=1.2, device_name="NVIDIA H200").verdict
    assert peak == f"{NOT_JUDGED}: T4 limits emulated on this GPU: no flash or cuDNN attention"
    for best_pct in (38.3, 49.9, 59.6):  # both branches, with 08's longest path name
        share = dc.bandwidth_share(
            eager_pct=7, best_pct=best_pct, best_name="static cache + compiled step"
        ).verdict
        assert share.endswith("(T4 limits emulated)") and len(share.split()) <= 30, share


def test_article_70b_per_precision():
    raw = dc.article_70b(18, "raw").verdict
    assert "in bfloat16 exceeds its memory" in raw and "in FP8 possible" in raw
    fast = dc.article_70b(72, "trt").verdict
    assert "in bfloat16 exceeds its bandwidth and memory" in fast
    assert "in FP8 exceeds its bandwidth" in fast and "possible" not in fast


def test_weight_only_branches():
    common = dict(path="p", roof_pct=60, agreement=0.97, cosine=0.999, min_cosine=0.99)
    full = dc.weight_only(precision="int8", bytes_ratio=0.5, speedup=1.9, **common)
    assert "time followed" in full.verdict and not full.quote
    assert full.measured.startswith("p: int8 weights are 0.50x bf16's bytes")
    assert "profile" not in full.verdict  # the time followed the bytes: nothing to explain
    part = dc.weight_only(precision="fp8", bytes_ratio=0.5, speedup=1.4, **common)
    assert "the time only to 0.71x" in part.verdict and part.quote
    assert "kernels, not the bytes" not in part.verdict  # no cause the profile did not print
    assert "its profile above shows where the time goes" in part.verdict
    flat = dc.weight_only(precision="int8", bytes_ratio=0.5, speedup=1.08, **common).verdict
    assert "barely changed (1.08x)" in flat
    level = dc.weight_only(precision="int8", bytes_ratio=0.5, speedup=0.93, **common).verdict
    assert "barely changed (0.93x)" in level
    slower = dc.weight_only(precision="int8", bytes_ratio=0.5, speedup=0.8, **common).verdict
    assert "got slower (0.80x)" in slower


def test_weight_only_names_the_larger_part_of_its_profile(monkeypatch):
    monkeypatch.delenv("SERIES_EMULATE", raising=False)
    common = dict(path="p", roof_pct=40, agreement=0.97, cosine=0.999, min_cosine=0.99)
    inductor = {"matrix ms": 0.802, "other ms": 0.199, "matrix % of copy": 51.3}  # 0.39 ms over
    triton = {"matrix ms": 0.627, "other ms": 0.349, "matrix % of copy": 65.7}  # 0.22 ms over
    part = dc.weight_only(
        precision="int8", bytes_ratio=0.5, speedup=1.3, profile=inductor, **common
    )
    assert part.verdict == (
        "the bytes fell to 0.50x, the time only to 0.77x; "
        "profile: matrix products at 51 % of copy rate"
    )
    outside = dc.weight_only(
        precision="int8", bytes_ratio=0.5, speedup=1.3, profile=triton, **common
    )
    assert outside.verdict.endswith("; profile: 0.35 ms a step outside the matrix products")
    monkeypatch.setenv("SERIES_EMULATE", "t4")  # the emulated run says so, within 30 words
    for speedup in (1.9, 1.3, 1.0, 0.8):
        for profile in (inductor, triton, None):
            v = dc.weight_only(
                precision="int8", bytes_ratio=0.5, speedup=speedup, profile=profile, **common
            ).verdict
            assert v.endswith(f"({dc.EMULATED_STEP})") and len(v.split()) <= 30, v


def test_title_claim_noise_and_bounds():
    args = dict(
        best_name="b", speedup=5.0, decode_x=6.0, roof_pct=69, headroom={"bf16": 1.4, "fp8": 2.9}
    )
    noisy = dc.title_claim(noisy=["batch 8 faster than 1"], **args).verdict
    assert noisy.startswith(NOT_JUDGED) and "rerun" not in noisy
    verdict = dc.title_claim(noisy=[], **args).verdict
    assert "1.4x this step (bf16), 2.9x (fp8 weights)" in verdict  # not over generate
    assert "4x needs weights under 8 bits" in verdict and len(verdict.split()) <= 30
    three = {"bf16": 1.9, "8-bit": 3.8, "4-bit": 7.6}  # 08's H100 run: 31 words before
    long = dc.title_claim(noisy=[], **{**args, "decode_x": 6.9, "headroom": three}).verdict
    assert long.endswith("4x needs weights under 8 bits") and len(long.split()) <= 30
    roomy = dc.title_claim(noisy=[], **{**args, "headroom": {"bf16": 2.4, "8-bit": 4.8}}).verdict
    assert "4x needs" not in roomy
    generate_only = dc.title_claim(noisy=[], generate_noisy=["batch 64 faster than 1"], **args)
    assert not generate_only.verdict.startswith(NOT_JUDGED)
    assert (
        "6.0x is not judged" in generate_only.verdict and len(generate_only.verdict.split()) <= 30
    )
    assert "batch 64 faster than 1" in generate_only.measured  # why, beside the numbers
    three_noisy = dc.title_claim(noisy=[], generate_noisy=["a", "b"], **{**args, "headroom": three})
    assert len(three_noisy.verdict.split()) <= 30
    no_roof = dc.title_claim(noisy=[], **{**args, "headroom": {}}).verdict
    assert no_roof.endswith("no roof bound here") and "( weights)" not in no_roof
    assert "caps any engine at 1.4x this step (bf16)" in generate_only.verdict
    both = dc.title_claim(noisy=["step"], generate_noisy=["generate"], **args).verdict
    assert both == f"{NOT_JUDGED}: step; generate"


def test_title_claim_states_the_4x_bound_for_8_bits_or_more():
    args = dict(best_name="b", speedup=5.0, decode_x=6.0, roof_pct=51, noisy=[])
    four = dc.title_claim(headroom={"bf16": 1.9, "8-bit": 3.9, "4-bit": 7.6}, **args).verdict
    assert "4x needs weights under 8 bits" in four
    assert "7.6x (4-bit weights)" in four  # 4-bit weights would allow more than 4x
    only_four = dc.title_claim(headroom={"bf16": 1.9, "4-bit": 4.5}, **args).verdict
    assert "4x needs" in only_four  # the 4-bit bound alone does not lift the 8-bit one


def test_weight_only_far_from_bf16_is_timed_and_says_so():
    timed = dict(precision="int8", path="p", bytes_ratio=0.5, speedup=1.5, roof_pct=40)
    far = dc.weight_only(agreement=0.56, cosine=0.9835, min_cosine=0.9712, **timed)
    assert far.verdict.startswith(NOT_JUDGED) and "trained weights" in far.verdict
    assert "1.50x" not in far.verdict and "faster" not in far.verdict  # never a speed headline
    assert "0.9712 at the lowest" in far.measured and "1.50x" in far.measured
    assert "tokens/s (answers moved: not judged)" in far.measured
    close = dc.weight_only(agreement=0.9, cosine=0.999, min_cosine=0.99, **timed)
    assert "trained weights" not in close.verdict and "bytes fell" in close.verdict
    assert "answers moved" not in close.measured


def test_weight_only_whose_compiled_step_differs_is_not_timed():
    failed = dc.weight_only(
        precision="fp8",
        path="p",
        bytes_ratio=0.5,
        speedup=None,
        roof_pct=None,
        agreement=0.5,
        cosine=0.95,
        min_cosine=0.9,
    )
    assert "not judged" in failed.verdict and "0.9500 on the first step" in failed.measured


def test_sweep_note_voids_a_sweep_that_breaks_a_noise_rule():
    steady = {1: 1.2, 8: 1.3, 32: 1.6, 64: 2.1}
    assert "not judged" not in dc.sweep_note("s", steady, batch=1, measured_ms=1.19)
    assert "from batch 64 on" in dc.sweep_note("s", steady, batch=1, measured_ms=1.19)
    assert "36.6x from batch 1 to 64" in dc.sweep_note("s", steady, batch=1, measured_ms=1.19)
    flat = dc.sweep_note("s", {1: 1.2, 8: 1.3}, batch=1, measured_ms=1.2)
    assert "stays within 1.5x of batch 1's up to batch 8" in flat
    faster = dc.sweep_note("s", {1: 38.5, 8: 20.0}, batch=1, measured_ms=38.0)
    assert (
        faster.startswith(f"s: {NOT_JUDGED}") and "batch 8 faster per step than batch 1" in faster
    )
    apart = dc.sweep_note("s", {1: 38.5, 8: 39.0}, batch=1, measured_ms=22.2)  # 08's old sweep
    assert NOT_JUDGED in apart and "38.50 ms a step here, 22.20 ms above" in apart


def test_decode_profile_counts_inductor_matmul_reductions_as_matrix_products():
    assert decode_kernel_kind("triton_red_fused__unsafe_view_mm_mul_silu_9") == "matrix products"
    assert decode_kernel_kind("triton_red_fused_add_mean_pow_rsqrt_3") == "other"
    assert decode_kernel_kind("gemv_kernel") == "matrix products"
    assert decode_kernel_kind("nvjet_sm90_tst_128x8_64x12_2x1_v_bz_TNT") == "matrix products"
    assert decode_kernel_kind("cudnn_generated_fort_native_sdpa_sm80_flash_fprop") == "attention"


def test_an_unreadable_step_time_is_never_judged():
    """decoding.measure's NaN (a prefill as long as its run) reaches no verdict as a number."""
    nan = float("nan")
    common = dict(path="p", agreement=0.97, cosine=0.999, min_cosine=0.99)
    for verdict in (
        dc.weight_only(precision="int8", bytes_ratio=0.5, speedup=nan, roof_pct=nan, **common),
        dc.bandwidth_share(eager_pct=7, best_pct=nan, best_name="b"),
        dc.pytorch_peak(best_tb_s=nan, device_name="NVIDIA H200"),
        dc.title_claim(
            best_name="b", speedup=nan, decode_x=nan, roof_pct=nan, headroom={}, noisy=[]
        ),
    ):
        assert verdict.verdict == dc.UNREADABLE and "nan" not in verdict.verdict
    note = dc.sweep_note("p", {1: 1.0, 8: nan}, batch=1, measured_ms=1.0)
    assert note.startswith(f"p: {NOT_JUDGED}") and "unreadable" in note
