"""Where outputs go, whichever folder a notebook was started from."""

from __future__ import annotations

import os
from pathlib import Path

#: Set by the test suite so that re-executing the published notebooks (nbval) writes
#: its records and figures elsewhere instead of over the committed GPU results.
TEST_OUTPUT_ENV = "SERIES_TEST_OUTPUT_DIR"


def project_root(start: Path | None = None) -> Path:
    """The nearest folder at or above ``start`` holding both notebooks/ and helpers/.

    Jupyter starts kernels in notebooks/, papermill in the caller's folder; both should
    write to the same results/ and figures/. Falls back to ``start`` itself.
    """
    start = (start or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if (folder / "notebooks").is_dir() and (folder / "helpers").is_dir():
            return folder
    return start


def resolve_output_dir(output_dir: str | Path) -> Path:
    """An absolute output folder; relative ones are taken from the project root.

    The default ``"."`` (the published results/ and figures/) is redirected to
    ``$SERIES_TEST_OUTPUT_DIR`` when the test suite sets it.
    """
    if str(output_dir) == "." and os.environ.get(TEST_OUTPUT_ENV):
        return Path(os.environ[TEST_OUTPUT_ENV])
    path = Path(output_dir).expanduser()
    return path if path.is_absolute() else project_root() / path


def figure_path(output_dir: str | Path, name: str) -> Path:
    """``<output_dir>/figures/<name>``, creating the folder."""
    folder = resolve_output_dir(output_dir) / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name
