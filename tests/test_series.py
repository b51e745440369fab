"""The series runner on a small project of stub notebooks (the real ones run under nbval)."""

import json
import os
from pathlib import Path

import nbformat
import pytest

from helpers.records import load_records
from helpers.tools import series
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
def gpu_machine(monkeypatch):
    """A machine that may publish: a CUDA GPU and a usable Torch-TensorRT, as far as the
    runner's check is concerned (the stub notebooks need neither)."""
    monkeypatch.setattr(series, "publish_refusal", lambda: None)


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = make_project(tmp_path, {f"0{n}_stub": RECORD.format(name=f"0{n}-stub") for n in (1, 2)})
    monkeypatch.chdir(root)
    return root


def test_invocations_that_share_a_run_id_are_one_run(project, monkeypatch):
    """--only parts on one machine: the checks across notebooks see one run."""
    monkeypatch.setenv("SERIES_RUN_ID", "2026-12-03 20:00 UTC series")
    assert main(["--only", "01"]) == 0 and main(["--only", "02"]) == 0
    records = load_records(project / "runs" / "latest" / "results" / "records")
    assert {r["run_id"] for r in records} == {"2026-12-03 20:00 UTC series"}


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
    status = json.loads((run / "run-status.json").read_text())
    assert status["01_stub_roberta-base_b16_s32"]["host_dispatch_us"] > 0  # the host's speed


def test_publish_copies_the_run_into_results_and_runs_in_place(project, gpu_machine):
    assert main(["--publish", "--only", "01"]) == 0
    assert (project / "results" / "records" / "01-stub_roberta-base_b16_s32.json").exists()
    assert (project / "results" / "RESULTS.md").exists()
    executed = json.loads((project / "notebooks" / "01_stub.ipynb").read_text())
    assert executed["cells"][1]["execution_count"] == 2  # executed in place


def test_a_later_publish_keeps_the_run_table_rows_of_earlier_ones(project, gpu_machine):
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


def test_publish_writes_the_claims_table_into_readme_and_results(
    tmp_path, monkeypatch, gpu_machine
):
    root = make_project(tmp_path, {"01_stub": CLAIM})
    (root / "README.md").write_text(
        "intro\n<!-- claims:start -->\nstale table\n<!-- claims:end -->\nend\n"
    )
    monkeypatch.chdir(root)
    assert main(["--publish"]) == 0
    readme = (root / "README.md").read_text()
    short = "| 01-roberta-base, 16 x 32 | “roughly a 4x speedup” | 2.81x | does not hold |"
    assert short in readme and "stale table" not in readme and readme.endswith("end\n")
    row = "| 01-stub | roberta-base, 16 x 32, ? | “roughly a 4x speedup” | 2.81x | does not hold |"
    assert row in (root / "results" / "RESULTS.md").read_text()


def test_shortened_cuts_at_a_clause_or_a_word_never_inside_brackets():
    from helpers.tools.report import shortened

    assert shortened("holds for FP16", 12) == "holds for FP16"
    clause = "cold first call 338.5 ms, warm median 7 ms: the cold call is 47.8x the median"
    assert shortened(clause, 9) == "cold first call 338.5 ms, warm median 7 ms …"
    assert shortened(clause, 11) == "cold first call 338.5 ms, warm median 7 ms …"
    assert shortened(clause, 11, clauses=False) == (
        "cold first call 338.5 ms, warm median 7 ms: the cold …"
    )
    assert shortened("a b (c d e) f", 4) == "a b …"  # not inside the parenthesis
    assert shortened("built ['fp16', 'int8 weight-only', 'fp8']", 9, chars=20) == "built …"
    assert shortened("one two three four five", 10, chars=12) == "one two …"


def test_the_readme_table_is_short_and_names_each_core_claim_once():
    from helpers.tools.report import short_claims_table

    long = "word " * 40
    claim = {"claim": long, "measured": long, "verdict": long}

    def record(notebook, model, **claimed):
        return {
            "notebook": notebook,
            "parameters": {"model_name": model, "batch_size": 1, "seq_len": 256},
            "environment": {"device_name": "GPU"},
            "claims": [{**claim, **claimed}],
        }

    records = [
        record("08-llm-decoding", "meta-llama/Llama-3.1-8B", quote=False),
        record("08-llm-decoding", "meta-llama/Llama-3.2-1B"),  # a second workload: RESULTS.md
        record("08d-weight-only", "meta-llama/Llama-3.2-1B"),  # a deep dive: RESULTS.md
    ]
    table = short_claims_table(records)
    rows = [line for line in table.splitlines() if line.startswith("| 08")]
    words = ("word " * 12).split()
    cells = [" ".join(words[:n]) + " …" for n in (7, 9, 12)]
    assert rows == [f"| 08-Llama-3.1-8B, 1 x 256 | {' | '.join(cells)} |"]
    assert "All ran on GPU." in table and "results/RESULTS.md" in table
    assert all(len(cell) <= 80 for line in table.splitlines()[2:] for cell in line.split("|"))


def test_a_claim_quoted_from_another_source_names_it_in_the_tables():
    from helpers.tools.report import quoted

    assert quoted({"claim": "4x"}) == "“4x”"
    assert quoted({"claim": "fast", "source": "the docs"}) == "the docs: “fast”"
    assert quoted({"claim": "our words", "quote": False, "source": "the docs"}) == "our words"


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
    figure = plot_roofline(record, tmp_path / "roofline.png")
    assert (tmp_path / "roofline.png").stat().st_size > 0
    assert "EMULATED" not in figure.axes[0].get_title()
    record["environment"]["emulated"] = "EMULATED: this run keeps to a T4's limits"
    assert figure.axes[0].get_title() != plot_roofline(record).axes[0].get_title()
    assert plot_roofline(record).axes[0].get_title().endswith("(EMULATED T4 limits)")


def test_every_option_of_the_runner_has_help_text():
    actions = [a for a in build_parser()._actions if a.option_strings]
    assert len(actions) >= 15 and all(a.help and len(a.help) > 10 for a in actions)


def files_and_times(*paths: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``paths``: (content, modification time in ns)."""
    files = [f for p in paths for f in ([p] if p.is_file() else sorted(p.rglob("*")))]
    return {str(f): (f.read_bytes(), f.stat().st_mtime_ns) for f in files if f.is_file()}


@pytest.mark.parametrize(
    "gpu, trt, words",
    [
        (False, True, "no CUDA GPU is visible"),
        (True, False, "Torch-TensorRT cannot run here (torch_tensorrt is not installed)"),
    ],
)
def test_publish_refuses_without_a_gpu_or_tensorrt_and_changes_no_file(
    project, monkeypatch, capsys, gpu, trt, words
):
    from helpers.trt_compat import TensorRTStatus

    monkeypatch.setattr(series.torch.cuda, "is_available", lambda: gpu)
    status = TensorRTStatus(trt, "ready" if trt else "torch_tensorrt is not installed")
    monkeypatch.setattr(series, "tensorrt_status", lambda: status)
    (project / "README.md").write_text("<!-- claims:start -->\nold\n<!-- claims:end -->\n")
    for name in ("results/RUN.md", "results/records/01-stub_roberta-base_b16_s32.json"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("published earlier")
    (project / "figures").mkdir()
    (project / "figures" / "02-roofline_roberta-base_b16_s32.png").write_bytes(b"png")
    published = ["notebooks", "results", "figures", "README.md"]
    before = files_and_times(*(project / name for name in published))
    with pytest.raises(SystemExit) as stopped:
        main(["--publish"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2
    assert err.count("\n") == 1 and "--publish needs an NVIDIA GPU" in err and words in err, err
    assert files_and_times(*(project / name for name in published)) == before
    assert not (project / "runs").exists()  # nothing ran


def partial_then_ctrl_c(input_path, output_path, **kwargs):
    """papermill as Ctrl-C leaves it: the notebook written up to a cell, then interrupted."""
    Path(output_path).write_text(Path(input_path).read_text())
    raise KeyboardInterrupt


def test_ctrl_c_keeps_the_good_run_says_how_to_resume_in_one_line_and_resume_reruns_it(
    project, monkeypatch, capsys
):
    import papermill

    assert main(["--only", "01"]) == 0  # the good run
    run = project / "runs" / "latest" / "results"
    good = run / "executed" / "01_stub_roberta-base_b16_s32.ipynb"
    before = good.read_text()
    capsys.readouterr()
    with monkeypatch.context() as patched:
        patched.setattr(papermill, "execute_notebook", partial_then_ctrl_c)
        assert main([]) == 130
    out, err = capsys.readouterr()
    assert err.count("\n") == 1, err  # one line, no traceback
    assert "interrupted 01_stub" in err and err.strip().endswith("series --resume")
    assert "01_stub_roberta-base_b16_s32.interrupted.ipynb" in err
    assert good.read_text() == before  # the good run stays
    assert (run / "executed" / "01_stub_roberta-base_b16_s32.interrupted.ipynb").exists()
    status = json.loads((run / "run-status.json").read_text())
    entry = status["01_stub_roberta-base_b16_s32"]
    assert entry["status"] == "ok" and entry["attempt"]["status"] == "interrupted"
    assert "02_stub_roberta-base_b16_s32" not in status  # never started
    row = "| 01_stub_roberta-base_b16_s32, later run | interrupted |"
    assert row in (run / "RUN.md").read_text()
    ran = []
    monkeypatch.setattr(series, "execute", lambda notebook, *rest: ran.append(notebook.name) or "")
    assert main(["--resume"]) == 0
    assert ran == ["01_stub.ipynb", "02_stub.ipynb"]  # the interrupted one runs again
    status = json.loads((run / "run-status.json").read_text())
    assert "attempt" not in status["01_stub_roberta-base_b16_s32"]
    assert not (run / "executed" / "01_stub_roberta-base_b16_s32.interrupted.ipynb").exists()


FAILS = "raise RuntimeError('a cell that fails')"


def break_the_stub(root: Path, name: str, body: str = FAILS) -> None:
    notebook = nbformat.read(root / "notebooks" / f"{name}.ipynb", as_version=4)
    notebook.cells[1].source = body
    nbformat.write(notebook, root / "notebooks" / f"{name}.ipynb")


def test_a_failed_rerun_keeps_the_good_notebook_and_its_ok_status_beside_it(project):
    assert main(["--only", "01"]) == 0
    run = project / "runs" / "latest" / "results"
    good = run / "executed" / "01_stub_roberta-base_b16_s32.ipynb"
    before = good.read_text()
    break_the_stub(project, "01_stub")
    assert main(["--only", "01"]) == 1
    assert good.read_text() == before
    failed = run / "executed" / "01_stub_roberta-base_b16_s32.failed.ipynb"
    assert "a cell that fails" in failed.read_text()
    entry = json.loads((run / "run-status.json").read_text())["01_stub_roberta-base_b16_s32"]
    assert entry["status"] == "ok" and entry["notebook"].endswith("b16_s32.ipynb")
    attempt = entry["attempt"]
    assert attempt["status"] == "failed" and "a cell that fails" in attempt["error"]
    table = (run / "RUN.md").read_text()
    assert "| 01_stub_roberta-base_b16_s32 | ok |" in table
    assert "| 01_stub_roberta-base_b16_s32, later run | failed |" in table


def test_a_failed_publish_keeps_the_published_notebook_record_and_status(
    project, monkeypatch, gpu_machine
):
    import papermill

    def write(input_path, output_path, mark):
        text = Path(input_path).read_text()
        Path(output_path).write_text(text.replace("import helpers", f"import helpers  # {mark}"))

    def finishes(input_path, output_path, **kwargs):
        write(input_path, output_path, "run")

    def fails(input_path, output_path, **kwargs):
        write(input_path, output_path, "bad")
        raise RuntimeError("the engine did not build")

    monkeypatch.setattr(papermill, "execute_notebook", finishes)
    assert main(["--publish", "--only", "01"]) == 0
    published = (project / "notebooks" / "01_stub.ipynb").read_text()
    assert "# run" in published  # replaced in place: the run finished
    monkeypatch.setattr(papermill, "execute_notebook", fails)
    assert main(["--publish", "--only", "01"]) == 1
    assert (project / "notebooks" / "01_stub.ipynb").read_text() == published
    assert "# bad" in (project / "notebooks" / "01_stub.failed.ipynb").read_text()
    assert [p.name for p in series.notebooks(project)] == ["01_stub.ipynb", "02_stub.ipynb"]
    entry = json.loads((project / "results" / "run-status.json").read_text())
    entry = entry["01_stub_roberta-base_b16_s32"]
    assert entry["status"] == "ok" and entry["attempt"]["status"] == "failed"
    assert entry["attempt"]["notebook"] == "notebooks/01_stub.failed.ipynb"
    assert "later run | failed" in (project / "results" / "RUN.md").read_text()


NOISY_RECORD = RECORD.replace("output_dir=output_dir)", "output_dir=output_dir, noisy=NOISE)")


def test_a_run_its_own_rule_calls_noisy_is_kept_beside_and_never_published(project, gpu_machine):
    assert main(["--publish", "--only", "01,02"]) == 0
    records = project / "results" / "records"
    record = records / "01-stub_roberta-base_b16_s32.json"
    before = record.read_text()
    run_records = project / "runs" / "latest" / "results" / "records"
    stale = json.loads((run_records / "02-stub_roberta-base_b16_s32.json").read_text())
    stale["noisy"] = ["an old run of another notebook"]  # neither this notebook nor this run
    (run_records / "02-stub_roberta-base_b16_s32.json").write_text(json.dumps(stale))
    notebook = nbformat.read(project / "notebooks" / "01_stub.ipynb", as_version=4)
    figure = 'open(h.output_path(output_dir, "figures", "01-x_stub.png"), "w").write("f")\n'
    notebook.cells[1].source = (
        'NOISE = ["rounds 3.1-4.6 ms"]\n' + NOISY_RECORD.format(name="01-stub") + "\n" + figure
    )
    nbformat.write(notebook, project / "notebooks" / "01_stub.ipynb")
    assert main(["--publish", "--only", "01"]) == 1
    assert "rounds 3.1-4.6 ms" in (project / "notebooks" / "01_stub.noisy.ipynb").read_text()
    assert record.read_text() == before  # the published record stays
    assert not (project / "figures" / "01-x_stub.png").exists()  # nor is its figure published
    assert "old run" not in json.dumps(
        json.loads((project / "results" / "run-status.json").read_text())
    )
    entry = json.loads((project / "results" / "run-status.json").read_text())
    attempt = entry["01_stub_roberta-base_b16_s32"]["attempt"]
    assert attempt["status"] == "noisy" and "rounds 3.1-4.6 ms" in attempt["error"]
    kept = run_records / "01-stub_roberta-base_b16_s32.json"
    assert "noisy" not in json.loads(kept.read_text()) or not json.loads(kept.read_text())["noisy"]
    assert "rounds" in (run_records / "noisy" / "01-stub_roberta-base_b16_s32.json").read_text()
    other = 'NOISE = ["another notebook\'s"]\n' + NOISY_RECORD.format(name="02-stub")
    quiet = "NOISE = []\n" + NOISY_RECORD.format(name="01-stub")
    notebook.cells[1].source = quiet + "\n" + other  # a record of 02's is not 01's noise
    nbformat.write(notebook, project / "notebooks" / "01_stub.ipynb")
    assert main(["--publish", "--only", "01"]) == 0  # a quiet rerun publishes
    assert not (project / "notebooks" / "01_stub.noisy.ipynb").exists()
    assert not (run_records / "noisy" / "01-stub_roberta-base_b16_s32.json").exists()


EAGER_RECORD = """\
import helpers as h
from helpers.results import PathResult
from helpers.timing import LatencyStats
p = dict(model_name=model_name, batch_size=batch_size, seq_len=seq_len)
eager = PathResult("eager fp32", "ok", latency=LatencyStats.from_samples([MS, MS], "t"))
env = {{"device": DEVICE}}
h.save_record("{name}", parameters=p, environment=env, output_dir=output_dir, results=[eager])"""


def eager_stubs(root: Path, medians: dict[str, float], device: str = "cuda") -> None:
    for name, ms in medians.items():
        notebook = nbformat.read(root / "notebooks" / f"{name}.ipynb", as_version=4)
        stub = f"MS, DEVICE = {ms}, {device!r}\n"
        notebook.cells[1].source = stub + EAGER_RECORD.format(name=name.replace("_", "-"))
        nbformat.write(notebook, root / "notebooks" / f"{name}.ipynb")


def test_eager_fp32_beyond_the_rule_between_notebooks_of_one_run_is_never_published(
    tmp_path, monkeypatch, gpu_machine
):
    """A host slow for the run's first minutes: 01 and 02 agree, 03 read faster."""
    root = make_project(tmp_path, {f"0{n}_stub": "" for n in (1, 2, 3)})
    monkeypatch.chdir(root)
    monkeypatch.setenv("SERIES_RUN_ID", "one run")
    eager_stubs(root, {"01_stub": 7.8, "02_stub": 6.7, "03_stub": 5.0})
    assert main(["--publish"]) == 1

    def entry(n: int) -> dict:
        status = json.loads((root / "results" / "run-status.json").read_text())
        return status[f"0{n}_stub_roberta-base_b16_s32"]

    assert [entry(n)["status"] for n in (1, 2, 3)] == ["ok", "ok", "noisy"]
    assert "eager fp32 5.000 ms here, 7.800 ms in notebook 01 of this run" in entry(3)["error"]
    assert "6.700 ms in notebook 02" in entry(3)["error"]  # every notebook, not only 01
    records = root / "results" / "records"
    assert not (records / "03-stub_roberta-base_b16_s32.json").exists()
    published = (records / "01-stub_roberta-base_b16_s32.json").read_text()
    eager_stubs(root, {"01_stub": 5.0})  # a rerun of 01 must agree with 02 too
    assert main(["--publish", "--only", "01"]) == 1
    assert "6.700 ms in notebook 02 of this run" in entry(1)["attempt"]["error"]
    assert (records / "01-stub_roberta-base_b16_s32.json").read_text() == published
    assert "under a new SERIES_RUN_ID" in entry(1)["attempt"]["error"]  # the way out
    monkeypatch.setenv("SERIES_RUN_ID", "another run")  # another run's records do not count
    assert main(["--publish", "--only", "03"]) == 0
    monkeypatch.setenv("SERIES_RUN_ID", "a CPU run")  # a CPU's timings are not the lesson
    eager_stubs(root, {"01_stub": 7.8, "02_stub": 3.0}, device="cpu")
    assert main(["--only", "01,02"]) == 0


def test_a_noisy_emulated_run_leaves_the_committed_records_as_they_were(project):
    folder = "results/t4-emulation"
    assert main(["--emulate", "t4", "--output-dir", folder, "--only", "01"]) == 0
    record = project / folder / "results" / "records" / "01-stub_roberta-base_b16_s32.json"
    good = record.read_text()
    notebook = nbformat.read(project / "notebooks" / "01_stub.ipynb", as_version=4)
    notebook.cells[1].source = 'NOISE = ["drift"]\n' + NOISY_RECORD.format(name="01-stub")
    nbformat.write(notebook, project / "notebooks" / "01_stub.ipynb")
    assert main(["--emulate", "t4", "--output-dir", folder, "--only", "01"]) == 1
    assert record.read_text() == good


@pytest.mark.parametrize(
    "args, words",
    [
        (["--only", "08", "-p", "new_tokens", "0"], "notebook 08: ParameterError: new_tokens=0"),
        (["--only", "09", "-p", "num_requests", "0"], "notebook 09: ParameterError: num_requests"),
        (["--only", "09", "-p", "prompt_median", "2000"], "notebook 09: ParameterError: prompt"),
        (["--only", "10", "-p", "gpus", "3"], "notebook 10: ParameterError: gpus=3"),
        (["--only", "08", "-p", "size", "huge"], "notebook 08: ParameterError: size='huge'"),
    ],
)
def test_a_bad_notebook_only_value_is_refused_before_any_kernel_naming_the_notebook(
    monkeypatch, capsys, args, words
):
    def no_kernel(*args):
        raise AssertionError("a notebook started")

    monkeypatch.setattr(series, "execute", no_kernel)
    with pytest.raises(SystemExit) as stopped:
        main(args)
    err = capsys.readouterr().err
    assert stopped.value.code == 2
    assert err.count("\n") == 1 and words in err, err
    assert "would repeat" not in err


def test_only_an_error_of_every_notebook_is_said_to_repeat_in_every_notebook(capsys):
    with pytest.raises(SystemExit):
        main(["--batch-size", "0"])  # each of the ten notebooks would stop on it
    err = capsys.readouterr().err
    assert "batch_size=0" in err and "stopped: this error would repeat in every notebook" in err
    with pytest.raises(SystemExit):
        main(["--only", "08,10", "-p", "new_tokens", "1"])  # both notebooks to run
    assert "would repeat in every notebook (08, 10)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--model-name", "./missing-model"])  # the encoders' model: 08-10 would run
    err = capsys.readouterr().err
    # the encoders' core lessons, then any of their deep dives (02d, ...)
    assert "notebook 01, 02, 03, 04, 05, 06, 07" in err and "would repeat" not in err


@pytest.mark.parametrize(
    "error, other, repeats",
    [
        ("ParameterError: too slow", {}, True),
        ("ParameterError: too slow", {"batch_size": 64}, False),
        ("ModelNotAvailableError: no such folder", {"batch_size": 64}, True),
        ("ModelNotAvailableError: no such folder", {"model_name": "bert-base-uncased"}, False),
        ("RuntimeError: a cell failed", {}, False),
    ],
)
def test_a_set_up_error_stops_the_run_only_when_every_notebook_left_shares_its_values(
    error, other, repeats
):
    values = {"model_name": "roberta-base", "batch_size": 16, "seq_len": 32, "device": "auto"}
    left = [values, {**values, **other}]
    assert series.repeats_everywhere(error, values, left) is repeats
    assert not series.repeats_everywhere(error, values, [])  # the last notebook: no one left


def test_only_the_figures_of_the_notebooks_that_ran_are_drawn(tmp_path, monkeypatch):
    root = make_project(tmp_path, {"01_stub": "", "02_stub": ""})  # they do not run here
    monkeypatch.chdir(root)
    run = root / "runs" / "latest"
    ran = []
    monkeypatch.setattr(series, "execute", lambda notebook, *rest: ran.append(notebook) or "")
    (run / "results" / "records").mkdir(parents=True)
    record = _record("02-fp16-compile", {"eager fp32": 8.0}, ceiling=100.0, flops=16 * 10**9)
    record["batch_sweep"] = [{"path": "fast", "batch": 1, "status": "ok", "p50_ms": 1.0}]
    record.update(created_utc="2026-12-01T00:00:00+00:00", run_id="an earlier run")
    name = "02-fp16-compile_roberta-base_b16_s32"
    (run / "results" / "records" / f"{name}.json").write_text(json.dumps(record))
    assert main(["--only", "01"]) == 0  # an earlier 02 record lies in the run folder
    assert not (run / "figures" / "02-roofline_roberta-base_b16_s32.png").exists()
    assert main(["--only", "02"]) == 0  # 02 "ran" (its record is the earlier one)
    assert (run / "figures" / "02-roofline_roberta-base_b16_s32.png").exists()


PROFILES = """\
import torch
from torch.profiler import profile
with profile() as trace:
    torch.ones(3).sum()
print("profiled")"""


def test_a_notebook_run_prints_no_kernel_or_profiler_noise(tmp_path, monkeypatch, capfd):
    root = make_project(tmp_path, {"01_stub": PROFILES})
    monkeypatch.chdir(root)
    monkeypatch.delenv("KINETO_LOG_LEVEL", raising=False)
    assert main([]) == 0
    out, err = capfd.readouterr()  # the kernel's own stderr included
    assert "without encryption" not in err and "USDT" not in out + err, err
    executed = root / "runs/latest/results/executed/01_stub_roberta-base_b16_s32.ipynb"
    assert "profiled" in executed.read_text() and "USDT" not in executed.read_text()


@pytest.mark.parametrize(
    "argv, left, publish, command",
    [
        (["--only", "02,03"], ["03_x.ipynb"], False, "--only 02,03 --resume"),
        (["--resume"], ["03_x.ipynb"], False, "--resume"),
        (["--publish", "--only", "02,03"], ["03_x.ipynb"], True, "--publish --only 03"),
        (["--publish"], ["08_x.ipynb", "09_y.ipynb"], True, "--publish --only 08,09"),
    ],
)
def test_an_interrupted_run_says_the_command_that_goes_on(argv, left, publish, command):
    said = series.resume_command(argv, [Path(name) for name in left], publish)
    assert said == f"python -m helpers.tools.series {command}"


EMULATION_CHECK = """\
import os
assert os.environ.get("SERIES_EMULATE") == "t4", "the kernel does not see the emulation"
"""


def test_an_emulated_run_reaches_its_kernels_and_its_run_table_says_so(project, monkeypatch):
    monkeypatch.delenv("SERIES_EMULATE", raising=False)
    (project / "notebooks" / "01_stub.ipynb").unlink()
    make_project(project / "emu", {"01_stub": EMULATION_CHECK + RECORD.format(name="01-stub")})
    (project / "notebooks" / "01_stub.ipynb").symlink_to(project / "emu/notebooks/01_stub.ipynb")
    assert main(["--only", "01", "--emulate", "t4", "--output-dir", "runs/t4"]) == 0
    assert "SERIES_EMULATE" not in os.environ  # the caller's environment is put back
    table = (project / "runs" / "t4" / "results" / "RUN.md").read_text()
    assert "Rows marked EMULATED kept to a T4's limits" in table
    assert "| EMULATED T4: 01_stub_roberta-base_b16_s32 | ok |" in table
    assert "| peak GPU GiB | GPU busy |" in table
    assert "../figures/" not in table and "(RESULTS.md)" not in table  # neither is committed


def test_an_emulated_run_is_never_published(project, gpu_machine, capsys):
    with pytest.raises(SystemExit):
        main(["--publish", "--emulate", "t4"])
    assert "never published" in capsys.readouterr().err
    assert not (project / "runs").exists()


def test_an_emulated_runs_notebooks_keep_no_images_but_each_cells_seconds(tmp_path):
    from helpers.tools.notebook_run import lighten

    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("plot()")
    cell.metadata["papermill"] = {"duration": 1.53, "start_time": "2026-12-07T15:48:13"}
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data", data={"image/png": "iVBOR", "text/plain": "<Figure>"}
        )
    ]
    notebook.cells = [cell]
    path = tmp_path / "08.ipynb"
    nbformat.write(notebook, path)
    lighten(path)
    kept = json.loads(path.read_text())["cells"][0]
    assert list(kept["outputs"][0]["data"]) == ["text/plain"]
    assert kept["metadata"]["papermill"] == {"duration": 1.5}  # where a T4's time goes


def test_a_value_the_notebook_changed_for_its_machine_is_marked_in_the_parameters_cell(tmp_path):
    from helpers.tools.notebook_run import note_adjusted

    notebook = nbformat.v4.new_notebook()
    parameters = nbformat.v4.new_code_cell(
        "sweep_batches = [1, 8]  # sizes\nseq_len = 256  # prompt; ran with 32 here (an old run)\n"
        "new_tokens = (  # ran with 16 here (the tiny model)\n    32  # tokens\n)\n"
    )
    parameters.metadata["tags"] = ["parameters"]
    setup = nbformat.v4.new_code_cell("h.adjust(...)")
    setup.outputs = [
        nbformat.v4.new_output(
            "stream",
            name="stdout",
            text="sweep_batches: [1, 8] -> [1, 2] (a small GPU (15 GiB))  [emulated T4 limits]\n",
        )
    ]
    notebook.cells = [parameters, setup]
    path = tmp_path / "08.ipynb"
    nbformat.write(notebook, path)
    note_adjusted(path)
    note_adjusted(path)  # a second pass changes nothing
    source = "".join(json.loads(path.read_text())["cells"][0]["source"])
    assert source == (  # an earlier run's notes are gone, wherever they were
        "sweep_batches = [1, 8]  # sizes; ran with [1, 2] here (a small GPU (15 GiB))\n"
        "seq_len = 256  # prompt\n"
        "new_tokens = (\n    32  # tokens\n)\n"
    )


def test_a_value_set_for_the_run_replaces_a_wrapped_assignment_whole():
    from helpers.tools.notebook_run import set_values

    source = (
        'device = "auto"  # "auto", "cuda" or "cpu"\n'
        "output_dir = (\n"
        '    "runs/latest"  # records go here\n'
        ")\n"
        "seed = 0  # the mix\n"
    )
    changed = "".join(set_values(source, {"output_dir": "runs/t4", "seed": 1}))
    assert changed == (
        'device = "auto"  # "auto", "cuda" or "cpu"\n'
        "output_dir = 'runs/t4'  # set for this run; default \"runs/latest\"\n"
        "seed = 1  # set for this run; default 0\n"
    )
    compile(changed, "parameters", "exec")  # still Python


def test_a_notebook_that_shrank_its_workload_is_listed_with_what_it_ran(tmp_path, monkeypatch):
    """10 on CPU processes runs prompt 32 where 128 was asked: RUN.md says so on its row."""
    shrink = "seq_len = 8  # this machine's workload\n" + RECORD.format(name="01-stub")
    monkeypatch.chdir(
        make_project(tmp_path, {"01_stub": shrink, "02_stub": RECORD.format(name="02-stub")})
    )
    assert main([]) == 0
    table = (tmp_path / "runs" / "latest" / "results" / "RUN.md").read_text()
    assert "| 01_stub_roberta-base_b16_s32 (ran as roberta-base_b16_s8) | ok |" in table
    assert "| 02_stub_roberta-base_b16_s32 | ok |" in table  # ran as asked: no note


@pytest.mark.parametrize("folder", ["results/records", "results/t4-emulation/results/records"])
def test_the_committed_records_of_one_run_agree_on_eager_fp32(folder):
    """The runner's rule across one run's notebooks, held by what is committed, a record
    published by hand included."""
    from helpers.tools.notebook_run import eager_fp32_ms, record_workload_tag

    by_run: dict[tuple, dict[str, float]] = {}
    for path in sorted((HELPERS.parent / folder).glob("*.json")):
        record = json.loads(path.read_text())
        if (ms := eager_fp32_ms(record)) is not None:
            key = (record.get("run_id"), record_workload_tag(record))
            by_run.setdefault(key, {})[path.name] = ms
    assert by_run  # the folder holds such records
    for key, medians in by_run.items():
        assert max(medians.values()) / min(medians.values()) <= 1.3, (key, medians)


def test_a_kernel_that_did_not_start_is_started_once_more_and_a_second_failure_is_kept(
    project, monkeypatch, capsys
):
    import papermill

    calls = []

    def dies_then_runs(input_path, output_path, **kwargs):
        calls.append(output_path)
        if len(calls) == 1:  # as jupyter_client says when another process took its port
            raise RuntimeError("Kernel died before replying to kernel_info")
        Path(output_path).write_text(Path(input_path).read_text())

    monkeypatch.setattr(papermill, "execute_notebook", dies_then_runs)
    assert main(["--only", "01"]) == 0
    assert len(calls) == 2 and "its kernel did not start" in capsys.readouterr().out

    def always_dies(input_path, output_path, **kwargs):
        calls.append(output_path)
        raise RuntimeError(f"Kernel died before replying to kernel_info (start {len(calls)})")

    calls.clear()
    monkeypatch.setattr(papermill, "execute_notebook", always_dies)
    assert main(["--only", "01"]) == 1
    assert len(calls) == 2  # once more, not forever
    entry = json.loads((project / "runs" / "latest" / "results" / "run-status.json").read_text())
    assert "kernel_info (start 2)" in entry["01_stub_roberta-base_b16_s32"]["attempt"]["error"]


def test_a_cell_that_failed_is_never_run_again_whatever_its_message(project, monkeypatch):
    import papermill

    calls = []

    def fails(input_path, output_path, **kwargs):
        calls.append(output_path)
        Path(output_path).write_text(Path(input_path).read_text())  # the cells that ran
        raise papermill.PapermillExecutionError(
            cell_index=1, exec_count=1, source="x", ename="RuntimeError",
            evalue="Kernel died before replying to kernel_info", traceback=[],
        )  # fmt: skip

    monkeypatch.setattr(papermill, "execute_notebook", fails)
    assert main(["--only", "01"]) == 1
    assert len(calls) == 1  # a cell ran: its own words do not make it a kernel that never started
