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


#: CompilationSettings fields (with defaults) that decide precision, as each release has them
#: in py/torch_tensorrt/dynamo/_settings.py and _defaults.py (tags v2.8.0 ... v2.13.0).
WEAKLY_TYPED = {"enabled_precisions": {torch.float32}, "use_explicit_typing": False}
EXPLICIT = {"enabled_precisions": {torch.float32}, "use_explicit_typing": True}  # 2.10 on
ATTENTION = {"decompose_attention": False, "attn_bias_is_causal": True}  # 2.11 on

#: (version, rtx, CompilationSettings fields with their defaults) per API generation.
GENERATIONS = {
    "2.8": ("2.8.0+cu128", False, WEAKLY_TYPED),
    "2.9": ("2.9.0+cu128", False, WEAKLY_TYPED),
    "2.10": ("2.10.0", False, EXPLICIT),
    "2.11": ("2.11.0+cu130", False, {**EXPLICIT, **ATTENTION}),
    "2.12": ("2.12.1", False, {**EXPLICIT, **ATTENTION}),
    "2.13": ("2.13.0", False, ATTENTION),  # both typing settings removed (pytorch/TensorRT#4195)
    "rtx": ("2.11.0", True, {**EXPLICIT, **ATTENTION}),  # the TensorRT-RTX build of 2.11
}

NO_CAUSAL = {"attn_bias_is_causal": False}  # an encoder's padding mask, where the setting exists
#: What settings_for asks of each generation at a dynamic shape: {precision: kwargs}.
#: Every generation casts the model to FP16 for fp16 and leaves it FP32 for fp32.
KWARGS = {
    "2.8": {
        "fp16": {"enabled_precisions": {torch.float16}},
        "fp32": {"enabled_precisions": {torch.float32}},
    },
    "2.9": {
        "fp16": {"enabled_precisions": {torch.float16}},
        "fp32": {"enabled_precisions": {torch.float32}},
    },
    "2.10": dict.fromkeys(("fp16", "fp32"), {"use_explicit_typing": True}),
    "2.11": dict.fromkeys(("fp16", "fp32"), {"use_explicit_typing": True, **NO_CAUSAL}),
    "2.12": dict.fromkeys(("fp16", "fp32"), {"use_explicit_typing": True, **NO_CAUSAL}),
    "2.13": dict.fromkeys(("fp16", "fp32"), NO_CAUSAL),
    "rtx": dict.fromkeys(("fp16", "fp32"), {"use_explicit_typing": True, **NO_CAUSAL}),
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


def check_as_compile_would(module: types.ModuleType, kwargs: dict) -> None:
    """Raise where that version's dynamo.compile would: TypeError on a keyword it lacks,
    AssertionError on an FP16 enabled_precisions with use_explicit_typing=True (2.10-2.12,
    pytorch/TensorRT#4070)."""
    settings = module.dynamo.CompilationSettings(**kwargs)
    explicit = getattr(settings, "use_explicit_typing", False)
    if explicit and getattr(settings, "enabled_precisions", {torch.float32}) != {torch.float32}:
        raise AssertionError("enabled_precisions should not be used when use_explicit_typing=True")


@pytest.mark.parametrize("generation", list(GENERATIONS))
@pytest.mark.parametrize("precision", ["fp16", "fp32"])
@pytest.mark.parametrize("static_shape", [False, True])
def test_every_keyword_is_a_setting_of_that_version(installed, generation, precision, static_shape):
    module = installed(generation)
    settings = tensorrt_settings(precision, static_shape=static_shape)
    module.dynamo.CompilationSettings(**settings.kwargs)  # raises TypeError on an unknown keyword
    check_as_compile_would(module, settings.kwargs)
    assert tensorrt_status().build == ("RTX" if generation == "rtx" else "regular")


@pytest.mark.parametrize("generation", list(GENERATIONS))
@pytest.mark.parametrize("precision", ["fp16", "fp32"])
def test_each_generation_gets_its_cast_and_keywords(installed, generation, precision):
    installed(generation)
    settings = tensorrt_settings(precision)
    assert settings.cast_model_to == (torch.float16 if precision == "fp16" else None)
    assert settings.kwargs == KWARGS[generation][precision]
    assert settings.dtype == {"fp16": torch.float16, "fp32": torch.float32}[precision]


@pytest.mark.parametrize("generation", list(GENERATIONS))
@pytest.mark.parametrize("precision", ["fp16", "fp32"])
def test_a_static_shape_changes_only_the_rtx_build(installed, generation, precision):
    installed(generation)
    static = tensorrt_settings(precision, static_shape=True)
    added = {"decompose_attention": True} if generation == "rtx" else {}
    assert static.kwargs == {**KWARGS[generation][precision], **added}
    assert static.cast_model_to == tensorrt_settings(precision).cast_model_to


def test_the_fake_compile_rejects_fp16_precisions_with_explicit_typing(installed):
    module = installed("2.10")
    with pytest.raises(AssertionError, match="use_explicit_typing=True"):
        check_as_compile_would(
            module, {"use_explicit_typing": True, "enabled_precisions": {torch.float16}}
        )


@pytest.mark.parametrize("generation", ["2.8", "2.9"])
def test_weakly_typed_versions_cast_the_model_and_pass_enabled_precisions(installed, generation):
    installed(generation)
    settings = tensorrt_settings("fp16")
    # FP32 model + enabled_precisions returned FP32 tensors, judged at FP32's tolerance
    assert settings.cast_model_to == torch.float16
    assert settings.kwargs == {"enabled_precisions": {torch.float16}}
    assert "use_explicit_typing" not in settings.kwargs  # False by default there


@pytest.mark.parametrize("generation", ["2.10", "2.11", "2.12", "2.13", "rtx"])
def test_strongly_typed_versions_cast_the_model_and_never_pass_enabled_precisions(
    installed, generation
):
    installed(generation)
    settings = tensorrt_settings("fp16")
    assert settings.cast_model_to == torch.float16
    assert "enabled_precisions" not in settings.kwargs
    assert tensorrt_settings("fp32").cast_model_to is None


def test_2_13_has_no_typing_setting_to_pass(installed):
    installed("2.13")
    assert "use_explicit_typing" not in tensorrt_settings("fp16").kwargs
    assert "strongly typed" in tensorrt_settings("fp16").why


@pytest.mark.parametrize("generation", ["2.11", "2.12", "2.13", "rtx"])
def test_the_padding_mask_fix_is_passed_where_the_setting_exists(installed, generation):
    installed(generation)
    assert tensorrt_settings("fp16").kwargs["attn_bias_is_causal"] is False
    assert tensorrt_settings("fp32", causal=True).kwargs["attn_bias_is_causal"] is True


@pytest.mark.parametrize("generation", ["2.8", "2.9", "2.10"])
def test_versions_without_the_setting_do_not_get_it(installed, generation):
    installed(generation)
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
    assert "hangs" not in static.why and "02d checks it" in static.why  # 02 shows no hang
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


@pytest.mark.parametrize(
    ("installed", "expected"),
    [
        (
            {"torch_tensorrt_rtx": "2.11.0", "tensorrt_rtx_cu13_bindings": "1.4.0.76"},
            ("RTX", "1.4.0.76"),
        ),
        ({"torch_tensorrt": "2.10.0", "tensorrt_cu12_bindings": "10.13.3"}, ("regular", "10.13.3")),
        ({}, (None, None)),
    ],
)
def test_tensorrt_installed_reads_metadata_without_importing(monkeypatch, installed, expected):
    """A lesson that runs no engine learns the versions without importing torch_tensorrt."""
    from importlib import metadata

    from helpers import trt_compat

    def version(name):
        if name not in installed:
            raise metadata.PackageNotFoundError(name)
        return installed[name]

    monkeypatch.setattr(trt_compat.metadata, "version", version)
    monkeypatch.setattr(
        trt_compat.importlib, "import_module", lambda name: pytest.fail(f"imported {name}")
    )
    status = trt_compat.tensorrt_installed()
    assert (status.build, status.tensorrt_version) == expected
    assert not status.available
    assert ("not imported" in status.reason) == bool(installed)
