"""Where a published run of the core lessons spends its time, for notebooks/README.md.

Papermill writes each cell's duration into the executed notebook. Each cell is counted in
full under the first kind of work its source contains (a cell that builds an engine and
then checks it counts as a build), so the split is approximate; the time outside the cells
is the kernel's start and papermill's own work.

    python -m helpers.tools.lesson_times      # writes this table beside the lesson times
"""

from __future__ import annotations

import json
import re
from pathlib import Path

#: Kinds of work, each with the source pattern that marks its cells; the first match wins.
KINDS = {
    "setup: Python, torch, transformers, CUDA and the parameter check": r"h\.start_lesson\(",
    "fresh processes (cold starts, torchrun, a hang check)": (
        r"subprocess|run_torchrun|tp_run\(|cold_start\(|start_row\("
    ),
    # a call that builds them (get_cuda_ext(), or 06d's list of builders), not the word:
    # a cell that only names nvcc, or sets the cached extension to None, builds nothing
    "modelopt's CUDA kernels, built by nvcc once per machine": r"get_cuda_ext(_fp8)?(\(\)|\])",
    "ONNX export (07d)": r"torch\.onnx\.export\(",
    "a refit: new weights into a built engine (07d)": r"MutableTorchTensorRTModule\(",
    "TensorRT engines: builds, saves and loads": (
        r"torch_tensorrt\.(dynamo\.)?(compile|save|load)\(|compile_fp32\(|build_engine\(|\bbuild\("
    ),
    "torch.compile: Inductor's compile and first calls": (
        r"torch\.compile\(|StaticDecoder\(|expect_compiled\("
    ),
}
REST = "the rest: measurements, checks, tables and plots"
OUTSIDE = "outside the cells: kernel start and papermill"


def kind_of(source: str) -> str:
    """The first kind of work whose pattern the cell's source contains."""
    return next((kind for kind, pattern in KINDS.items() if re.search(pattern, source)), REST)


def profile(notebook: dict) -> dict[str, float]:
    """Seconds per kind of work in one executed notebook."""
    seconds = dict.fromkeys([*KINDS, REST, OUTSIDE], 0.0)
    for cell in notebook["cells"]:
        duration = cell.get("metadata", {}).get("papermill", {}).get("duration")
        if cell["cell_type"] == "code" and duration:
            seconds[kind_of("".join(cell["source"]))] += duration
    total = notebook["metadata"].get("papermill", {}).get("duration") or 0.0
    seconds[OUTSIDE] = max(0.0, total - sum(seconds.values()))
    return seconds


def profile_table(notebooks: list[Path], label: str = "the core lessons") -> str:
    """One row per kind of work: its seconds over ``notebooks``, its share, and where."""
    per_notebook = {
        path.name.split("_")[0]: profile(json.loads(path.read_text())) for path in notebooks
    }
    total = sum(sum(p.values()) for p in per_notebook.values())
    lines = [
        "| where the time went | seconds | share | notebooks (seconds) |",
        "| --- | --- | --- | --- |",
    ]
    for kind in [*KINDS, REST, OUTSIDE]:
        spent = sum(p[kind] for p in per_notebook.values())
        if not spent:  # a kind none of these notebooks does
            continue
        where = ", ".join(f"{n} ({p[kind]:.0f})" for n, p in per_notebook.items() if p[kind] >= 1)
        share = 100 * spent / total if total else 0.0
        lines.append(f"| {kind} | {spent:.0f} | {share:.0f} % | {where or '-'} |")
    lines.append(
        f"| **{label}** | **{total:.0f}** | 100 % | {len(per_notebook)} "
        f"notebook{'s' * (len(per_notebook) != 1)} |"
    )
    return "\n".join(lines)
