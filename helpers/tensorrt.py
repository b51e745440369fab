"""Find Torch-TensorRT lazily and speak the dialect of the installed version.

torch_tensorrt is optional: it cannot be installed on CPU-only machines, and its
precision API changed three times. Everything here works when it is missing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import logging
import re
import warnings
from dataclasses import dataclass, field

import torch

from helpers.errors import TensorRTUnavailableError, check_precision


@dataclass(frozen=True)
class TensorRTStatus:
    """Whether TensorRT paths can run here, and if not, why."""

    available: bool
    reason: str
    version: str | None = None
    tensorrt_version: str | None = None
    build: str | None = None  # "regular" or "RTX"


@dataclass(frozen=True)
class PrecisionPlan:
    """How to get a precision out of this Torch-TensorRT version."""

    precision: str
    cast_dtype: torch.dtype | None  # cast the model to this before compiling, if set
    settings: dict = field(default_factory=dict)  # extra keyword arguments for compile
    explanation: str = ""


def parse_version(version: str) -> tuple[int, int]:
    """'2.11.0+cu130' -> (2, 11)."""
    match = re.match(r"(\d+)\.(\d+)", version)
    if not match:
        raise ValueError(f"cannot read a version number from {version!r}")
    return int(match.group(1)), int(match.group(2))


def load_torch_tensorrt():
    """Import torch_tensorrt, or raise TensorRTUnavailableError saying why."""
    status = tensorrt_status()
    if not status.available:
        raise TensorRTUnavailableError(status.reason)
    return importlib.import_module("torch_tensorrt")


@contextlib.contextmanager
def quiet_tensorrt_logs():
    """Keep Torch-TensorRT's hundreds of conversion warnings out of notebook output.

    Errors still show; the compile either succeeds or raises with its message.
    """
    logger = logging.getLogger("torch_tensorrt")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            yield
    finally:
        logger.setLevel(level)


@functools.lru_cache(maxsize=1)
def tensorrt_status() -> TensorRTStatus:
    """Import torch_tensorrt once and report what is usable, never raising."""
    try:
        with quiet_tensorrt_logs():
            torch_tensorrt = importlib.import_module("torch_tensorrt")
    except Exception as error:  # ImportError, or OSError from missing TensorRT libraries
        return TensorRTStatus(
            False,
            f"torch_tensorrt is not installed or failed to import ({type(error).__name__}: "
            f"{str(error).splitlines()[0][:160] if str(error) else 'no message'}); "
            "in Colab run colab_setup.sh",
        )
    version = getattr(torch_tensorrt, "__version__", "unknown")
    features = getattr(torch_tensorrt, "ENABLED_FEATURES", None)
    rtx = bool(getattr(features, "tensorrt_rtx", False))
    trt_version = None
    for module_name in ("tensorrt_rtx", "tensorrt") if rtx else ("tensorrt",):
        try:
            trt_version = importlib.import_module(module_name).__version__
            break
        except Exception:
            continue
    build = "RTX" if rtx else "regular"
    if not torch.cuda.is_available():
        return TensorRTStatus(
            False,
            "no CUDA GPU is visible; TensorRT engines run only on NVIDIA GPUs",
            version,
            trt_version,
            build,
        )
    return TensorRTStatus(True, "ready", version, trt_version, build)


def compilation_setting_names(torch_tensorrt) -> frozenset[str]:
    """The keyword settings this version's dynamo compiler accepts."""
    settings = getattr(getattr(torch_tensorrt, "dynamo", None), "CompilationSettings", None)
    if settings is None or not dataclasses.is_dataclass(settings):
        return frozenset()
    return frozenset(f.name for f in dataclasses.fields(settings))


def precision_plan(
    precision: str,
    version: str,
    rtx: bool,
    setting_names: frozenset[str],
    attn_bias_is_causal: bool = False,
) -> PrecisionPlan:
    """Translate 'fp16'/'fp32' into what this Torch-TensorRT generation expects.

    * <= 2.9, regular TensorRT: weak typing, ``enabled_precisions`` lets TensorRT pick
      FP16 kernels for an FP32 model.
    * 2.10-2.12 (explicit typing by default), >= 2.13 and every RTX build: strongly
      typed, ``enabled_precisions`` is ignored or rejected, so FP16 means casting the
      model to FP16 before compiling.
    * ``attn_bias_is_causal`` exists from 2.11 and defaults to True, which silently
      replaces an encoder's padding mask with a causal one; we pass False unless asked.
    """
    check_precision(precision)
    strongly_typed = rtx or parse_version(version) >= (2, 10)
    settings: dict = {}
    if strongly_typed:
        cast = torch.float16 if precision == "fp16" else None
        explanation = (
            "strongly typed build: model cast to FP16 before compiling"
            if cast is not None
            else "strongly typed build: FP32 model compiled as is"
        )
    else:
        cast = None
        settings["enabled_precisions"] = {torch.float16 if precision == "fp16" else torch.float32}
        explanation = f"weakly typed build: enabled_precisions={{{precision}}}"
    if "attn_bias_is_causal" in setting_names:
        settings["attn_bias_is_causal"] = attn_bias_is_causal
        explanation += f", attn_bias_is_causal={attn_bias_is_causal}"
    return PrecisionPlan(precision, cast, settings, explanation)


def installed_precision_plan(precision: str, attn_bias_is_causal: bool = False) -> PrecisionPlan:
    """precision_plan() for the torch_tensorrt installed here."""
    torch_tensorrt = load_torch_tensorrt()
    status = tensorrt_status()
    return precision_plan(
        precision,
        status.version or "0.0",
        status.build == "RTX",
        compilation_setting_names(torch_tensorrt),
        attn_bias_is_causal,
    )
