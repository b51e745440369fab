"""One family of errors, each a sentence that says what was wrong and what to do.

In a notebook, IPython prints a ``SeriesError`` as its one-line message instead of a
traceback through library frames: the reader sees the fix, not the call stack.
"""

from __future__ import annotations


class SeriesError(Exception):
    """Base class of every error this package raises on purpose."""

    def _render_traceback_(self) -> list[str]:  # IPython's hook for custom tracebacks
        return [f"{type(self).__name__}: {self}"]


class ParameterError(SeriesError, ValueError):
    """A notebook parameter that cannot work (batch 0, precision 'int3', ...)."""


class ModelNotAvailableError(SeriesError):
    """The model is neither on the hub, in a local folder nor rebuildable offline."""


class DeviceUnavailableError(SeriesError):
    """The requested device does not exist on this machine."""


class SkipStep(SeriesError):
    """A step that cannot run here (no GPU, no TensorRT); the message says why."""


class AccuracyError(SeriesError, AssertionError):
    """A compiled model's output is wrong, not merely less precise."""


def error_line(error: BaseException, limit: int = 240) -> str:
    """An error on one line: its type, and the line that names what was violated (a
    ``torch.export`` guard or constraint) where there is one, else its first line."""
    lines = [line.strip(" -") for line in str(error).splitlines() if line.strip(" -")]
    telling = next((line for line in lines if "guard" in line or "must always" in line), None)
    text = " ".join((telling or (lines[0] if lines else "")).split())
    return f"{type(error).__name__}: {text[:limit]}"


def export_refusal(error: BaseException) -> str:
    """``torch.export``'s refusal without its pointers to debugging tools: the constraint it
    found and the fix it suggests, one per line."""
    return "\n".join(
        line.split(" For more information")[0]
        for line in str(error).splitlines()
        if line.strip() and "draft_export" not in line
    )
