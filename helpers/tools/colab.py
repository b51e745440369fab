"""The Colab cells every notebook shares: an "Open in Colab" badge and a setup cell.

They are written from one template into every notebook, so they cannot drift apart, and
the series' public address lives in one place (the setup cell's ``SERIES_REPO``)::

    python -m helpers.tools.colab --repo https://github.com/OWNER/NAME  # badge + address
    python -m helpers.tools.colab --check  # are all notebooks current?

The setup cell must run before ``import helpers`` works in Colab, so its logic is inline
and uses the standard library only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from helpers.tools.series import DEEP_DIVES
from helpers.tools.series import notebooks as series_notebooks

SETUP_TAG = "colab-setup"
SERIES_DIR = "/content/trt-transformer-series"
BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"
_GITHUB = re.compile(r"^https://github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")
#: The badge as badge_markdown() writes it, on a line of its own; group 1 is the link.
_BADGE = re.compile(r"^\[!\[Open In Colab\]\([^)]*\)\]\(([^)]*)\)$\n?", re.MULTILINE)
_REPO_LINE = re.compile(r'^SERIES_REPO = "(.*)"', re.MULTILINE)

SETUP_INTRO = """## Run in Colab

In Colab, the next cell fetches the series and runs `colab_setup.sh`. That installs the
Torch-TensorRT release that matches Colab's torch, without replacing torch. The first run
downloads torch-tensorrt and TensorRT; later runs skip what is installed. If it asks for a
restart, use *Runtime > Restart session*, then run all cells again. Outside Colab the cell
does nothing."""

_SETUP_TEMPLATE = """\
# Colab only: fetch the series, install a matching torch-tensorrt. Elsewhere: nothing.
import importlib.metadata
import os
import subprocess
import sys

SERIES_REPO = "__REPO__"  # written by `python -m helpers.tools.colab --repo URL`
SERIES_DIR = "__SERIES_DIR__"
if "google.colab" in sys.modules:
    if not os.path.isdir(SERIES_DIR):
        if not SERIES_REPO:
            raise SystemExit(f"Set SERIES_REPO to the series' git URL or upload it to {SERIES_DIR}")
        subprocess.run(["git", "clone", "-q", "--depth=1", SERIES_REPO, SERIES_DIR], check=True)
    watched = [m for m in ("numpy", "pandas", "torch", "transformers") if m in sys.modules]
    loaded = {m: importlib.metadata.version(m) for m in watched}
    setup = subprocess.run(["bash", f"{SERIES_DIR}/colab_setup.sh"], capture_output=True, text=True)
    print(setup.stdout, setup.stderr, sep="\\n")
    if setup.returncode:
        print("Setup failed (see above): the notebook still runs, TensorRT steps are skipped.")
    if changed := [m for m, v in loaded.items() if importlib.metadata.version(m) != v]:
        raise SystemExit(f"{changed} changed on disk: Runtime > Restart session, then Run all")
    os.chdir(f"{SERIES_DIR}/__FOLDER__")
    sys.path.insert(0, SERIES_DIR)
"""


def setup_cell_source(
    repo: str = "", series_dir: str = SERIES_DIR, folder: str = "notebooks"
) -> str:
    """The setup cell's code for a given git URL (empty: the reader must set it); it ends
    in ``folder``, the notebook's own folder in the series."""
    if '"' in repo or '"' in series_dir:
        raise ValueError(f"a repository URL cannot contain quotes: {repo!r}")
    source = _SETUP_TEMPLATE.replace("__REPO__", repo).replace("__SERIES_DIR__", series_dir)
    return source.replace("__FOLDER__", folder).rstrip("\n")


def in_notebooks(path: Path) -> str:
    """'02_fp16_compile.ipynb' or 'deep-dives/02d_fp16_profiles.ipynb': the path under
    notebooks/, which the badge's address and the setup cell's folder name."""
    return f"{DEEP_DIVES}/{path.name}" if path.parent.name == DEEP_DIVES else path.name


def folder_of(path: Path) -> str:
    return str(Path("notebooks", in_notebooks(path)).parent)


def colab_url(repo: str, notebook: str, branch: str = "main") -> str:
    """The colab.research.google.com address that opens ``notebooks/<notebook>`` of a repo."""
    match = _GITHUB.match(repo)
    if not match:
        raise ValueError(
            f"Colab opens notebooks from GitHub only; expected https://github.com/OWNER/NAME, "
            f"got {repo!r}"
        )
    owner, name = match.groups()
    return f"https://colab.research.google.com/github/{owner}/{name}/blob/{branch}/notebooks/{notebook}"


def badge_markdown(repo: str, notebook: str, branch: str = "main") -> str:
    """The standard "Open in Colab" badge, linking to this notebook on GitHub."""
    return f"[![Open In Colab]({BADGE_IMAGE})]({colab_url(repo, notebook, branch)})"


def stamp_notebook(path: Path, repo: str = "", branch: str = "main") -> bool:
    """Write the badge (when ``repo`` is on GitHub) and the setup cell into one notebook.

    Inserts the setup cell, with its markdown introduction, before the parameters heading
    on the first run; later runs only update it. Returns True if the file changed.
    """
    text = path.read_text()
    notebook = json.loads(text)
    cells = notebook["cells"]
    setup = _find_setup_cell(cells)
    if setup is None:
        at = _parameters_heading(cells)
        cells[at:at] = [
            _markdown(SETUP_INTRO, "colab-setup-intro"),
            _code(setup_cell_source(repo, folder=folder_of(path)), [SETUP_TAG], "colab-setup"),
        ]
    else:
        cells[setup]["source"] = _lines(setup_cell_source(repo, folder=folder_of(path)))
        if setup and cells[setup - 1]["cell_type"] == "markdown":
            cells[setup - 1]["source"] = _lines(SETUP_INTRO)
    title = "".join(cells[0]["source"])
    title = _BADGE.sub("", title).rstrip("\n")
    if _GITHUB.match(repo):
        title = f"{title}\n\n{badge_markdown(repo, in_notebooks(path), branch)}"
    cells[0]["source"] = _lines(title)
    new_text = json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False)
    new_text += "\n" if text.endswith("\n") else ""  # keep the writer's convention
    if new_text == text:
        return False
    path.write_text(new_text)
    return True


def check_notebook(path: Path) -> list[str]:
    """What is missing or stale in one notebook's Colab cells (empty when all is well)."""
    cells = json.loads(path.read_text())["cells"]
    setup = _find_setup_cell(cells)
    if setup is None:
        return [f"{path.name}: no cell tagged {SETUP_TAG!r}"]
    source = "".join(cells[setup]["source"])
    repo_match = _REPO_LINE.search(source)
    repo = repo_match.group(1) if repo_match else ""
    problems = []
    if source != setup_cell_source(repo, folder=folder_of(path)):
        problems.append(f"{path.name}: the setup cell differs from the template")
    if not setup or "".join(cells[setup - 1]["source"]) != SETUP_INTRO:
        problems.append(f"{path.name}: the 'Run in Colab' text above the setup cell is stale")
    if setup > _parameters_heading(cells):
        problems.append(f"{path.name}: the setup cell must come before the parameters")
    title = "".join(cells[0]["source"])
    if _GITHUB.match(repo):
        on_github = colab_url(repo, path.name).split("/blob/")[0] + "/blob/"
        badge = _BADGE.search(title)
        ends = f"notebooks/{in_notebooks(path)}"
        if not (badge and badge[1].startswith(on_github) and badge[1].endswith(ends)):
            problems.append(f"{path.name}: the title cell lacks the badge for {repo}")
    return problems


def _find_setup_cell(cells: list[dict]) -> int | None:
    for index, cell in enumerate(cells):
        if SETUP_TAG in cell.get("metadata", {}).get("tags", []):
            return index
    return None


def _parameters_heading(cells: list[dict]) -> int:
    """Index of the markdown cell above the parameters cell (or of that cell itself)."""
    for index, cell in enumerate(cells):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            above = cells[index - 1] if index else None
            if above and above["cell_type"] == "markdown":
                return index - 1
            return index
    raise ValueError("notebook has no cell tagged 'parameters'")


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _markdown(text: str, cell_id: str) -> dict:
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": _lines(text)}


def _code(text: str, tags: list[str], cell_id: str) -> dict:
    return {
        "cell_type": "code",
        "id": cell_id,
        "execution_count": None,
        "metadata": {"tags": tags},
        "outputs": [],
        "source": _lines(text),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", help="the series' public git URL, e.g. https://github.com/O/N")
    parser.add_argument("--branch", default="main", help="branch the badges open (main)")
    parser.add_argument("--check", action="store_true", help="report stale notebooks, change none")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="repository root")
    args = parser.parse_args(argv)
    notebooks = series_notebooks(args.root)
    if not notebooks:
        parser.error(f"no numbered notebooks under {args.root / 'notebooks'}")
    if args.check:
        problems = [problem for path in notebooks for problem in check_notebook(path)]
        print("\n".join(problems) or f"{len(notebooks)} notebooks carry current Colab cells")
        return 1 if problems else 0
    repo = args.repo or ""
    if repo and not _GITHUB.match(repo):
        print(f"note: {repo} is not on GitHub, so no badge is written (Colab opens GitHub only)")
    for path in notebooks:
        print(f"{'updated' if stamp_notebook(path, repo, args.branch) else 'unchanged'}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
