"""Smaller PNGs for what gets committed: published figures and notebooks' images.

The repository travels beside the GPU archives in one 64-MiB upload, so it must stay under
about 4 MB. Matplotlib's figures hold a few flat colours and their anti-aliasing; a
256-colour palette keeps them readable at about a third of the bytes.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

import nbformat
from PIL import Image


def smaller_png(data: bytes) -> bytes:
    """``data`` as a 256-colour PNG, or unchanged where that is not smaller (or no image)."""
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except OSError:  # PIL's UnidentifiedImageError included: not ours to judge, kept as is
        return data
    palette = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    palette.save(out, format="PNG", optimize=True)
    return out.getvalue() if len(out.getvalue()) < len(data) else data


def shrink_png_file(path: Path) -> None:
    """Rewrite the PNG at ``path`` smaller, in place."""
    data = path.read_bytes()
    if (smaller := smaller_png(data)) is not data:
        path.write_bytes(smaller)


def shrink_notebook_images(path: Path) -> None:
    """Rewrite each PNG output of the notebook at ``path`` smaller, in place."""
    notebook = nbformat.read(path, as_version=4)
    changed = False
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            encoded = output.get("data", {}).get("image/png")
            if not encoded:
                continue
            data = base64.b64decode(encoded)
            if (smaller := smaller_png(data)) is not data:
                output["data"]["image/png"] = base64.b64encode(smaller).decode() + "\n"
                changed = True
    if changed:
        nbformat.write(notebook, path)
