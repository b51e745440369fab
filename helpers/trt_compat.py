"""Find Torch-TensorRT lazily and say what the installed version wants to be told.

torch_tensorrt is optional: it cannot be installed on CPU-only machines, and the way to
ask for a precision changed across versions. Everything here works when it is missing.
The notebooks print what ``tensorrt_settings`` returns and pass it to the real call.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import logging
import warnings
from dataclasses import dataclass, field
from importlib import metadata

import torch
from packaging.version import Version

from helpers.errors import ParameterError, SkipStep

PRECISIONS = ("fp32", "fp16")
#: The dtype each precision asks for: the model's dtype, and the accuracy gate's.
PRECISION_DTYPES = {"fp32": torch.float32, "fp16": torch.float16}


def check_precision(precision: str) -> str:
    """Return ``precision`` if the series supports it, else a ParameterError."""
    if precision not in PRECISIONS:
        raise ParameterError(
            f"precision={precision!r} is not supported; use one of {', '.join(PRECISIONS)}"
        )
    return precision


@dataclass(frozen=True)
class TensorRTStatus:
    """Whether TensorRT can run here, and if not, why."""

    available: bool
    reason: str
    version: str | None = None
    tensorrt_version: str | None = None
    build: str | None = None  # "regular" or "RTX"


@dataclass(frozen=True)
class TensorRTSettings:
    """What to hand ``torch_tensorrt.compile`` for a precision on one version."""

    cast_model_to: torch.dtype | None  # cast the model to this dtype first, if set
    kwargs: dict = field(default_factory=dict)  # extra keyword arguments for compile
    why: str = ""
    dtype: torch.dtype = torch.float32  # the precision asked for: the gate judges at its tolerance

    def __str__(self) -> str:
        cast = f"cast the model to {self.cast_model_to}" if self.cast_model_to else "no cast"
        return f"{cast}; compile(..., **{self.kwargs}) [{self.why}]"


@contextlib.contextmanager
def quiet_tensorrt_logs(level: int = logging.WARNING):
    """Keep log records up to ``level`` and Python warnings out of notebook output.

    Torch-TensorRT logs hundreds of conversion warnings under several logger names
    (``torch_tensorrt [TensorRT Conversion Context]`` is not a child of
    ``torch_tensorrt``), so logging is muted as a whole for the duration. Exceptions
    still raise with their message.
    """
    previous = logging.root.manager.disable
    logging.disable(level)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(previous)


@functools.lru_cache(maxsize=1)
def tensorrt_status() -> TensorRTStatus:
    """Import torch_tensorrt once and report what is usable, never raising."""
    try:
        # Its import logs errors about optional plugins (TRT-LLM, modelopt) it cannot use.
        with quiet_tensorrt_logs(logging.ERROR):
            torch_tensorrt = importlib.import_module("torch_tensorrt")
    except Exception as error:  # ImportError, or OSError from missing TensorRT libraries
        first_line = str(error).splitlines()[0][:160] if str(error) else "no message"
        return TensorRTStatus(
            False,
            f"torch_tensorrt is not installed or failed to import ({type(error).__name__}: "
            f"{first_line}); in Colab run colab_setup.sh",
        )
    version = getattr(torch_tensorrt, "__version__", "unknown")
    rtx = bool(getattr(getattr(torch_tensorrt, "ENABLED_FEATURES", None), "tensorrt_rtx", False))
    trt_version = None
    for module_name in ("tensorrt_rtx", "tensorrt") if rtx else ("tensorrt",):
        with contextlib.suppress(Exception):
            trt_version = importlib.import_module(module_name).__version__
            break
    build = "RTX" if rtx else "regular"
    if not torch.cuda.is_available():
        reason = "no CUDA GPU is visible; TensorRT engines run only on NVIDIA GPUs"
        return TensorRTStatus(False, reason, version, trt_version, build)
    return TensorRTStatus(True, "ready", version, trt_version, build)


#: Distributions that provide ``torch_tensorrt``, and the TensorRT they run (first found wins).
TORCH_TENSORRT_DISTRIBUTIONS = {"torch_tensorrt_rtx": "RTX", "torch_tensorrt": "regular"}
TENSORRT_DISTRIBUTIONS = {
    "RTX": ("tensorrt_rtx_cu13_bindings", "tensorrt_rtx_cu12_bindings", "tensorrt_rtx"),
    "regular": ("tensorrt_cu13_bindings", "tensorrt_cu12_bindings", "tensorrt"),
}


def _version_of(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def tensorrt_installed() -> TensorRTStatus:
    """What is installed, read from package metadata without importing torch_tensorrt.

    A lesson that runs no engine skips the import, which takes seconds (it also imports
    modelopt where that is installed).
    """
    found = [(_version_of(name), build) for name, build in TORCH_TENSORRT_DISTRIBUTIONS.items()]
    version, build = next(((v, b) for v, b in found if v), (None, None))
    if version is None:
        return TensorRTStatus(False, "torch_tensorrt is not installed; this lesson runs none")
    trt_version = next(filter(None, map(_version_of, TENSORRT_DISTRIBUTIONS[build])), None)
    reason = "installed, not imported: this lesson runs no TensorRT"
    return TensorRTStatus(False, reason, version, trt_version, build)


def import_torch_tensorrt():
    """``torch_tensorrt``, or SkipStep saying why it cannot run here."""
    status = tensorrt_status()
    if not status.available:
        raise SkipStep(status.reason)
    with quiet_tensorrt_logs():
        return importlib.import_module("torch_tensorrt")


def setting_names(torch_tensorrt) -> frozenset[str]:
    """The keyword settings this version's dynamo compiler accepts."""
    settings = getattr(getattr(torch_tensorrt, "dynamo", None), "CompilationSettings", None)
    if settings is None or not dataclasses.is_dataclass(settings):
        return frozenset()
    return frozenset(f.name for f in dataclasses.fields(settings))


def settings_for(
    precision: str,
    *,
    version: str,
    rtx: bool,
    names: frozenset[str],
    causal: bool = False,
    static_shape: bool = False,
) -> TensorRTSettings:
    """Translate 'fp16'/'fp32' into what one Torch-TensorRT generation expects.

    * FP16 means casting the model to FP16 before compiling, on every generation: the
      engine then computes in FP16 and hands back FP16 tensors, whatever the typing.
    * <= 2.9, regular TensorRT: weakly typed (``use_explicit_typing`` False by default);
      ``enabled_precisions={torch.float16}`` lets TensorRT keep FP16 kernels for the cast
      model (without it, it may pick FP32).
    * 2.10-2.12 and every RTX build: strongly typed (``use_explicit_typing=True``, which
      rejects an FP16 ``enabled_precisions``); 2.13 has neither setting and is always
      strongly typed. FP32 engines may still use TF32 unless ``disable_tf32=True``.
    * ``attn_bias_is_causal`` (from 2.11) defaults to True, which replaces an encoder's
      padding mask with a causal one; it is passed as False unless ``causal``.
    * ``static_shape`` on the RTX build: an engine whose attention is TensorRT's attention
      layer did not return from its first call at a fully static shape (deep dive 02d shows
      it), so ``decompose_attention=True`` builds attention from matrix products and a
      softmax, as an ONNX export does, where the setting exists.
    """
    dtype = PRECISION_DTYPES[check_precision(precision)]
    cast = torch.float16 if precision == "fp16" else None
    kwargs: dict = {}
    if not rtx and Version(version).release[:2] < (2, 10):  # weakly typed
        kwargs["enabled_precisions"] = {dtype}
        why = "weakly typed: enabled_precisions lets TensorRT keep the model's precision"
    else:
        why = "strongly typed: the engine computes in the dtypes of the model it is given"
        if "use_explicit_typing" in names:
            kwargs["use_explicit_typing"] = True
    if "attn_bias_is_causal" in names:
        kwargs["attn_bias_is_causal"] = causal
        why += "; attn_bias_is_causal must be False for an encoder's padding mask"
    if static_shape and rtx and "decompose_attention" in names:
        kwargs["decompose_attention"] = True
        why += "; decompose_attention=True: avoids RTX's attention layer at a static shape "
        why += "(02d checks it)"
    return TensorRTSettings(cast_model_to=cast, kwargs=kwargs, why=why, dtype=dtype)


def tensorrt_settings(
    precision: str, causal: bool = False, static_shape: bool = False
) -> TensorRTSettings:
    """``settings_for`` the torch_tensorrt installed here (SkipStep if there is none)."""
    torch_tensorrt = import_torch_tensorrt()
    status = tensorrt_status()
    return settings_for(
        precision,
        version=status.version or "0.0",
        rtx=status.build == "RTX",
        names=setting_names(torch_tensorrt),
        causal=causal,
        static_shape=static_shape,
    )


def import_tensorrt():
    """The TensorRT Python module that runs engines here: ``tensorrt_rtx`` or ``tensorrt``.

    Torch-TensorRT's own build decides which one comes first, so that an engine it builds
    is read by the same library; without Torch-TensorRT, whichever is installed. SkipStep
    when neither imports.
    """
    build = tensorrt_status().build
    order = ("tensorrt", "tensorrt_rtx") if build == "regular" else ("tensorrt_rtx", "tensorrt")
    for name in order:
        with contextlib.suppress(ImportError, OSError):
            return importlib.import_module(name)
    raise SkipStep("neither tensorrt_rtx nor tensorrt is installed (pip install tensorrt-rtx)")
