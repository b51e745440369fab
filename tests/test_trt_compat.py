"""The compile arguments for each Torch-TensorRT generation, against fake modules on CPU."""

import dataclasses
import sys
import types

import pytest
import torch

from helpers.errors import ParameterError, SkipStep
from helpers.trt_compat import settings_for, tensorrt_settings, tensorrt_status


def fake_torch_tensorrt(version: str, fields: dict, rtx: bool = False) -> types.ModuleType:
    """A module shaped like torch_tensorrt: version, build features, CompilationSettings."""
    settings = dataclasses.make_dataclass(
        "CompilationSettings",
        [
            (name, object, dataclasses.field(default_factory=lambda v=v: v))
            for name, v in fields.items()
        ],
    )
    module = types.ModuleType("torch_tensorrt")
    module.__version__ = version
    module.ENABLED_FEATURES = types.SimpleNamespace(tensorrt_rtx=rtx)
    module.dynamo = types.SimpleNamespace(CompilationSettings=settings)
    return module


#: (version, rtx, CompilationSettings fields with their defaults) per API generation.
GENERATIONS = {
    "2.9": (
        "2.9.0+cu128",
        False,
        {"enabled_precisions": {torch.float32}, "use_explicit_typing": False},
    ),
    "2.10": ("2.10.0", False, {"enabled_precisions": set(), "use_explicit_typing": True}),
    "2.12": (
        "2.12.1",
        False,
        {"enabled_precisions": set(), "use_explicit_typing": True, "attn_bias_is_causal": True},
    ),
    "2.13": ("2.13.0", False, {"enabled_precisions": set(), "attn_bias_is_causal": True}),
    "rtx": (
        "2.11.0",
        True,
        {"enabled_precisions": set(), "use_explicit_typing": True, "attn_bias_is_causal": True},
    ),
}


@pytest.fixture
def installed(monkeypatch):
    """Install a fake torch_tensorrt of one generation and pretend there is a GPU."""

    def install(generation: str):
        version, rtx, fields = GENERATIONS[generation]
        module = fake_torch_tensorrt(version, fields, rtx)
        monkeypatch.setitem(sys.modules, "torch_tensorrt", module)
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        tensorrt_status.cache_clear()
        return module

    yield install
    tensorrt_status.cache_clear()


@pytest.mark.parametrize("generation", list(GENERATIONS))
@pytest.mark.parametrize("precision", ["fp16", "fp32"])
def test_every_keyword_is_a_setting_of_that_version(installed, generation, precision):
    module = installed(generation)
    settings = tensorrt_settings(precision)
    module.dynamo.CompilationSettings(**settings.kwargs)  # raises TypeError on an unknown keyword
    assert tensorrt_status().build == ("RTX" if generation == "rtx" else "regular")


def test_weakly_typed_versions_use_enabled_precisions_on_the_fp32_model(installed):
    installed("2.9")
    settings = tensorrt_settings("fp16")
    assert settings.cast_model_to is None
    assert settings.kwargs == {"enabled_precisions": {torch.float16}}


@pytest.mark.parametrize("generation", ["2.10", "2.12", "2.13", "rtx"])
def test_strongly_typed_versions_cast_the_model_and_never_pass_enabled_precisions(
    installed, generation
):
    installed(generation)
    settings = tensorrt_settings("fp16")
    assert settings.cast_model_to == torch.float16
    assert "enabled_precisions" not in settings.kwargs
    assert tensorrt_settings("fp32").cast_model_to is None


@pytest.mark.parametrize("generation", ["2.12", "2.13", "rtx"])
def test_the_padding_mask_fix_is_passed_where_the_setting_exists(installed, generation):
    installed(generation)
    assert tensorrt_settings("fp16").kwargs["attn_bias_is_causal"] is False
    assert tensorrt_settings("fp32", causal=True).kwargs["attn_bias_is_causal"] is True


def test_versions_without_the_setting_do_not_get_it(installed):
    installed("2.10")
    assert "attn_bias_is_causal" not in tensorrt_settings("fp16").kwargs


@pytest.mark.parametrize("bad", ["int3", "FP16", "bf16", ""])
def test_unknown_precision_is_a_parameter_error(bad):
    with pytest.raises(ParameterError, match="fp32, fp16"):
        settings_for(bad, version="2.11.0", rtx=False, names=frozenset())


def test_missing_torch_tensorrt_is_a_skip_with_its_reason(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch_tensorrt", None)  # import now fails
    tensorrt_status.cache_clear()
    try:
        assert not tensorrt_status().available
        with pytest.raises(SkipStep, match="colab_setup.sh"):
            tensorrt_settings("fp16")
    finally:
        tensorrt_status.cache_clear()


def test_no_gpu_is_a_skip_even_with_torch_tensorrt(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch_tensorrt", fake_torch_tensorrt("2.11.0", {}))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    tensorrt_status.cache_clear()
    try:
        with pytest.raises(SkipStep, match="no CUDA GPU"):
            tensorrt_settings("fp16")
    finally:
        tensorrt_status.cache_clear()


def test_a_static_shape_on_rtx_decomposes_attention_where_the_setting_exists():
    names = frozenset({"use_explicit_typing", "attn_bias_is_causal", "decompose_attention"})
    static = settings_for("fp16", version="2.11.0", rtx=True, names=names, static_shape=True)
    assert static.kwargs["decompose_attention"] is True and "static shape" in static.why
    dynamic = settings_for("fp16", version="2.11.0", rtx=True, names=names)
    assert "decompose_attention" not in dynamic.kwargs
    regular = settings_for("fp16", version="2.12.0", rtx=False, names=names, static_shape=True)
    assert "decompose_attention" not in regular.kwargs  # regular TensorRT keeps its layer
    older = settings_for("fp16", version="2.10.0", rtx=True, names=names - {"decompose_attention"})
    assert "decompose_attention" not in older.kwargs


def test_the_tensorrt_module_follows_torch_tensorrt_s_build(monkeypatch):
    from helpers.trt_compat import import_tensorrt

    monkeypatch.setitem(sys.modules, "tensorrt", types.ModuleType("tensorrt"))
    monkeypatch.setitem(sys.modules, "tensorrt_rtx", types.ModuleType("tensorrt_rtx"))
    for rtx, expected in ((True, "tensorrt_rtx"), (False, "tensorrt")):
        monkeypatch.setitem(sys.modules, "torch_tensorrt", fake_torch_tensorrt("2.11.0", {}, rtx))
        tensorrt_status.cache_clear()
        assert import_tensorrt().__name__ == expected
    monkeypatch.setitem(sys.modules, "tensorrt", None)
    monkeypatch.setitem(sys.modules, "tensorrt_rtx", None)
    with pytest.raises(SkipStep, match="pip install tensorrt-rtx"):
        import_tensorrt()
    tensorrt_status.cache_clear()
