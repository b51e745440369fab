"""Every branch of notebook 08's verdict wording."""

import pytest

from helpers import decoding_claims as dc
from helpers.claims import TOO_NOISY


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
    assert "is within the range" in within and "76 % of an H100's" in within  # 18 x 141 GB
    assert "does not fit in one H100's memory" in within


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
    part = dc.weight_only(precision="fp8", bytes_ratio=0.5, speedup=1.4, **common)
    assert "kernels, not the bytes" in part.verdict and part.quote
    flat = dc.weight_only(precision="int8", bytes_ratio=0.5, speedup=1.08, **common).verdict
    assert "gained only 1.08x" in flat
    level = dc.weight_only(precision="int8", bytes_ratio=0.5, speedup=0.93, **common).verdict
    assert "did not get faster (0.93x)" in level
    slower = dc.weight_only(precision="int8", bytes_ratio=0.5, speedup=0.8, **common).verdict
    assert "got slower (0.80x)" in slower


def test_title_claim_noise_and_bounds():
    args = dict(
        best_name="b", speedup=5.0, decode_x=6.0, roof_pct=69, headroom={"bf16": 1.4, "fp8": 2.9}
    )
    assert TOO_NOISY in dc.title_claim(noisy=["batch 8 faster than 1"], **args).verdict
    verdict = dc.title_claim(noisy=[], **args).verdict
    assert "1.4x with bf16 weights" in verdict and "2.9x with fp8 weights" in verdict
    assert "4x over this PyTorch would be faster than the memory allows" in verdict
    roomy = dc.title_claim(noisy=[], **{**args, "headroom": {"bf16": 2.4, "8-bit": 4.8}}).verdict
    assert "faster than the memory allows" not in roomy
    generate_only = dc.title_claim(noisy=[], generate_noisy=["batch 64 faster than 1"], **args)
    assert TOO_NOISY not in generate_only.verdict and "6.0x is not judged" in generate_only.verdict
    assert "at most by the memory roof: 1.4x with bf16 weights" in generate_only.verdict
    both = dc.title_claim(noisy=["step"], generate_noisy=["generate"], **args).verdict
    assert both == f"step; generate: {TOO_NOISY}"


def test_weight_only_far_from_bf16_is_timed_and_says_so():
    timed = dict(precision="int8", path="p", bytes_ratio=0.5, speedup=1.5, roof_pct=40)
    far = dc.weight_only(agreement=0.56, cosine=0.9835, min_cosine=0.9712, **timed)
    assert "kernels, not the bytes" in far.verdict and "not known here" in far.verdict
    assert "0.9712 at the lowest" in far.measured
    close = dc.weight_only(agreement=0.9, cosine=0.999, min_cosine=0.99, **timed)
    assert "not known" not in close.verdict


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
