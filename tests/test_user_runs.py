"""A user's runs/ survives the test command, and a session that touches it fails.

Each test runs pytest, as the README's test command does (unit tests, then nbval on a
notebook), on a small project that holds a user's run and the repository's conftest.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"

#: A notebook that writes a record where its output_dir says, as every lesson does.
WRITES_A_RECORD = """\
from pathlib import Path

folder = Path(output_dir) if Path(output_dir).is_absolute() else Path.cwd().parent / output_dir
assert folder.parent.is_dir()  # what the lessons' parameter check asks of an output_dir
(folder / "results" / "records").mkdir(parents=True, exist_ok=True)
(folder / "results" / "records" / "01-stub.json").write_text("from the tests")"""

#: A unit test that writes a relative runs/ folder, as one test used to (runs/x).
WRITES_RUNS_X = """\
from pathlib import Path


def test_relative_output():
    Path("runs/x").mkdir(parents=True)
"""


def project_with_a_users_run(root: Path, test: str) -> Path:
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "conftest.py").symlink_to(CONFTEST)
    (root / "tests").mkdir()
    (root / "tests" / "test_example.py").write_text(test)
    (root / "notebooks").mkdir()
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    parameters = nbformat.v4.new_code_cell('output_dir = "runs/latest"')
    parameters.metadata["tags"] = ["parameters"]
    notebook.cells = [parameters, nbformat.v4.new_code_cell(WRITES_A_RECORD)]
    nbformat.write(notebook, root / "notebooks" / "01_stub.ipynb")
    record = root / "runs" / "latest" / "results" / "records" / "01-stub.json"
    record.parent.mkdir(parents=True)
    record.write_text("the user's own run")
    return record


def run_the_tests(root: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax"]
    return subprocess.run(
        [*command, "tests", "notebooks"], cwd=root, capture_output=True, text=True, timeout=120
    )


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_the_test_command_leaves_a_users_run_as_it_found_it(tmp_path):
    record = project_with_a_users_run(tmp_path, WRITES_RUNS_X)
    before = files_under(tmp_path / "runs")
    run = run_the_tests(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed" in run.stdout  # the unit test and both notebook cells ran
    assert record.read_text() == "the user's own run"
    assert files_under(tmp_path / "runs") == before  # no runs/x either


def test_a_session_that_touches_runs_or_leaks_a_variable_fails(tmp_path):
    stray = """\
import os
from pathlib import Path


def test_stray_writes():
    (Path(__file__).resolve().parents[1] / "runs" / "latest" / "stray.json").write_text("x")
    os.environ["SERIES_RUN_ID"] = "leaked"
"""
    project_with_a_users_run(tmp_path, stray)
    run = run_the_tests(tmp_path)
    assert run.returncode == 1
    assert "added latest/stray.json" in run.stdout
    assert "SERIES_RUN_ID left as 'leaked'" in run.stdout
