"""The Colab badge and setup cell: stamped from one template, and doing what they say.

The setup cell is executed here in a subprocess that pretends to be Colab (a fake
``google.colab`` module), against a local git repository whose ``colab_setup.sh`` is a
stand-in, so the clone / setup / restart logic is exercised without a network.
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.records import project_root
from helpers.tools.colab import (
    SETUP_TAG,
    badge_markdown,
    check_notebook,
    colab_url,
    in_notebooks,
    main,
    setup_cell_source,
    stamp_notebook,
)
from helpers.tools.series import notebooks as series_notebooks

NOTEBOOKS = series_notebooks(project_root())
GITHUB_REPO = "https://github.com/example-org/trt-series"


def test_every_published_notebook_carries_current_colab_cells():
    listed = re.findall(
        r"\(((?:deep-dives/)?\d\dd?_\w+\.ipynb)\)",
        (project_root() / "notebooks/README.md").read_text(),
    )
    # the workshop table lists every lesson and deep dive
    assert sorted(listed) == sorted(in_notebooks(path) for path in NOTEBOOKS)
    problems = [problem for path in NOTEBOOKS for problem in check_notebook(path)]
    assert problems == []


def test_setup_cell_comes_first_and_only_once():
    for path in NOTEBOOKS:
        cells = json.loads(path.read_text())["cells"]
        tagged = [i for i, c in enumerate(cells) if SETUP_TAG in c["metadata"].get("tags", [])]
        parameters = [
            i for i, c in enumerate(cells) if "parameters" in c["metadata"].get("tags", [])
        ]
        assert len(tagged) == 1 and tagged[0] < parameters[0], path.name


def test_colab_url_opens_the_notebook_on_github():
    url = colab_url(GITHUB_REPO + ".git", "02_fp16_compile.ipynb", "dev")
    assert url == (
        "https://colab.research.google.com/github/example-org/trt-series/blob/dev/"
        "notebooks/02_fp16_compile.ipynb"
    )
    with pytest.raises(ValueError, match="GitHub only"):
        colab_url("https://gitlab.com/a/b", "x.ipynb")
    with pytest.raises(ValueError, match="quotes"):
        setup_cell_source('https://github.com/a/b"; import os')


def test_stamping_writes_badge_and_address_and_is_idempotent(tmp_path):
    notebook = tmp_path / NOTEBOOKS[1].name
    shutil.copy(NOTEBOOKS[1], notebook)

    assert stamp_notebook(notebook, GITHUB_REPO)
    cells = json.loads(notebook.read_text())["cells"]
    assert badge_markdown(GITHUB_REPO, notebook.name) in "".join(cells[0]["source"])
    assert f'SERIES_REPO = "{GITHUB_REPO}"' in "".join(
        next(c for c in cells if SETUP_TAG in c["metadata"].get("tags", []))["source"]
    )
    assert check_notebook(notebook) == []
    assert not stamp_notebook(notebook, GITHUB_REPO), "a second stamp must change nothing"
    assert stamp_notebook(notebook, GITHUB_REPO, branch="dev")
    assert check_notebook(notebook) == []  # any branch is a valid badge

    assert stamp_notebook(notebook, "")  # back to no address: the badge goes too
    assert "Open In Colab" not in "".join(json.loads(notebook.read_text())["cells"][0]["source"])
    assert notebook.read_text() == NOTEBOOKS[1].read_text()


def test_check_reports_a_missing_badge(tmp_path):
    notebook = tmp_path / NOTEBOOKS[0].name
    shutil.copy(NOTEBOOKS[0], notebook)
    stamp_notebook(notebook, GITHUB_REPO)
    data = json.loads(notebook.read_text())
    data["cells"][0]["source"] = ["# title only"]
    notebook.write_text(json.dumps(data))
    assert any("lacks the badge" in p for p in check_notebook(notebook))


def test_check_reports_a_stale_or_missing_setup_cell(tmp_path):
    notebook = tmp_path / NOTEBOOKS[0].name
    data = json.loads(NOTEBOOKS[0].read_text())
    setup = next(c for c in data["cells"] if SETUP_TAG in c["metadata"].get("tags", []))
    setup["source"].append("\nprint('edited by hand')")
    data["cells"][data["cells"].index(setup) - 1]["source"] = ["## Old instructions"]
    notebook.write_text(json.dumps(data))
    problems = check_notebook(notebook)
    assert any("differs from the template" in p for p in problems)
    assert any("text above the setup cell is stale" in p for p in problems)
    stamp_notebook(notebook)
    assert check_notebook(notebook) == []
    setup["metadata"]["tags"] = []
    notebook.write_text(json.dumps(data))
    assert any("no cell tagged" in p for p in check_notebook(notebook))


def test_cli_check_exit_status(tmp_path, capsys):
    assert main(["--check", "--root", str(project_root())]) == 0
    (tmp_path / "notebooks").mkdir()
    shutil.copy(NOTEBOOKS[0], tmp_path / "notebooks" / NOTEBOOKS[0].name)
    assert main(["--root", str(tmp_path), "--repo", GITHUB_REPO]) == 0
    assert main(["--check", "--root", str(tmp_path)]) == 0
    assert "current Colab cells" in capsys.readouterr().out


# --- executing the setup cell -------------------------------------------------------------


def _fake_series_repo(tmp_path: Path, setup_script: str) -> str:
    """A local git repository with a stand-in colab_setup.sh; returns its URL."""
    repo = tmp_path / "origin"
    (repo / "notebooks").mkdir(parents=True)
    (repo / "notebooks" / "01_first.ipynb").write_text("{}")
    (repo / "colab_setup.sh").write_text(setup_script)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "fake series"], check=True)
    return repo.as_uri()


def _run_setup_cell(source: str, tmp_path: Path, in_colab: bool = True, prelude: str = ""):
    script = tmp_path / "run_cell.py"
    script.write_text(
        "import os, sys, types\n"
        + ("sys.modules['google.colab'] = types.ModuleType('google.colab')\n" if in_colab else "")
        + prelude
        + f"exec(compile({source!r}, 'setup-cell', 'exec'))\n"
        + "print('CWD', os.getcwd())\nprint('PATH0', sys.path[0])\n"
    )
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )


def test_setup_cell_does_nothing_outside_colab(tmp_path):
    result = _run_setup_cell(setup_cell_source("", str(tmp_path / "series")), tmp_path, False)
    assert result.returncode == 0, result.stderr
    assert f"CWD {tmp_path}" in result.stdout
    assert not (tmp_path / "series").exists()


def test_setup_cell_without_an_address_says_what_to_set(tmp_path):
    result = _run_setup_cell(setup_cell_source("", str(tmp_path / "series")), tmp_path)
    assert result.returncode != 0
    assert "Set SERIES_REPO" in result.stderr
    assert "Traceback" not in result.stderr


def test_setup_cell_clones_runs_setup_and_enters_the_notebooks(tmp_path):
    url = _fake_series_repo(tmp_path, "echo fake setup ran\n")
    series = tmp_path / "series"
    result = _run_setup_cell(setup_cell_source(url, str(series)), tmp_path)
    assert result.returncode == 0, result.stderr
    assert "fake setup ran" in result.stdout
    assert f"CWD {series / 'notebooks'}" in result.stdout
    assert f"PATH0 {series}" in result.stdout
    # A second run (the reader reruns the cell) reuses the clone.
    again = _run_setup_cell(setup_cell_source(url, str(series)), tmp_path)
    assert again.returncode == 0 and "fake setup ran" in again.stdout


def test_setup_cell_reports_a_failed_setup_and_goes_on(tmp_path):
    url = _fake_series_repo(tmp_path, "echo no matching torch-tensorrt >&2\nexit 1\n")
    result = _run_setup_cell(setup_cell_source(url, str(tmp_path / "series")), tmp_path)
    assert result.returncode == 0, result.stderr
    assert "no matching torch-tensorrt" in result.stdout
    assert "Setup failed" in result.stdout


def test_setup_cell_asks_for_a_restart_when_a_loaded_package_changed(tmp_path):
    # The kernel has imported "numpy" 1.0 (a fake distribution first on sys.path); the
    # stand-in setup upgrades it on disk to 2.0, as pip would.
    site = tmp_path / "site"
    metadata = site / "numpy-1.0.dist-info" / "METADATA"
    metadata.parent.mkdir(parents=True)
    metadata.write_text("Metadata-Version: 2.1\nName: numpy\nVersion: 1.0\n")
    upgrade = f"printf 'Metadata-Version: 2.1\\nName: numpy\\nVersion: 2.0\\n' > '{metadata}'\n"
    url = _fake_series_repo(tmp_path, upgrade)
    prelude = f"sys.path.insert(0, {str(site)!r})\nimport numpy\n"
    result = _run_setup_cell(
        setup_cell_source(url, str(tmp_path / "series")), tmp_path, True, prelude
    )
    assert result.returncode != 0
    assert "['numpy'] changed on disk" in result.stderr
    assert "Restart session" in result.stderr


def test_a_deep_dive_opens_and_runs_in_its_own_folder(tmp_path):
    deep = next(path for path in NOTEBOOKS if path.parent.name == "deep-dives")
    notebook = tmp_path / "notebooks" / "deep-dives" / deep.name
    notebook.parent.mkdir(parents=True)
    shutil.copy(deep, notebook)
    assert stamp_notebook(notebook, GITHUB_REPO)
    cells = json.loads(notebook.read_text())["cells"]
    setup = "".join(next(c for c in cells if SETUP_TAG in c["metadata"].get("tags", []))["source"])
    assert 'os.chdir(f"{SERIES_DIR}/notebooks/deep-dives")' in setup
    assert f"/blob/main/notebooks/deep-dives/{deep.name})" in "".join(cells[0]["source"])
    assert check_notebook(notebook) == []
