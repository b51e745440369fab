"""Published PNGs are rewritten smaller and still read as the same picture."""

import base64
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
from PIL import Image  # noqa: E402

from helpers.tools.png import shrink_notebook_images, shrink_png_file, smaller_png  # noqa: E402


def figure_png() -> bytes:
    fig, ax = plt.subplots(figsize=(6, 3))
    for shift in range(5):
        ax.fill_between(range(50), [(x + shift) % 7 for x in range(50)], alpha=0.3)
    ax.set_title("a figure with anti-aliased edges")
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=100)
    plt.close(fig)
    return out.getvalue()


def test_a_figure_gets_smaller_and_keeps_its_size_in_pixels():
    data = figure_png()
    smaller = smaller_png(data)
    assert len(smaller) < 0.7 * len(data)
    assert Image.open(io.BytesIO(smaller)).size == Image.open(io.BytesIO(data)).size


def test_what_is_not_an_image_is_left_as_it_is(tmp_path):
    assert smaller_png(b"f") == b"f"
    stub = tmp_path / "stub.png"
    stub.write_bytes(b"f")
    shrink_png_file(stub)
    assert stub.read_bytes() == b"f"


def test_a_notebooks_images_are_rewritten_smaller(tmp_path):
    data = figure_png()
    notebook = nbformat.v4.new_notebook()
    output = nbformat.v4.new_output(
        "display_data", data={"image/png": base64.b64encode(data).decode(), "text/plain": "x"}
    )
    notebook.cells.append(nbformat.v4.new_code_cell("plot()", outputs=[output]))
    path = tmp_path / "n.ipynb"
    nbformat.write(notebook, path)
    shrink_notebook_images(path)
    stored = nbformat.read(path, as_version=4).cells[0].outputs[0]["data"]
    assert len(base64.b64decode(stored["image/png"])) < 0.7 * len(data)
    assert stored["text/plain"] == "x"
