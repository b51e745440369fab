"""The series runner on a small project of stub notebooks (the real ones run under nbval)."""

import json
import os
from pathlib import Path

import nbformat
import pytest

from helpers.records import load_records
from helpers.tools.series import build_parser, main, notebook_defaults

HELPERS = Path(__file__).resolve().parents[1] / "helpers"

PARAMETERS = """\
model_name = "roberta-base"  # model
batch_size = 16  # batch
seq_len = 32  # length
warmup = 10  # untimed calls
iterations = 100  # timed calls
max_seconds = 5.0  # cap
device = "auto"  # device
output_dir = "runs/latest"  # where records go"""

RECORD = """\
import helpers as h
p = dict(model_name=model_name, batch_size=batch_size, seq_len=seq_len, iterations=iterations)
h.save_record("{name}", parameters=p, environment={{}}, output_dir=output_dir)"""


def make_project(root: Path, bodies: dict[str, str]) -> Path:
    """A folder the runner takes for a project: notebooks/ with stubs, and helpers/."""
    (root / "notebooks").mkdir(parents=True)
    (root / "helpers").symlink_to(HELPERS)
    for name, body in bodies.items():
        notebook = nbformat.v4.new_notebook()
        notebook.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        parameters = nbformat.v4.new_code_cell(PARAMETERS)
        parameters.metadata["tags"] = ["parameters"]
        notebook.cells = [parameters, nbformat.v4.new_code_cell(body)]
        nbformat.write(notebook, root / "notebooks" / f"{name}.ipynb")
    return root


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = make_project(tmp_path, {f"0{n}_stub": RECORD.format(name=f"0{n}-stub") for n in (1, 2)})
    monkeypatch.chdir(root)
    return root


def test_a_run_writes_under_runs_latest_shows_its_parameters_and_leaves_no_variable(project):
    environment = dict(os.environ)
    assert main(["--iterations", "3"]) == 0
    assert dict(os.environ) == environment  # SERIES_RUN_ID and PYTHONPATH were the kernels'
    run = project / "runs" / "latest" / "results"
    records = load_records(run / "records")
    assert [r["notebook"] for r in records] == ["01-stub", "02-stub"]
    assert all(r["parameters"]["iterations"] == 3 for r in records)
    assert all(r["run_id"].endswith(" series") for r in records)
    assert "iterations=3" in (run / "RUN.md").read_text()
    executed = json.loads((run / "executed" / "01_stub_roberta-base_b16_s32.ipynb").read_text())
    tags = [c["metadata"].get("tags", []) for c in executed["cells"]]
    assert not any("injected-parameters" in t for t in tags)
    assert "iterations = 3  # set for this run; default 100\n" in "".join(
        executed["cells"][0]["source"]
    )
    assert not (project / "results").exists()  # nothing published


def test_publish_copies_the_run_into_results_and_runs_in_place(project):
    assert main(["--publish", "--only", "01"]) == 0
    assert (project / "results" / "records" / "01-stub_roberta-base_b16_s32.json").exists()
    assert (project / "results" / "RESULTS.md").exists()
    executed = json.loads((project / "notebooks" / "01_stub.ipynb").read_text())
    assert executed["cells"][1]["execution_count"] == 2  # executed in place


def test_a_later_publish_keeps_the_run_table_rows_of_earlier_ones(project):
    assert main(["--publish", "--only", "01"]) == 0
    (project / "runs").rename(project / "runs-elsewhere")  # a fresh machine: no run folder
    assert main(["--publish", "--only", "02"]) == 0
    table = (project / "results" / "RUN.md").read_text()
    assert "| 01_stub_roberta-base_b16_s32 | ok |" in table
    assert "| 02_stub_roberta-base_b16_s32 | ok |" in table


CLAIM = """\
import helpers as h
p = dict(model_name=model_name, batch_size=batch_size, seq_len=seq_len)
claim = dict(claim="roughly a 4x speedup", measured="2.81x", verdict="does not hold")
h.save_record("01-stub", parameters=p, environment={}, output_dir=output_dir, claims=[claim])"""


def test_publish_writes_the_claims_table_into_readme_and_results(tmp_path, monkeypatch):
    root = make_project(tmp_path, {"01_stub": CLAIM})
    (root / "README.md").write_text(
        "intro\n<!-- claims:start -->\nstale table\n<!-- claims:end -->\nend\n"
    )
    monkeypatch.chdir(root)
    assert main(["--publish"]) == 0
    readme = (root / "README.md").read_text()
    row = "| 01-stub | roberta-base, 16 x 32, ? | “roughly a 4x speedup” | 2.81x | does not hold |"
    assert row in readme and "stale table" not in readme and readme.endswith("end\n")
    assert row in (root / "results" / "RESULTS.md").read_text()


def test_claims_of_one_notebook_at_two_models_are_told_apart():
    from helpers.tools.report import claims_table

    claim = {"claim": "4x", "measured": "m", "verdict": "v"}
    records = [
        {
            "notebook": "08-llm-decoding",
            "parameters": {"model_name": name, "batch_size": 1, "seq_len": 256},
            "environment": {"device_name": "GPU"},
            "claims": [claim],
        }
        for name in ("meta-llama/Llama-3.2-1B", "meta-llama/Llama-3.1-8B")
    ]
    table = claims_table(records)
    assert "| 08-llm-decoding | Llama-3.2-1B, 1 x 256, GPU |" in table
    assert "| 08-llm-decoding | Llama-3.1-8B, 1 x 256, GPU |" in table


@pytest.mark.parametrize(
    "args, words",
    [
        (["--batch-size", "0"], "batch_size=0"),
        (["--seq-len", "4096", "--device", "cpu"], "seq_len"),
        (["--model-name", "./missing-model"], "no such folder"),
        (["--iterations", "-5"], "iterations=-5"),
        (["--publish", "--resume"], "--publish"),
    ],
)
def test_bad_arguments_stop_before_any_notebook(project, capsys, args, words):
    with pytest.raises(SystemExit):
        main(args)
    err = capsys.readouterr().err
    assert words in err
    assert not (project / "runs").exists()


def test_an_error_that_would_repeat_stops_the_run(tmp_path, monkeypatch):
    failing = "import helpers as h\nraise h.ParameterError('model and workload do not fit')"
    root = make_project(tmp_path, {"01_stub": failing, "02_stub": RECORD.format(name="02-stub")})
    monkeypatch.chdir(root)
    assert main([]) == 1
    status = json.loads((root / "runs" / "latest" / "results" / "run-status.json").read_text())
    assert list(status) == ["01_stub_roberta-base_b16_s32"]
    assert status["01_stub_roberta-base_b16_s32"]["error"].startswith("ParameterError")


def _record(notebook, rows, ceiling, model="roberta-base", **extra):
    environment = {"device_name": "GPU X"}
    parameters = {"model_name": model, "batch_size": 16, "seq_len": 32}
    results = [
        {
            "name": name,
            "status": "ok",
            "latency": dict(median_ms=ms, p90_ms=ms, p99_ms=ms, min_ms=ms, count=3, timer="t"),
        }
        for name, ms in rows.items()
    ]
    return dict(
        notebook=notebook,
        parameters=parameters,
        environment=environment,
        results=results,
        ceilings_tflops={"fp16": ceiling},
        **extra,
    )


def test_benchmarks_table_reads_fastest_path_engine_ratio_ceiling_and_baseline_spread():
    from helpers.tools.report import benchmarks_table

    records = [
        _record(
            "02-fp16-compile",
            {"eager fp32": 8.0, "fast": 1.0, "torch-tensorrt fp16": 3.0},
            ceiling=100.0,
            flops=50 * 10**9,
        ),
        _record("03-fp32-compile", {"eager fp32": 6.0}, ceiling=200.0),
        _record("06-quantization", {"eager fp32": 2.0}, ceiling=200.0, model="another-model"),
    ]
    row = benchmarks_table(records).splitlines()[-1]
    assert "| fast | 1.000 ms | 3.00x (torch-tensorrt fp16) | 50 % | 17 % |" in row
    assert "6-8 ms (2 notebooks)" in row  # not the other model's baseline
    assert row.endswith("| not met |")  # 1 ms is above 0.55 ms, and 3x is more than 1.1x
    records[0]["results"][1]["latency"]["median_ms"] = 0.5  # 0.5 ms, and the engine at 6x
    assert benchmarks_table(records).splitlines()[-1].endswith("| not met |")
    records[0]["results"][2]["latency"]["median_ms"] = 0.52  # the engine within 1.1x
    assert benchmarks_table(records).splitlines()[-1].endswith("| met |")


def test_benchmarks_table_copes_with_a_cpu_record_without_fp16_ceiling():
    from helpers.tools.report import benchmarks_table

    record = _record("02-fp16-compile", {"eager fp32": 8.0}, ceiling=1.0, flops=10**9)
    record["ceilings_tflops"] = {"fp32": 1.0}  # what a CPU measures
    assert "| fp32 | 8.000 ms | - | - | - |" in benchmarks_table([record]).replace(
        "eager fp32", "fp32"
    )


def test_a_notebook_runs_under_its_own_default_model_in_the_run_table():
    notebooks = Path(__file__).resolve().parents[1] / "notebooks"
    assert notebook_defaults(notebooks / "02_fp16_compile.ipynb")["model_name"] == "roberta-base"
    quantization = notebook_defaults(notebooks / "06_quantization.ipynb")
    assert quantization["model_name"] == "sentence-transformers/all-MiniLM-L6-v2"


def test_roofline_rows_scale_flops_with_the_batch_and_skip_untimed_points(tmp_path):
    from helpers.tools.roofline_plot import plot_roofline, roofline_rows

    record = _record("02-fp16-compile", {"eager fp32": 8.0}, ceiling=100.0, flops=16 * 10**9)
    record["batch_sweep"] = [
        {"path": "fast", "batch": 1, "status": "ok", "p50_ms": 1.0},
        {"path": "fast", "batch": 4, "status": "ok", "p50_ms": 2.0},
        {"path": "slow", "batch": 4, "status": "failed", "p50_ms": float("nan")},
    ]
    rows = roofline_rows(record)  # 1 GFLOP per sequence (16 GFLOP at batch 16)
    assert [(r["batch"], round(r["tflops"], 6)) for r in rows] == [(1, 1.0), (4, 2.0)]
    assert rows[1]["pct_of_fp16_ceiling"] == 2.0
    plot_roofline(record, tmp_path / "roofline.png")
    assert (tmp_path / "roofline.png").stat().st_size > 0


def test_every_option_of_the_runner_has_help_text():
    actions = [a for a in build_parser()._actions if a.option_strings]
    assert len(actions) >= 15 and all(a.help and len(a.help) > 10 for a in actions)
