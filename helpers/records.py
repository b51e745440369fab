"""One JSON record per notebook run: parameters, environment, measurements.

Records are what the results table and the tests read back; numbers are never typed
into the README by hand.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

from helpers.models import canonical_name
from helpers.paths import resolve_output_dir


def workload_tag(model_name: str, batch_size: int, seq_len: int) -> str:
    """'roberta-base_b16_s32': names files so runs of other workloads do not collide."""
    model = re.sub(r"[^A-Za-z0-9.-]+", "-", canonical_name(model_name))
    return f"{model}_b{batch_size}_s{seq_len}"


def _jsonable(value):
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    if isinstance(value, float | int | str | bool) or value is None:
        return value
    return str(value)


def save_record(
    notebook: str,
    parameters: dict,
    environment: dict,
    results: list | None = None,
    output_dir: str = ".",
    **extra,
) -> Path:
    """Write ``<output_dir>/results/records/<notebook>_<workload>.json`` and return its path."""
    record = {
        "notebook": notebook,
        "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "parameters": parameters,
        "environment": environment,
        "results": results or [],
        **extra,
    }
    tag = workload_tag(parameters["model_name"], parameters["batch_size"], parameters["seq_len"])
    folder = resolve_output_dir(output_dir) / "results" / "records"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{notebook}_{tag}.json"
    path.write_text(json.dumps(_jsonable(record), indent=1, sort_keys=False) + "\n")
    return path


def load_records(folder: str | Path) -> list[dict]:
    """All records in ``folder``, sorted by file name (notebook, then workload)."""
    return [json.loads(p.read_text()) for p in sorted(Path(folder).glob("*.json"))]
