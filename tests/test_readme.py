"""Every command the README shows runs, as written, in a test here or in CI (.ci/run).

The runner's commands run on the real notebooks with papermill replaced by a recorder, so
each test sees which notebooks a command runs and with what (test_series.py runs the
runner through papermill on stub notebooks, and nbval runs every notebook at its
defaults). The papermill command runs through papermill's command line on a stub.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import torch

from helpers.records import number_of
from helpers.tools import series

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
CI = (ROOT / ".ci" / "run").read_text()


def readme_commands() -> list[str]:
    """The README's indented command lines; a line ending in a backslash joins the next."""
    commands, pending = [], ""
    for line in README.splitlines():
        if re.match(r"    \S", line):
            pending += line.strip().removesuffix("\\")
            if not line.endswith("\\"):
                commands.append(" ".join(shlex.split(pending, comments=True)))
                pending = ""
    return commands


def runner_commands() -> list[str]:
    """Each runner call of the README, as the arguments after the module name."""
    calls = [part.strip() for c in readme_commands() for part in c.split("&&")]
    prefix = "python -m helpers.tools.series"
    return [call.removeprefix(prefix).strip() for call in calls if call.startswith(prefix)]


#: Every notebook the runner finds: the core lessons ("02"), then the deep dives ("02d").
NUMBERS = [number_of(path) for path in series.notebooks(ROOT)]
ENCODERS = [n for n in NUMBERS if n[:2] <= "07"]
DECODERS = [n for n in NUMBERS if n[:2] >= "08"]
DEEP_DIVES = [n for n in NUMBERS if n.endswith("d")]
RUN = {"output_dir": "runs/latest"}
#: Each runner command of the README -> {notebook: what papermill gets}; None: refused here.
EXPECTED = {
    "": {n: RUN for n in ENCODERS + DECODERS},
    "--only 02,03 --batch-size 8 --seq-len 128": {
        n: {"batch_size": 8, "seq_len": 128, **RUN} for n in ("02", "03")
    },
    "--only deep-dives": {n: RUN for n in DEEP_DIVES},
    "--model-name bert-base-uncased --decoder-name meta-llama/Llama-3.2-1B": {
        **{n: {"model_name": "bert-base-uncased", **RUN} for n in ENCODERS},
        **{n: {"model_name": "meta-llama/Llama-3.2-1B", **RUN} for n in DECODERS},
    },
    "--only 08 -p new_tokens 16": {"08": {"new_tokens": 16, **RUN}},
    # on a CPU the emulation changes nothing the notebooks choose; it runs every notebook
    "--emulate t4 --output-dir results/t4-emulation": {
        n: {"output_dir": "results/t4-emulation"} for n in ENCODERS + DECODERS
    },
    "--resume": {},  # run after the first command: everything succeeded, nothing runs again
    "--publish": {n: {} for n in ENCODERS + DECODERS},  # in place, at the defaults
    "--publish --only 02,03 --batch-size 64 --seq-len 512": (
        {n: {"batch_size": 64, "seq_len": 512} for n in ("02", "03")}
        if torch.cuda.is_available()
        else None  # 32768 tokens per call: refused on a CPU, in one line
    ),
}


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    """A project with the real notebooks and helpers; papermill replaced by a recorder."""
    for name in ("notebooks", "helpers"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    ran = {}

    def execute(notebook, target, params, args):
        ran[number_of(notebook)] = params
        return ""  # no error

    monkeypatch.setattr(series, "execute", execute)
    monkeypatch.setattr(series, "publish_refusal", lambda: None)  # as on the GPU machine
    monkeypatch.setattr(series, "shrink_notebook_images", lambda path: None)  # real notebooks
    monkeypatch.setattr(series, "settle", lambda target, outcome: target)  # nor their copies
    before = {p: p.stat().st_mtime_ns for p in (ROOT / "notebooks").rglob("*.ipynb")}
    yield ran
    after = {p: p.stat().st_mtime_ns for p in (ROOT / "notebooks").rglob("*.ipynb")}
    assert after == before, "a recorded run wrote into the real notebooks"


#: README commands that run elsewhere, and where.
ELSEWHERE = {
    "python3 -m venv .venv": ".ci/run, first",
    ". .venv/bin/activate": ".ci/run, second",
    # .ci/run installs the same CPU build (torch==2.13.0) from this machine's wheel
    "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu": ".ci/run",
    "pip install -r requirements.txt -e .": ".ci/run, as the test command's first half",
    "python -m pytest --nbval-lax -n 2 --dist loadfile tests notebooks": (
        ".ci/run, the test command"
    ),
    "python -m helpers.tools.colab --repo https://github.com/OWNER/NAME": (
        "test_colab_cells.py::test_cli_check_exit_status"
    ),
}


def test_every_readme_command_is_run_by_a_test_or_by_ci():
    parts = {part.strip() for command in readme_commands() for part in command.split("&&")}
    here = {f"python -m helpers.tools.series {args}".strip() for args in EXPECTED}
    here |= {part for part in parts if part.startswith("python -m papermill")}  # run below
    assert parts - here - set(ELSEWHERE) == set()  # a new command in the README needs a test
    assert set(runner_commands()) == set(EXPECTED)  # and each runner command here is in it
    assert "pip install -q torch==2.13.0" in CI
    assert "python3 -m venv .venv\n. .venv/bin/activate\n" in CI
    assert '"--repo"' in (ROOT / "tests" / "test_colab_cells.py").read_text()


def test_the_readme_is_short_and_starts_with_its_set_up_commands():
    """Issue 42: at most 12 KiB, and both set-up commands within its first 40 lines."""
    assert len(README.encode()) <= 12 * 1024
    head = README.splitlines()[:40]
    for command in ("python -m helpers.tools.series", "python -m pytest --nbval-lax"):
        assert f"    pip install -r requirements.txt -e . && {command}" in "\n".join(head)


def test_the_cpu_torch_step_comes_before_the_setup_commands_and_ci_runs_the_test_command():
    commands = readme_commands()
    setup = [c for c in commands if c.startswith("pip install -r requirements.txt -e . &&")]
    assert len(setup) == 2  # one runs the series, one the tests
    cpu_torch = "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
    venv = "python3 -m venv .venv && . .venv/bin/activate"
    assert commands.index(venv) < commands.index(cpu_torch) < commands.index(setup[0])
    pattern = r"^    (pip install -r requirements.txt -e . && python -m pytest.*)$"  # .ci/run's sed
    assert re.findall(pattern, README, re.MULTILINE) == [setup[1]]
    assert (
        setup[1] == "pip install -r requirements.txt -e . && python -m pytest --nbval-lax -n 2 "
        "--dist loadfile tests notebooks"
    )


@pytest.mark.parametrize("command", list(EXPECTED))
def test_each_runner_command_of_the_readme_runs_the_notebooks_it_says(recorded, capsys, command):
    if command == "--resume":
        assert series.main([]) == 0
        recorded.clear()
    if EXPECTED[command] is None:
        with pytest.raises(SystemExit):
            series.main(shlex.split(command))
        assert "too slow for a CPU" in capsys.readouterr().err
        return
    assert series.main(shlex.split(command)) == 0
    assert recorded == EXPECTED[command]


#: Paths the README names that are not files of the repository, and what they are.
NOT_IN_THE_REPOSITORY = {
    "runs/": "what a run writes",
    "runs/latest": "what a run writes",
    "runs/latest/": "what a run writes",
    "results/executed/": "what a publish at another workload writes",
    "/content/trt-transformer-series": "Colab's copy of the series",
    "meta-llama/Llama-3.1-8B": "a hub id",
    "meta-llama/Llama-3.2-1B": "a hub id",
    "sentence-transformers/all-MiniLM-L6-v2": "a hub id",
}


def test_every_path_the_readme_names_is_in_the_repository():
    spans = re.findall(r"`([^`]+)`", README)  # `results/RUN.md`, `source .gpu/env.sh`
    quoted = [w.strip("\"'(),;") for span in spans for w in span.split() if "/" in w]
    linked = re.findall(r"\]\(([^)\s]+)\)", README)  # [RUN.md](results/RUN.md)
    quoted, linked = ([p for p in paths if "://" not in p] for paths in (quoted, linked))
    named = set(quoted + linked) - set(NOT_IN_THE_REPOSITORY)
    assert sorted(path for path in named if not (ROOT / path).exists()) == []


def test_the_readme_papermill_command_runs_as_written(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "runs").mkdir()
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    parameters = nbformat.v4.new_code_cell("batch_size = 16\nseq_len = 32")
    parameters.metadata["tags"] = ["parameters"]
    notebook.cells = [parameters, nbformat.v4.new_code_cell("print(batch_size * seq_len)")]
    nbformat.write(notebook, tmp_path / "notebooks" / "02_fp16_compile.ipynb")
    (command,) = [c for c in readme_commands() if c.startswith("python -m papermill")]
    run = subprocess.run(
        [sys.executable, *shlex.split(command)[1:]], cwd=tmp_path, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    executed = json.loads((tmp_path / "runs" / "02.ipynb").read_text())
    assert "".join(executed["cells"][-1]["outputs"][0]["text"]) == "1024\n"  # 8 x 128: numbers
