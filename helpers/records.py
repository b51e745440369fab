"""Where a run's outputs go, and the JSON record each notebook leaves behind.

Records are what the results table and the tests read back: numbers are never typed into
the README by hand. Relative output folders start at the project root, whichever folder a
notebook runs in.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from helpers.offline import canonical_name


def project_root(start: Path | None = None) -> Path:
    """The nearest folder at or above ``start`` holding both notebooks/ and helpers/."""
    start = (start or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if (folder / "notebooks").is_dir() and (folder / "helpers").is_dir():
            return folder
    return start


def output_path(output_dir: str | Path, *parts: str) -> Path:
    """``<output_dir>/<parts...>``, relative folders taken from the project root."""
    folder = Path(output_dir).expanduser()
    folder = folder if folder.is_absolute() else project_root() / folder
    path = folder.joinpath(*parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def number_of(name: str | Path) -> str:
    """'02' or '02d' (a deep dive): the number that starts a notebook's, record's, run's or
    figure's name ('02_fp16_compile.ipynb', '02d-profiles', '02-latency_roberta-base_b16_s32')."""
    match = re.match(r"\d\dd?", Path(name).name)
    if match is None:
        raise ValueError(f"{name!r} does not start with a notebook number")
    return match.group()


def workload_tag(model_name: str, batch_size: int, seq_len: int) -> str:
    """'roberta-base_b16_s32': names files so that workloads do not collide."""
    model = re.sub(r"[^A-Za-z0-9.-]+", "-", canonical_name(model_name))
    return f"{model}_b{batch_size}_s{seq_len}"


def _jsonable(value):
    if dataclasses.is_dataclass(value):
        return _jsonable(dataclasses.asdict(value))
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    if isinstance(value, float | int | str | bool) or value is None:
        return value
    return str(value)


def save_record(
    notebook: str,
    *,
    parameters: dict,
    environment: dict,
    results: Sequence = (),
    output_dir: str | Path,
    **extra,
) -> Path:
    """Write ``<output_dir>/results/records/<notebook>_<workload>.json``; return its path.

    ``run_id`` comes from the series runner (``SERIES_RUN_ID``), so that a table built
    from records can tell runs apart; a notebook run by hand is its own run.
    """
    from helpers.parameters import ADJUSTED  # values the notebook changed for its machine

    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    record = {
        "notebook": notebook,
        "created_utc": created,
        "run_id": os.environ.get("SERIES_RUN_ID", f"interactive {created}"),
        "parameters": parameters,
        "adjusted_parameters": dict(ADJUSTED),
        "environment": environment,
        "results": list(results),
        **extra,
    }
    tag = workload_tag(parameters["model_name"], parameters["batch_size"], parameters["seq_len"])
    path = output_path(output_dir, "results", "records", f"{notebook}_{tag}.json")
    path.write_text(json.dumps(_jsonable(record), indent=1) + "\n")
    return path


def load_records(folder: str | Path) -> list[dict]:
    """All records in ``folder``, sorted by file name (notebook, then workload)."""
    return [json.loads(p.read_text()) for p in sorted(Path(folder).glob("*.json"))]


def run_median(output_dir: str | Path, notebook: str, tag: str, path: str) -> float | None:
    """A path's median from another notebook's record of this same series run, else None.

    Notebooks of one run that time the same path should agree; the verdicts use this to
    flag a baseline that moved between them.
    """
    record_path = output_path(output_dir, "results", "records", f"{notebook}_{tag}.json")
    run_id = os.environ.get("SERIES_RUN_ID")
    record = json.loads(record_path.read_text()) if run_id and record_path.exists() else {}
    return path_median(record, path) if run_id and record.get("run_id") == run_id else None


def path_median(record: dict, path: str) -> float | None:
    """The median latency a record kept for ``path`` (a result's name), else None."""
    found = (r for r in record.get("results") or [] if r.get("name") == path and r.get("latency"))
    return next((r["latency"]["median_ms"] for r in found), None)
