import json

import pytest

from helpers.benchmark import PathResult
from helpers.environment import environment_report
from helpers.records import load_records, save_record, workload_tag
from helpers.report import build_report, main
from helpers.timing import LatencyStats


def _result(name, median):
    return PathResult(name, "fp32", "ok", latency=LatencyStats.from_samples([median] * 3, "t"))


def test_workload_tag_is_file_safe():
    assert workload_tag("FacebookAI/roberta-base", 16, 32) == "roberta-base_b16_s32"
    assert workload_tag("/tmp/my model/", 1, 8) == "my-model_b1_s8"


def test_record_round_trip_and_report(tmp_path):
    params = dict(model_name="roberta-base", batch_size=16, seq_len=32)
    env = environment_report("cpu")
    results = [
        _result("eager fp32", 10.0),
        _result("fast", 2.5),
        PathResult("trt", "fp16", "skipped", reason="no GPU"),
    ]
    path = save_record("02-test", params, env, results, str(tmp_path), model={"weights": "x"})
    assert path == tmp_path / "results" / "records" / "02-test_roberta-base_b16_s32.json"
    (record,) = load_records(path.parent)
    assert record["results"][1]["latency"]["median_ms"] == 2.5
    text = build_report([record])
    rows = {
        cells[2]: cells
        for line in text.splitlines()
        if line.startswith("|") and len(cells := [c.strip() for c in line.split("|")]) > 8
    }
    header = rows["path"]
    assert rows["fast"][header.index("x eager fp32")] == "4"  # 10 / 2.5, same record
    assert rows["trt"][header.index("status")] == "skipped: no GPU"
    assert env["torch"] in text


def test_report_command_writes_markdown(tmp_path, capsys):
    folder = tmp_path / "records"
    folder.mkdir()
    (folder / "a.json").write_text(
        json.dumps(
            {
                "notebook": "01",
                "created_utc": "2026-01-01T00:00:00+00:00",
                "parameters": {"model_name": "m", "batch_size": 1, "seq_len": 8},
                "environment": {
                    "device_name": "cpu",
                    "device": "cpu",
                    "torch": "2",
                    "torch_tensorrt": None,
                },
                "results": [],
            }
        )
    )
    assert main([str(folder), "--out", str(tmp_path / "R.md")]) == 0
    assert (tmp_path / "R.md").read_text().startswith("# Results")


def test_report_command_rejects_a_missing_folder(tmp_path):
    with pytest.raises(SystemExit):
        main([str(tmp_path / "missing")])


def test_test_runs_never_write_over_the_published_results(monkeypatch, tmp_path):
    from helpers.paths import TEST_OUTPUT_ENV, project_root, resolve_output_dir

    monkeypatch.setenv(TEST_OUTPUT_ENV, str(tmp_path))
    assert resolve_output_dir(".") == tmp_path
    assert resolve_output_dir("runs/x") == project_root() / "runs" / "x"
    monkeypatch.delenv(TEST_OUTPUT_ENV)
    assert resolve_output_dir(".") == project_root()
