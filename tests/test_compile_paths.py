import sys

import pytest
import torch

from helpers.benchmark import measure_path, results_frame
from helpers.compare import AccuracyError
from helpers.compile import CompiledModel, compile_tensorrt, compile_torch, model_in_precision
from helpers.environment import DeviceUnavailableError, resolve_device
from helpers.errors import PrecisionError, SkipPath, TensorRTUnavailableError
from helpers.paths_catalog import comparison_paths, run_paths
from helpers.tensorrt import parse_version, precision_plan, tensorrt_status

ALL = frozenset({"attn_bias_is_causal", "use_explicit_typing", "enabled_precisions"})


def test_old_versions_use_enabled_precisions_on_an_fp32_model():
    plan = precision_plan("fp16", "2.9.0+cu128", rtx=False, setting_names=frozenset())
    assert plan.cast_dtype is None
    assert plan.settings == {"enabled_precisions": {torch.float16}}


@pytest.mark.parametrize("version", ["2.10.0", "2.12.1+cu128", "2.13.0"])
def test_strongly_typed_versions_cast_the_model_for_fp16(version):
    plan = precision_plan("fp16", version, rtx=False, setting_names=frozenset())
    assert plan.cast_dtype == torch.float16
    assert "enabled_precisions" not in plan.settings


def test_rtx_build_is_strongly_typed_and_gets_the_padding_mask_fix():
    plan = precision_plan("fp16", "2.9.0", rtx=True, setting_names=ALL)
    assert plan.cast_dtype == torch.float16
    assert plan.settings == {"attn_bias_is_causal": False}
    assert "attn_bias_is_causal=False" in plan.explanation


def test_fp32_is_never_cast():
    assert precision_plan("fp32", "2.11.0", rtx=True, setting_names=ALL).cast_dtype is None


def test_causal_attention_can_be_requested_on_purpose():
    plan = precision_plan("fp32", "2.11.0", False, ALL, attn_bias_is_causal=True)
    assert plan.settings["attn_bias_is_causal"] is True


@pytest.mark.parametrize("bad", ["int8", "FP16", "bf16", ""])
def test_unknown_precision_is_a_clear_error(bad):
    with pytest.raises(PrecisionError, match="fp32, fp16"):
        precision_plan(bad, "2.11.0", False, ALL)
    with pytest.raises(PrecisionError):
        model_in_precision(torch.nn.Linear(2, 2), bad)


def test_version_parsing():
    assert parse_version("2.11.0+cu130") == (2, 11)
    with pytest.raises(ValueError):
        parse_version("dev")


def test_missing_torch_tensorrt_is_a_skip_with_a_reason(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch_tensorrt", None)  # import now fails
    tensorrt_status.cache_clear()
    try:
        status = tensorrt_status()
        assert not status.available and "torch_tensorrt" in status.reason
        with pytest.raises(TensorRTUnavailableError, match="colab_setup.sh"):
            compile_tensorrt(torch.nn.Identity(), [torch.zeros(1, 2)])
    finally:
        tensorrt_status.cache_clear()


def test_cuda_graph_compile_modes_skip_on_cpu():
    with pytest.raises(SkipPath, match="CUDA"):
        compile_torch(torch.nn.Identity(), torch.device("cpu"), "reduce-overhead")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU error")
def test_asking_for_a_missing_gpu_is_a_clear_error():
    with pytest.raises(DeviceUnavailableError, match="no CUDA GPU"):
        resolve_device("cuda")
    assert resolve_device("auto").type == "cpu"


def test_unknown_device_is_a_clear_error():
    with pytest.raises(DeviceUnavailableError, match="not one of"):
        resolve_device("tpu")


def test_model_in_precision_leaves_the_reference_untouched():
    model = torch.nn.Linear(2, 2)
    half = model_in_precision(model, "fp16")
    assert half.weight.dtype == torch.float16 and model.weight.dtype == torch.float32


def _linear_path(weight_scale: float):
    def build():
        layer = torch.nn.Linear(8, 8)
        torch.nn.init.eye_(layer.weight)
        torch.nn.init.zeros_(layer.bias)
        layer.weight.data *= weight_scale
        return CompiledModel(layer, 0.0, "test")

    return build


def test_measure_path_gates_then_times():
    x = torch.randn(4, 8)
    result = measure_path("same", _linear_path(1.0), [x], x, "fp32", torch.device("cpu"), 1, 5)
    assert result.status == "ok" and result.latency.count == 5 and result.diff.max_abs < 1e-6


def test_measure_path_stops_on_a_wrong_path():
    x = torch.randn(4, 8)
    with pytest.raises(AccuracyError):
        measure_path("wrong", _linear_path(2.0), [x], x, "fp32", torch.device("cpu"), 1, 5)


def test_measure_path_records_skips_and_optional_failures():
    x = torch.randn(2, 8)

    def skip():
        raise SkipPath("needs a GPU")

    def broken():
        raise RuntimeError("capture failed")

    cpu = torch.device("cpu")
    skipped = measure_path("s", skip, [x], x, "fp32", cpu)
    failed = measure_path("f", broken, [x], x, "fp32", cpu, optional=True)
    assert (skipped.status, skipped.reason) == ("skipped", "needs a GPU")
    assert failed.status == "failed" and "capture failed" in failed.reason
    with pytest.raises(RuntimeError):
        measure_path("f", broken, [x], x, "fp32", cpu)


def test_comparison_on_cpu_runs_eager_and_skips_gpu_paths(roberta, small_batch):
    cpu = torch.device("cpu")
    with torch.inference_mode():
        reference = roberta.model(*small_batch).clone()
    paths = [
        p
        for p in comparison_paths(roberta.model, small_batch, "fp16", cpu, 4)
        if "torch.compile fp16" != p.name
    ]  # compiling takes ~30 s; the notebooks cover it
    results = run_paths(paths, small_batch, reference, cpu, 1, 2, None, 0.01, progress=False)
    status = {r.name: r.status for r in results}
    assert status["eager fp32"] == status["eager fp16"] == "ok"
    assert status["torch-tensorrt fp16"] == "skipped"
    assert status["eager fp16 + CUDA graph"] == "skipped"
    frame = results_frame(results)
    assert frame.loc["eager fp32", "speedup"] == pytest.approx(1.0)
