"""Exceptions that notebooks catch by meaning, not by library."""

from __future__ import annotations


class SkipPath(RuntimeError):
    """A measurement that cannot run here (no GPU, no TensorRT); the message says why."""


class TensorRTUnavailableError(SkipPath):
    """torch_tensorrt cannot be imported or has no GPU to run on."""


class PrecisionError(ValueError):
    """An unknown or unsupported precision name."""


PRECISIONS = ("fp32", "fp16")


def check_precision(precision: str) -> str:
    """Return ``precision`` if the series supports it, else raise PrecisionError."""
    if precision not in PRECISIONS:
        raise PrecisionError(
            f"precision={precision!r} is not supported; use one of {', '.join(PRECISIONS)}"
        )
    return precision
