"""Where outputs go, whichever folder a notebook was started from."""

from __future__ import annotations

from pathlib import Path


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
    """An absolute output folder; relative ones are taken from the project root."""
    path = Path(output_dir).expanduser()
    return path if path.is_absolute() else project_root() / path


def figure_path(output_dir: str | Path, name: str) -> Path:
    """``<output_dir>/figures/<name>``, creating the folder."""
    folder = resolve_output_dir(output_dir) / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name
