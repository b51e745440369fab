import pytest
import torch

from helpers.paths import project_root
from helpers.records import load_records
from helpers.widgets import (
    latency_explorer,
    latency_table,
    share_over_thresholds,
    threshold_explorer,
    workloads,
)

PUBLISHED = load_records(project_root() / "results" / "records")


def test_share_over_thresholds_counts_elements():
    diffs = {"a": torch.tensor([0.001, 0.02, -0.5, 0.0])}
    table = share_over_thresholds(diffs, [0.01, 0.1, 1.0])
    assert table["a"].tolist() == [50.0, 25.0, 0.0]


def test_latency_table_reads_the_published_records():
    labels = workloads(PUBLISHED)
    assert any("batch 16 x 32" in label for label in labels)
    table = latency_table(PUBLISHED, next(label for label in labels if "batch 16 x 32" in label))
    eager = table[(table.path == "eager fp32") & (table.notebook == "02-fp16-compile")]
    assert eager.speedup.iloc[0] == pytest.approx(1.0)


def test_unknown_workload_is_a_clear_error():
    with pytest.raises(ValueError, match="choose one of"):
        latency_table(PUBLISHED, "no such workload")


def test_widgets_build_headless():
    slider = threshold_explorer({"a": torch.randn(100) * 0.01})
    assert slider.children[0].description == "threshold"
    picker = latency_explorer(PUBLISHED)
    assert len(picker.children[0].options) == len(workloads(PUBLISHED))
    with pytest.raises(ValueError):
        latency_explorer([])
