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
