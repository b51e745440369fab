"""The test command leaves the user's runs/ as it found it, and leaves no variable behind.

Unit tests run from a temporary view of the project (every entry of the checkout but
runs/), so a relative ``runs/...`` lands there. The notebooks nbval runs get an
``output_dir`` in a temporary folder, set after their parameters cell as papermill would
inject it. A session that changed runs/ or the runner's variables fails, saying what changed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

#: What the series runner sets for its kernels; a test that leaks one mislabels later runs.
RUNNER_VARIABLES = ("SERIES_RUN_ID", "PYTHONPATH", "KINETO_LOG_LEVEL")
SCRATCH = pytest.StashKey[Path]()  # the session's temporary folder
RUNS = pytest.StashKey[dict]()  # runs/ as the session found it
VARIABLES = pytest.StashKey[dict]()  # RUNNER_VARIABLES as the session found them
#: A series run that failed or was interrupted, kept beside a notebook: not a lesson to test.
collect_ignore_glob = [
    f"notebooks/{folder}*.{end}.ipynb"
    for folder in ("", "deep-dives/")
    for end in ("running", "failed", "interrupted")
]


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``folder``: (size, modification time in ns)."""
    if not folder.exists():
        return {}
    paths = [folder, *folder.rglob("*")]
    return {str(p.relative_to(folder)): (p.lstat().st_size, p.lstat().st_mtime_ns) for p in paths}


def changes(before: dict, after: dict) -> list[str]:
    """'added x', 'changed y', 'removed z' between two snapshots."""
    added = [f"added {p}" for p in after.keys() - before.keys()]
    removed = [f"removed {p}" for p in before.keys() - after.keys()]
    changed = [f"changed {p}" for p in before.keys() & after.keys() if before[p] != after[p]]
    return sorted(added + removed + changed)


def pytest_configure(config: pytest.Config) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="series-tests-"))
    view = scratch / "project"
    view.mkdir()
    (scratch / "nbval").mkdir()  # the notebooks' output_dir parent: their check wants it
    for entry in config.rootpath.iterdir():
        if entry.name != "runs":
            (view / entry.name).symlink_to(entry)
    config.stash[SCRATCH] = scratch
    config.stash[RUNS] = snapshot(config.rootpath / "runs")
    config.stash[VARIABLES] = {name: os.environ.get(name) for name in RUNNER_VARIABLES}


#: Fewer timed calls under nbval: its checked cells never depend on how many calls were
#: timed, and on a CPU the timing loops are most of a notebook's time (08's decoded tokens
#: too: its tiny model decodes every token of every path several times).
QUICK_TIMING = {"warmup": 2, "iterations": 10, "max_seconds": 1.0, "new_tokens": 16}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Point each notebook nbval runs at a temporary output_dir, after its parameters cell,
    and cap its timed calls (QUICK_TIMING) where it has those parameters."""
    for item in items:
        cell = getattr(item, "cell", None)  # nbval's cell items carry their notebook cell
        if cell is not None and "parameters" in cell.get("metadata", {}).get("tags", []):
            folder = config.stash[SCRATCH] / "nbval" / Path(str(item.fspath)).stem
            quick = [
                f"{name} = min({name}, {most!r})  # capped by the tests: fewer timed calls\n"
                for name, most in QUICK_TIMING.items()
                if f"\n{name} = " in f"\n{cell.source}"
            ]
            cell.source += f"\noutput_dir = {str(folder)!r}  # set by the tests: not runs/\n"
            cell.source += "".join(quick)


@pytest.fixture(autouse=True)
def in_a_temporary_project(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """Each test starts in the project's temporary view: relative outputs stay out of runs/."""
    monkeypatch.chdir(request.config.stash[SCRATCH] / "project")


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    problems = changes(config.stash[RUNS], snapshot(config.rootpath / "runs"))
    variables = {name: os.environ.get(name) for name in RUNNER_VARIABLES}
    problems += [
        f"{name} left as {value!r}"
        for name, value in variables.items()
        if value != config.stash[VARIABLES][name]
    ]
    if problems:
        print(f"\nthe tests changed the user's runs/ or environment: {'; '.join(problems)}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    shutil.rmtree(config.stash[SCRATCH], ignore_errors=True)
