"""Interactive views for readers who would rather explore than rerun.

Each widget wraps a plain function that returns a table, so the same numbers print in
headless runs (papermill, CI) and the widget only adds a control on top.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import torch

from helpers.benchmark import comparison_rows


def share_over_thresholds(
    diffs: dict[str, torch.Tensor], thresholds: Sequence[float]
) -> pd.DataFrame:
    """Percentage of elements with |diff| above each threshold, one column per path."""
    table = {}
    for name, diff in diffs.items():
        values = diff.detach().float().abs().flatten().cpu()
        table[name] = [100 * float((values > t).float().mean()) for t in thresholds]
    return pd.DataFrame(table, index=pd.Index(list(thresholds), name="threshold"))


def workloads(records: Sequence[dict]) -> list[str]:
    """'model, batch B x S on DEVICE' labels of the records that hold comparisons."""
    labels = []
    for record in records:
        if record.get("results"):
            label = _workload_label(record)
            if label not in labels:
                labels.append(label)
    return labels


def latency_table(records: Sequence[dict], workload: str) -> pd.DataFrame:
    """Every path measured at ``workload``, with speed-ups from its own run."""
    rows = [
        {"notebook": record["notebook"], **row}
        for record in records
        if record.get("results") and _workload_label(record) == workload
        for row in comparison_rows(record["results"])
    ]
    if not rows:
        raise ValueError(f"no records for {workload!r}; choose one of {workloads(records)}")
    columns = ["notebook", "path", "status", "p50_ms", "p90_ms", "speedup", "max_abs_diff"]
    return pd.DataFrame(rows).reindex(columns=columns)


def threshold_explorer(diffs: dict[str, torch.Tensor], threshold: float = 0.01):
    """A log-scale slider over the threshold, showing the share of elements above it."""
    import ipywidgets as widgets

    slider = widgets.FloatLogSlider(
        value=threshold, base=10, min=-5, max=0, step=0.1, description="threshold"
    )
    return widgets.interactive(
        lambda threshold: share_over_thresholds(diffs, [threshold]), threshold=slider
    )


def latency_explorer(records: Sequence[dict]):
    """A drop-down over the measured workloads, showing each one's latency table."""
    import ipywidgets as widgets

    options = workloads(records)
    if not options:
        raise ValueError("no records with measured paths to explore")
    picker = widgets.Dropdown(options=options, description="workload")
    return widgets.interactive(lambda workload: latency_table(records, workload), workload=picker)


def _workload_label(record: dict) -> str:
    p = record["parameters"]
    device = record["environment"].get("device_name", "?")
    return f"{p['model_name']}, batch {p['batch_size']} x {p['seq_len']} on {device}"
