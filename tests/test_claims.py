"""Every branch of the verdict wording and of the noise rules, on numbers alone."""

import pytest

from helpers import claims
from helpers.profiling import CallProfile, format_profile, kernel_kind

STEPS = {"FP16 arithmetic": 1.2, "the host out of the way": 6.0, "TensorRT's kernels": 1.3}


def speedup(**overrides):
    values = dict(
        workload=(16, 32),
        best_trt="tensorrt engine, static shape + CUDA graph",
        best_trt_vs_fp32=9.4,
        steps=STEPS,
        module_vs_fp32=2.3,
        module_kernel_share=0.26,
        fastest="tensorrt engine, static shape + CUDA graph",
        best_trt_vs_fastest=1.0,
        cold_ratio=32.1,
    )
    return claims.fp16_speedup(**{**values, **overrides})


def test_the_4x_holds_when_the_engine_is_4x_and_names_what_tensorrt_s_kernels_add():
    first, module, fastest, cold = speedup()
    assert first.verdict.startswith("holds for TensorRT's engine: 9.40x")
    assert "TensorRT's kernels add 1.30x" in first.verdict
    assert "FP16 arithmetic 1.20x" in first.measured
    assert "takes 74 % of the module's time" in module.verdict and "says little" in module.verdict
    assert fastest.verdict == "TensorRT is the fastest path here"
    assert "start-up cost" in cold.verdict and not cold.quote


def test_the_4x_at_another_workload_says_so_and_slower_kernels_are_named():
    first = speedup(
        workload=(64, 512),
        best_trt_vs_fp32=3.0,
        steps={"FP16 arithmetic": 8.7, "the host out of the way": 1.0, "TensorRT's kernels": 0.7},
        best_trt_vs_fastest=1.4,
        fastest="torch.compile fp16 reduce-overhead",
    )[0]
    assert first.verdict.startswith("does not hold (at 64 x 512, not 16 x 32)")
    assert "1.43x the time of PyTorch's" in first.verdict
    assert "the gain is FP16 arithmetic, and TensorRT's kernels are slower" in first.verdict
    middle = speedup(steps={**STEPS, "TensorRT's kernels": 1.02})[0]
    assert "add nothing measurable: the gain is FP16 arithmetic and the host out of the way" in (
        middle.verdict
    )


def test_the_best_tensorrt_path_against_the_fastest():
    near = speedup(fastest="torch.compile", best_trt_vs_fastest=1.05)[2]
    assert near.verdict == "within 1.1x of the fastest"
    far = speedup(fastest="torch.compile", best_trt_vs_fastest=1.5)[2]
    assert far.verdict == "1.50x slower than torch.compile"


def test_a_module_bound_by_its_kernels_and_missing_rows():
    rows = speedup(module_kernel_share=0.9, cold_ratio=float("nan"))
    assert len(rows) == 3 and "bound by its kernels" in rows[1].verdict
    assert len(speedup(module_vs_fp32=float("nan"))) == 3


def test_a_noisy_run_judges_nothing():
    (first, *_) = speedup(noisy=["eager fp32 drifted between rounds"])
    assert first.verdict.startswith(claims.TOO_NOISY)


def test_noise_rules():
    assert claims.round_spread([1.0, 1.5]) == 1.5 and claims.round_spread([2.0]) == 1.0
    assert claims.unsteady_paths({"a": [1.0, 1.2], "b": [1.0, 1.4]}) == ["b"]
    assert claims.timers_disagree(8.94, 5.14, drift=1.2)
    assert not claims.timers_disagree(8.94, 5.14, drift=1.79)
    assert claims.faster_larger_batches({16: 14.5, 64: 7.1, 256: 7.5}) == [(16, 64), (16, 256)]
    assert claims.faster_larger_batches({1: 1.0, 4: 0.9}) == []
    assert claims.baseline_moved(8.19, 5.01) and not claims.baseline_moved(5.2, 5.01)
    assert not claims.baseline_moved(8.19, None)
    flags = claims.noise_flags({"x": [1.0, 2.0]}, baseline_ms=8.19, other_baseline_ms=5.01)
    assert flags == [
        "x drifted between rounds",
        "eager fp32 moved to 5.010 ms in notebook 01 of this run",
    ]


def test_sweep_lines():
    assert claims.TOO_NOISY in claims.sweep_line("eager", {16: 14.5, 64: 7.1})
    assert "from batch 64 on" in claims.sweep_line("eager", {1: 1.0, 16: 1.2, 64: 2.0, 256: 6})
    assert "launch-bound across the sweep" in claims.sweep_line("eager", {1: 1.0, 16: 1.1})


def test_kernel_floor_line_says_what_bounds_a_path():
    bound = claims.kernel_floor_line(
        path="p", wall_ms=0.68, kernel_ms=0.61, matrix_ms=0.4, matrix_tflops=219, ceiling_tflops=757
    )
    assert "bound by its kernels" in bound and "29 % of the FP16 ceiling" in bound
    idle = claims.kernel_floor_line(
        path="p", wall_ms=3.6, kernel_ms=0.96, matrix_ms=0.5, matrix_tflops=170, ceiling_tflops=757
    )
    assert "idle 73 %" in idle


@pytest.mark.parametrize(
    "kw, speed, arithmetic, memory",
    [
        (
            dict(has_tf32=False, strict_x=1.05, error_vs_floor=2),
            "not testable here for TF32",
            "holds",
            "holds for memory",
        ),
        (
            dict(has_tf32=True, strict_x=2.2, error_vs_floor=2),
            "does not hold for speed",
            "holds",
            "holds for memory",
        ),
        (
            dict(has_tf32=True, strict_x=1.0, error_vs_floor=2),
            "holds for speed",
            "holds",
            "holds for memory",
        ),
        (
            dict(has_tf32=True, strict_x=2.2, tf32_like_x=2.2, error_vs_floor=400),
            "a noticeable improvement",
            "is not testable here as the post meant it",
            "holds for memory",
        ),
        (
            dict(has_tf32=True, strict_x=2.2, tf32_like_x=0.7, error_vs_floor=400),
            "no noticeable improvement",
            "is not testable here as the post meant it",
            "holds for memory",
        ),
    ],
)
def test_fp32_claim_speed_and_arithmetic(kw, speed, arithmetic, memory):
    verdict = claims.fp32_claim(
        **{"tf32_like_x": None, **kw}, memory_ratio=1.0, memory_delta_mib=0.0
    ).verdict
    assert speed in verdict and f"“still uses full FP32” {arithmetic}" in verdict
    assert memory in verdict


def test_fp32_claim_says_what_a_gain_without_tf32_gain_means():
    common = dict(has_tf32=True, error_vs_floor=400, memory_ratio=1.0, memory_delta_mib=0.0)
    host = claims.fp32_claim(strict_x=2.31, tf32_like_x=2.30, **common).verdict
    assert claims.NOT_STRICT in host and "eager gains 1.00x from TF32" in host
    assert "mostly host work removed, not faster arithmetic" in host
    arithmetic = claims.fp32_claim(strict_x=3.0, tf32_like_x=2.0, **common).verdict
    assert "host work" not in arithmetic  # eager gains 1.5x from TF32: arithmetic counts


def test_fp32_claim_too_noisy_judges_no_speed():
    common = dict(
        has_tf32=True,
        strict_x=3.0,
        tf32_like_x=3.3,
        error_vs_floor=400,
        memory_ratio=1.0,
        memory_delta_mib=0.0,
    )
    verdict = claims.fp32_claim(noisy=["eager fp32 drifted between rounds"], **common).verdict
    assert verdict.startswith(f"speed: {claims.TOO_NOISY} (eager fp32 drifted between rounds)")
    assert "improvement" not in verdict and "not testable here as the post meant it" in verdict
    moved = {**common, "noisy": ["eager fp32 moved"]}
    robust = claims.fp32_claim(least_x=1.35, **moved).verdict  # error 400x: no FP32 engine
    assert robust.startswith("cannot be tested as stated for speed")
    assert "whatever the noise (eager fp32 moved)" in robust and "still 1.35x" in robust
    assert "the like-for-like stand-in, it is 3.30x" in robust
    in_fp32 = claims.fp32_claim(least_x=1.35, **{**moved, "error_vs_floor": 2}).verdict
    assert in_fp32.startswith("does not hold for speed, whatever the noise (eager fp32 moved)")
    assert claims.TOO_NOISY in claims.fp32_claim(least_x=1.05, **moved).verdict


@pytest.mark.parametrize(
    "ratio, delta, words",
    [
        (0.5, -300, "does not hold for memory"),
        (2.0, 500, "memory may be worse"),
        (1.05, 20, "no noticeable"),
    ],
)
def test_fp32_claim_memory(ratio, delta, words):
    verdict = claims.fp32_claim(
        has_tf32=True,
        strict_x=1.0,
        tf32_like_x=None,
        error_vs_floor=1,
        memory_ratio=ratio,
        memory_delta_mib=delta,
    ).verdict
    assert words in verdict


def test_dynamic_shapes_branches():
    ok = "compiled, and correct at each checked length [16, 32]"
    both = claims.dynamic_shapes(
        post_call=ok, shared_lengths=[16, 512], static_vs_shared=1.3, static_vs_batch=1.1
    )
    assert both[0].verdict.startswith("does not hold") and "from 16 to 512" in both[0].verdict
    assert "1.30x faster" in both[1].verdict and "1.10x" in both[1].measured
    only_post = claims.dynamic_shapes(
        post_call=ok, shared_lengths=[], static_vs_shared=float("nan"), static_vs_batch=None
    )
    assert len(only_post) == 1 and only_post[0].verdict.endswith("are correct")
    failed = "failed: UserError: constraint"
    shared = claims.dynamic_shapes(
        post_call=failed, shared_lengths=[16, 64], static_vs_shared=1.02, static_vs_batch=None
    )
    assert (
        shared[0].verdict.startswith("holds only for the post's call")
        and "no noticeable cost" in shared[1].verdict
    )
    neither = claims.dynamic_shapes(
        post_call=failed, shared_lengths=[], static_vs_shared=None, static_vs_batch=None
    )
    assert neither[0].verdict.startswith("holds on this version")


@pytest.mark.parametrize(
    "kw, start",
    [
        (dict(built=False, on_gpu=False, engine_ok=False, memory_managed=False), "not testable"),
        (dict(built=True, on_gpu=False, engine_ok=False, memory_managed=False), "followed up to"),
        (
            dict(
                built=True, on_gpu=True, engine_ok=False, memory_managed=False, failure="wrong: x"
            ),
            "not kept here",
        ),
        (dict(built=True, on_gpu=True, engine_ok=True, memory_managed=False), "kept"),
    ],
)
def test_deploy_promise(kw, start):
    assert claims.deploy_promise(**kw).startswith(start)
    assert "allocated by us" in claims.deploy_promise(
        built=True, on_gpu=True, engine_ok=True, memory_managed=True
    )


def test_verdicts_print_and_record(capsys):
    verdict = claims.Verdict("a claim", "numbers", "holds", quote=False)
    claims.print_verdicts([verdict], run="H200", caveats=["RTX build"])
    out = capsys.readouterr().out
    assert "This run: H200" in out and "our description" in out and "Caveat: RTX build" in out
    assert verdict.record() == {
        "claim": "a claim",
        "measured": "numbers",
        "verdict": "holds",
        "quote": False,
    }
    claims.print_verdicts([], missing="nothing ran")
    assert "Verdict: nothing ran." in capsys.readouterr().out


@pytest.mark.parametrize(
    "name, kind",
    [
        ("nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_bias_TNT", "matrix products"),
        ("cudnn_generated_fort_native_sm90_matMul_knob_23_128x128x32", "matrix products"),
        ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16", "attention"),
        ("_gemm_mha_v2_0x33dc589f08d41c881b0d79b79ceb16d4", "attention"),
        ("triton_poi_fused__scaled_dot_product_cudnn_attention__to_copy", "other"),
        ("triton_tem_fused_addmm_gelu_t_view_7", "matrix products"),
        ("__myl_AddAddCastMeanSubMulMeanAddSqrtDivMulCastMulAdd_0xaae2", "other"),
        ("Memset (Unknown)", "other"),
    ],
)
def test_kernels_are_sorted_by_what_they_compute(name, kind):
    assert kernel_kind(name) == kind


def test_a_call_profile_splits_wall_time_into_kernels_and_host():
    p = CallProfile(wall_ms=4.0, kernel_ms=1.0, gpu_ops=250, by_kind={"attention": 0.2})
    assert p.busy_share == 0.25 and p.host_ms == 3.0
    assert "25 % busy" in format_profile("module", p) and "attention 0.200" in format_profile(
        "m", p
    )
    assert CallProfile(wall_ms=0.5, kernel_ms=0.6, gpu_ops=1).busy_share == 1.0


def test_timer_noise_flags_drift_and_disagreement():
    assert claims.timer_noise([(5.0, 5.2), (5.1, 5.0), (5.0, 5.1)]) == []
    published = claims.timer_noise([(5.0, 5.1), (8.94, 5.14), (5.0, 5.0)])  # 01's published case
    assert "moved 1.79x between rounds" in published[0]
    assert "in round 2 the two timers differ 1.74x" in published[1]


def test_first_call_is_too_noisy_to_judge_when_the_timers_are():
    calm = claims.first_call(cold_ms=300.0, warm_ms=5.0, count=100, noisy=[])
    assert "60.0x the warm median" in calm.verdict and "not a warm-against-warm" in calm.verdict
    noisy = claims.first_call(cold_ms=300.0, warm_ms=5.0, count=100, noisy=["moved 1.8x"])
    assert claims.TOO_NOISY in noisy.verdict and "60.0x" in noisy.measured
    args = dict(cold_ms=300.0, warm_ms=5.0, count=100, noisy=["moved 1.8x"])
    robust = claims.first_call(slowest_warm_ms=9.0, **args)
    assert (
        claims.TOO_NOISY not in robust.verdict and "33.3x the slowest warm timing" in robust.verdict
    )
    assert "still 33.3x" in robust.measured and "moved 1.8x" in robust.measured
    close = claims.first_call(**{**args, "cold_ms": 15.0}, slowest_warm_ms=9.0)
    assert claims.TOO_NOISY in close.verdict


def test_the_fp16_share_is_judged_on_trained_weights_only():
    args = dict(first_share=None, threshold=0.01)
    assert (
        "not testable on random"
        in claims.fp16_share(share=0.1, weights="random", trained=False, **args).verdict
    )
    assert (
        "matches" in claims.fp16_share(share=0.1, weights="trained", trained=True, **args).verdict
    )
    assert (
        "does not match"
        in claims.fp16_share(share=1.5, weights="trained", trained=True, **args).verdict
    )
    first = claims.fp16_share(
        share=0.1, weights="trained", trained=True, first_share=0.4, threshold=0.01
    )
    assert "first call 0.400 %" in first.measured
    moving = claims.fp16_share(share=0.1, weights="trained", trained=True, settled=False, **args)
    assert moving.verdict == f"the engine's output was still changing: {claims.TOO_NOISY}"


def test_the_accumulation_cause_branches():
    assert "bit for bit" in claims.accumulation_cause(ratio=3, acc_ratio=3, identical=True)
    assert "explains most" in claims.accumulation_cause(ratio=3, acc_ratio=1.2, identical=False)
    assert "not the main cause" in claims.accumulation_cause(
        ratio=3, acc_ratio=2.9, identical=False
    )


def test_recipes_are_ranked_only_beyond_the_checks_resolution():
    assert 0.6 < claims.spearman_resolution(24) < 0.63
    tight = claims.quant_ranking({"fp8": 0.9948, "int8, LayerNorm kept": 0.9913}, pairs=24)
    assert tight.startswith("no ranking")  # 06's published 0.0035 gap
    wide = claims.quant_ranking({"fp8": 0.995, "int8": 0.90}, pairs=24)
    assert "best 'fp8'" in wide and "beyond what 24 pairs resolve" in wide


def test_smoothquant_effect_says_which_way():
    assert "it hurt here" in claims.smoothquant_effect(with_smoothquant=0.714, without=0.934)
    assert "it helped here" in claims.smoothquant_effect(with_smoothquant=0.95, without=0.934)


@pytest.mark.parametrize(
    ("low", "high", "words"),
    [(1.81, 1.99, "holds on"), (1.2, 1.5, "does not hold"), (1.7, 1.9, "cannot be decided")],
)
def test_fp8_rate_branches(low, high, words):
    verdict = claims.fp8_rate(rate=1.9, low=low, high=high, device="NVIDIA H200", capability="9.0")
    assert words in verdict.verdict


def test_the_parameters_claim_branches():
    base = dict(built=["torch-tensorrt fp16"], passed=[], refused=[], quantized=5, speeds=[])
    assert "not testable" in claims.parameters_claim(testable=False, fp16_ok=False, **base).verdict
    fp16_only = claims.parameters_claim(testable=True, fp16_ok=True, **base).verdict
    assert fp16_only.startswith("holds for FP16") and "calibration with mtq.quantize" in fp16_only
    some = {
        **base,
        "built": ["torch-tensorrt fp16", "fp8"],
        "refused": ["int8"],
        "speeds": [0.5, 0.6],
    }
    verdict = claims.parameters_claim(testable=True, fp16_ok=True, **some).verdict
    assert "1 of the 5 quantized engines could not be built" in verdict and "0.50-0.60x" in verdict
    same_size = claims.parameters_claim(
        testable=True, fp16_ok=True, full_size=["torch-tensorrt int8 weight-only"], **some
    ).verdict
    assert (
        "int8 weight-only no smaller than the FP16 engine: its weights stayed 16-bit" in same_size
    )
    none_passed = {**some, "speeds": []}
    assert (
        "none of those built passed"
        in claims.parameters_claim(testable=True, fp16_ok=False, **none_passed).verdict
    )


def test_an_emulated_run_says_so_beside_its_verdicts(monkeypatch, capsys):
    verdict = claims.Verdict("a claim", "1.0x", "holds")
    monkeypatch.setenv("SERIES_EMULATE", "t4")
    claims.print_verdicts([verdict], run="H200, batch 16")
    out = capsys.readouterr().out
    assert "This run: H200, batch 16; EMULATED T4 limits, this GPU's speeds" in out
    monkeypatch.delenv("SERIES_EMULATE")
    claims.print_verdicts([verdict], run="H200, batch 16")
    assert "EMULATED" not in capsys.readouterr().out
