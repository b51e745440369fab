"""Fresh processes that time a start as a service sees it (notebooks 07 and 07d).

Each runs ``notebooks/scripts/cold_start.py`` in a new Python process. The launch is timed
here and the first output there, on the same wall clock, so "launch to first output"
includes Python's start, the imports and everything the mode prepares.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pandas as pd

from helpers.records import project_root

SCRIPT = project_root() / "notebooks" / "scripts" / "cold_start.py"


def cold_start(
    mode: str, path: str | os.PathLike, workload: tuple[str, int, int], **env: str
) -> dict:
    """One fresh process: its phases, launch to first output, and to exit.

    ``workload`` is (model name, batch, length); ``env`` adds variables for the child
    (``ENGINE_CACHE_DIR``, ``TORCHINDUCTOR_CACHE_DIR``, ``TRT_MODULE``, ``CUDA_GRAPH``).
    """
    model_name, batch, length = workload
    command = [sys.executable, str(SCRIPT), mode, str(path), model_name, str(batch), str(length)]
    python_path = os.pathsep.join([str(project_root()), os.environ.get("PYTHONPATH", "")])
    child_env = {**os.environ, **env, "PYTHONPATH": python_path}  # the child imports helpers
    launched_unix, start = time.time(), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=child_env, timeout=900)
    process_s = time.perf_counter() - start
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"{mode} failed: {last[:200]}")
    phases = json.loads(done.stdout.strip().splitlines()[-1])
    first_output_s = phases.pop("first_output_unix") - launched_unix
    return {**phases, "to_first_output_s": first_output_s, "to_exit_s": process_s}


def start_row(label: str, mode: str, path: str | os.PathLike, workload: tuple, **env: str) -> dict:
    """A table row for one start; a failing start is a row with its error, not the end."""
    try:
        return {"path": label, **cold_start(mode, path, workload, **env)}
    except Exception as error:  # noqa: BLE001 - the row shows it
        return {"path": label, "error": str(error)}


def starts_table(starts: list[dict]) -> pd.DataFrame:
    """The starts side by side; each compile's phase split is printed below it instead."""
    table = pd.DataFrame(starts).set_index("path")
    return table.drop(columns="compile_phases", errors="ignore").round(2)


def phase_lines(starts: list[dict]) -> str:
    """Each rebuild's ``compile_s`` split by phase, one line per start."""
    return "\n".join(f"{s['path']}: {s['compile_phases']}" for s in starts if "compile_phases" in s)
