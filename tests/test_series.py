"""The whole series, headless through papermill, on this machine (CPU in CI)."""

import json

import pytest

from helpers.paths import project_root
from helpers.records import load_records
from helpers.series import main, notebooks


def test_every_notebook_has_exactly_one_parameters_cell():
    for path in notebooks(project_root()):
        cells = json.loads(path.read_text())["cells"]
        tagged = [c for c in cells if "parameters" in c["metadata"].get("tags", [])]
        assert len(tagged) == 1, path.name


def test_unknown_notebook_number_is_a_clear_error():
    with pytest.raises(SystemExit, match="no notebook numbered 99"):
        notebooks(project_root(), "99")


@pytest.mark.parametrize("model_name", ["roberta-base", "distilroberta-base"])
def test_series_runs_headless_and_writes_records(tmp_path, model_name):
    code = main(["--fast", "--output-dir", str(tmp_path), "--model-name", model_name])
    status = json.loads((tmp_path / "results" / "run-status.json").read_text())
    assert code == 0, {k: v["error"] for k, v in status.items()}
    records = {r["notebook"]: r for r in load_records(tmp_path / "results" / "records")}
    assert set(records) == {
        "01-baseline",
        "02-fp16-compile",
        "03-fp32-compile",
        "04-accuracy-diff",
        "05-dynamic-shapes",
    }
    for record in records.values():
        assert record["parameters"]["model_name"] == model_name
        assert record["model"]["weights"].startswith("random")
    assert records["04-accuracy-diff"]["mask_bug_caught"] is True
    assert records["05-dynamic-shapes"]["independent_lengths_export_error"]
    for record in (records["02-fp16-compile"], records["03-fp32-compile"]):
        ok = [r for r in record["results"] if r["status"] == "ok"]
        assert {"eager fp32"} <= {r["name"] for r in ok}
        assert all(r["diff"] is not None for r in ok)
    assert "eager fp32" in (tmp_path / "results" / "RESULTS.md").read_text()
    assert len(list((tmp_path / "figures").glob("*.png"))) == 4

    # --resume skips notebooks that already succeeded with the same parameters.
    before = (tmp_path / "results" / "run-status.json").read_text()
    assert (
        main(["--fast", "--output-dir", str(tmp_path), "--model-name", model_name, "--resume"]) == 0
    )
    assert (tmp_path / "results" / "run-status.json").read_text() == before


@pytest.mark.parametrize("args", [["--batch-size", "0"], ["--seq-len", "-4"], ["--warmup", "-1"]])
def test_bad_numbers_are_rejected_before_any_notebook_runs(args, capsys):
    with pytest.raises(SystemExit):
        main(args)
    assert "must be at least" in capsys.readouterr().err
