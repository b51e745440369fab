"""Run the notebook series headless with papermill, then write the results table.

    python -m helpers.tools.series                         # every notebook -> runs/latest/
    python -m helpers.tools.series --only 02,03 --batch-size 8 --seq-len 128
    python -m helpers.tools.series --model-name bert-base-uncased --decoder-name Llama-3.2-1B
    python -m helpers.tools.series --only 08 -p sweep_batches "[1, 8]"
    python -m helpers.tools.series --publish               # the one command that publishes

A run writes executed notebooks, records, figures, RESULTS.md and RUN.md under its run
folder and never touches the published files. ``--publish`` runs the notebooks at their
own defaults in place (or, with a workload option, into results/executed/) and copies the
run's records and figures into results/ and figures/. Every value is checked against the
notebooks it goes to before the first one starts.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import NoReturn
from unittest import mock

from helpers.errors import SeriesError
from helpers.parameters import check_parameters
from helpers.records import load_records, output_path, project_root, workload_tag
from helpers.tools import roofline_plot
from helpers.tools.report import build_report, with_claims

#: Notebooks that decode with a causal LM (--decoder-name); the others run an encoder.
DECODER_NOTEBOOKS = ("08", "09", "10")
#: Each option that sets a parameter: (parameter, the kind of notebook it goes to or None).
OPTIONS = {
    "--model-name": ("model_name", "encoder"),
    "--decoder-name": ("model_name", "decoder"),
    "--batch-size": ("batch_size", None),
    "--seq-len": ("seq_len", None),
    "--warmup": ("warmup", None),
    "--iterations": ("iterations", None),
    "--max-seconds": ("max_seconds", None),
    "--device": ("device", None),
}
#: What the runner checks before any notebook starts, where a notebook does not say.
KIND_DEFAULTS = {
    "encoder": dict(model_name="roberta-base", batch_size=16, seq_len=32),
    "decoder": dict(model_name="meta-llama/Llama-3.2-1B", batch_size=1, seq_len=32),
}
#: Errors that would repeat in every notebook: the run stops at the first one.
STOP_ON = ("ParameterError", "ModelNotAvailableError", "DeviceUnavailableError")


def notebooks(root: Path, only: str | None = None) -> list[Path]:
    """The numbered notebooks, optionally only those whose number is in ``only``."""
    found = sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if only:
        wanted = {n.strip().zfill(2) for n in only.split(",") if n.strip()}
        unknown = wanted - {p.name[:2] for p in found}
        if unknown:
            stop(f"--only: no notebook numbered {', '.join(sorted(unknown))} in {root}")
        found = [p for p in found if p.name[:2] in wanted]
    return found


def kind_of(notebook: Path) -> str:
    return "decoder" if notebook.name[:2] in DECODER_NOTEBOOKS else "encoder"


def stop(message: str) -> NoReturn:
    """One line on stderr, no traceback: what to change (exit status 2, as argparse's)."""
    print(f"series: {message}", file=sys.stderr)
    raise SystemExit(2)


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        stop(f"{message} (--help lists the options)")


def build_parser() -> Parser:
    parser = Parser(
        prog="python -m helpers.tools.series",
        description=__doc__.splitlines()[0],
        epilog="Each notebook gets only the parameters its parameters cell has; one it lacks "
        "is refused. Each notebook's own defaults apply to the rest.",
    )
    add = parser.add_argument
    add("--output-dir", help="run folder (default runs/latest)")
    add("--only", help="comma-separated notebook numbers, e.g. 02,03 (default: all)")
    add(
        "--model-name",
        help="encoder of notebooks 01-07: hub id or local folder (offline: "
        "roberta-base, distilroberta-base, bert-base-uncased, all-MiniLM-L6-v2)",
    )
    add(
        "--decoder-name",
        help="causal LM of notebooks 08-10: hub id or local folder (offline: "
        "Llama-3.2-1B, Llama-3.1-8B)",
    )
    add(
        "--batch-size",
        type=int,
        help="sequences per batch (defaults: 16 for 01-07 and 09, 1 for 08 and 10)",
    )
    add(
        "--seq-len",
        type=int,
        help="tokens per sequence: the padded length for 01-07, the prompt for 08-10",
    )
    add("--warmup", type=int, help="untimed calls before timing (notebooks 01-08)")
    add("--iterations", type=int, help="timed calls per measurement (notebooks 01-08)")
    add(
        "--max-seconds",
        type=float,
        help="cap in seconds on each warm-up and timing phase (notebooks 01-08)",
    )
    add("--device", choices=["auto", "cpu", "cuda"], help="auto: the GPU if there is one")
    add(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help='any other parameter of the notebooks run, e.g. -p sweep_batches "[1, 8]"; '
        "VALUE is read as a Python literal, else as text",
    )
    add(
        "--resume",
        action="store_true",
        help="skip notebooks that succeeded with the same parameters",
    )
    add(
        "--publish",
        action="store_true",
        help="run at the notebooks' defaults and publish "
        "into results/ and figures/ (GPU machines; see the README)",
    )
    add("--kernel", default="python3", help="Jupyter kernel name (default python3)")
    add("--timeout", type=int, default=3600, help="seconds allowed per cell (default 3600)")
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.publish and (args.output_dir or args.resume):
        parser.error("--publish runs every notebook into runs/latest: drop --output-dir/--resume")
    return args


def given_values(args: argparse.Namespace) -> dict[str, tuple[str, object, str | None]]:
    """Each value the user gave: option -> (parameter, value, kind of notebook or None)."""
    given = {}
    for option, (name, kind) in OPTIONS.items():
        value = getattr(args, option[2:].replace("-", "_"))
        if value is not None:
            given[option] = (name, value, kind)
    options = {name: option for option, (name, _) in OPTIONS.items()}
    options.update(model_name="--model-name (01-07) or --decoder-name (08-10)")
    options.update(output_dir="--output-dir")
    for name, text in args.parameter:
        if name in options:
            stop(f"-p {name}: give it as {options[name]}")
        given[f"-p {name}"] = (name, literal(text), None)
    return given


def literal(text: str):
    """'[1, 8]' -> [1, 8], '0.5' -> 0.5; anything that is not a Python literal stays text."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def notebook_defaults(path: Path) -> dict:
    """The literal values of a notebook's parameters cell (06 defaults to another model)."""
    notebook = json.loads(path.read_text())
    cell = next(c for c in notebook["cells"] if "parameters" in c["metadata"].get("tags", []))
    return literal_assignments("".join(cell["source"]))


def literal_assignments(source: str) -> dict:
    """``name = literal`` lines of a cell, as a dict."""
    values = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = ast.literal_eval(node.value)
    return values


def same_type(value, default) -> bool:
    """Whether ``value`` can stand where ``default`` stands: an int for a float, a list of
    the default's item type for a list, True/False only for a bool."""
    if isinstance(default, float) and not isinstance(value, bool):
        return isinstance(value, int | float)
    if isinstance(default, list) and isinstance(value, list):
        return not default or all(same_type(item, default[0]) for item in value)
    return type(value) is type(default)


def numbers(paths: list[Path], sep: str = ", ") -> str:
    return sep.join(p.name[:2] for p in paths)


def type_name(default) -> str:
    """'int', 'str', 'list of int': what a notebook's default asks for."""
    if isinstance(default, list) and default:
        return f"list of {type(default[0]).__name__}"
    return type(default).__name__


def check_fit(option: str, name: str, value, targets: list[Path], takers: list[Path], defaults):
    """Refuse a value that a notebook it goes to lacks, or of another type than its default."""
    lacking = [p for p in targets if name not in defaults[p]]
    if lacking and not takers:
        stop(f"{option}: no notebook has a parameter {name}")
    if lacking:
        stop(
            f"{option}: {name} is not a parameter of notebook {numbers(lacking)}, only of "
            f"{numbers(takers)}: choose those with --only {numbers(takers, ',')}"
        )
    for path in targets:
        default = defaults[path][name]
        if not same_type(value, default):
            stop(
                f"{option} {value!r}: notebook {path.name[:2]} takes a {type_name(default)}, "
                f"like its default {default!r}"
            )


def plan(args: argparse.Namespace, root: Path, output_dir: str | None) -> list[tuple[Path, dict]]:
    """Each notebook to run with what papermill injects into it; a bad value stops the run.

    A value goes to the selected notebooks (for a model, those of its kind), and each of
    them must have it, with the type of its default, before any notebook starts.
    """
    every = notebooks(root)
    defaults = {path: notebook_defaults(path) for path in every}
    selected = notebooks(root, args.only)
    given = given_values(args)
    for option, (name, value, kind) in given.items():
        takers = [p for p in every if kind in (None, kind_of(p)) and name in defaults[p]]
        targets = [p for p in selected if kind in (None, kind_of(p))]
        if not targets:
            stop(f"{option} sets the {kind} of notebooks {numbers(takers)}: none is selected")
        check_fit(option, name, value, targets, takers, defaults)
    jobs = []
    for path in selected:
        params = {n: v for n, v, kind in given.values() if kind in (None, kind_of(path))}
        if output_dir is not None:
            params["output_dir"] = output_dir
        jobs.append((path, params))
    return jobs


#: What check_parameters takes, beside the model, the workload and the device.
CHECKED = ("precision", "warmup", "iterations", "max_seconds", "threshold")


def check_values(jobs: list[tuple[Path, dict]]) -> None:
    """The notebooks' first-cell check of the values given, once per kind of notebook."""
    for kind in dict.fromkeys(kind_of(path) for path, _ in jobs):
        values = {**KIND_DEFAULTS[kind], "device": "auto"}
        for path, params in jobs:
            if kind_of(path) == kind:
                values.update({k: v for k, v in params.items() if k in (*values, *CHECKED)})
        try:
            check_parameters(**values, kind=kind)
        except SeriesError as error:
            paths = [path for path, _ in jobs if kind_of(path) == kind]
            stop(f"notebook {numbers(paths)}: {type(error).__name__}: {error}")


def fold_parameters(path: Path) -> None:
    """Write injected values into the parameters cell and drop papermill's injected cell.

    The executed notebook then shows in one place the parameters it ran with.
    """
    notebook = json.loads(path.read_text())
    cells = notebook["cells"]
    injected = [c for c in cells if "injected-parameters" in c["metadata"].get("tags", [])]
    if not injected:
        return
    values = literal_assignments("".join(injected[0]["source"]))
    for cell in cells:
        if "parameters" in cell["metadata"].get("tags", []):
            lines = []
            for line in "".join(cell["source"]).splitlines(keepends=True):
                name, _, rest = line.partition(" = ")
                if name in values:  # the default's comment may no longer hold: say what changed
                    default = rest.split("  #")[0].strip()
                    line = f"{name} = {values.pop(name)!r}  # set for this run; default {default}\n"
                lines.append(line)
            cell["source"] = lines
    cells.remove(injected[0])
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")


def execute(notebook: Path, target: Path, params: dict, args: argparse.Namespace) -> str:
    """Run one notebook; return '' or 'ErrorName: message'."""
    import papermill

    try:
        papermill.execute_notebook(
            str(notebook),
            str(target),
            parameters=params,
            kernel_name=args.kernel,
            cwd=str(notebook.parent),
            progress_bar=False,
            execution_timeout=args.timeout,
        )
        error = ""
    except Exception as exc:  # PapermillExecutionError carries the cell's error
        error = f"{getattr(exc, 'ename', type(exc).__name__)}: {getattr(exc, 'evalue', exc)}"
    if target.exists():
        fold_parameters(target)
    return error


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    root = project_root()
    run_dir = args.output_dir or "runs/latest"
    jobs = plan(args, root, None if args.publish else run_dir)
    check_values(jobs)
    status_path = output_path(run_dir, "results", "run-status.json")
    status = json.loads(status_path.read_text()) if status_path.exists() else {}
    started = time.time()
    run_id = f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC} series"
    # The kernels read the run's id, and must import this checkout's helpers whatever folder
    # they start in; patch.dict puts the caller's environment back afterwards.
    path = os.pathsep.join(filter(None, [str(root), os.getenv("PYTHONPATH")]))
    with mock.patch.dict(os.environ, {"SERIES_RUN_ID": run_id, "PYTHONPATH": path}):
        ran = run_jobs(jobs, args, root, run_dir, status, status_path)
    write_summaries(root / run_dir, status)
    if args.publish:
        publish(root, root / run_dir, started, {key: status[key] for key in ran})
    return 1 if any(status[key]["status"] == "failed" for key in ran) else 0


def run_jobs(jobs, args, root: Path, run_dir: str, status: dict, status_path: Path) -> list[str]:
    """Execute each notebook in turn, recording its status; return the keys of those run."""
    ran = []
    for notebook, params in jobs:
        workload = {**notebook_defaults(notebook), **params}
        tag = workload_tag(workload["model_name"], workload["batch_size"], workload["seq_len"])
        key = f"{notebook.stem}_{tag}"
        earlier = status.get(key, {})
        if args.resume and earlier.get("status") == "ok" and earlier.get("parameters") == params:
            print(f"{notebook.stem}: ok earlier, skipped (--resume)", flush=True)
            continue
        if args.publish and not {"model_name", "batch_size", "seq_len"} & set(params):
            target = notebook
        elif args.publish:
            target = root / "results" / "executed" / f"{key}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
        else:
            target = output_path(run_dir, "results", "executed", f"{key}.ipynb")
        print(f"{notebook.stem}: running ...", flush=True)
        start = time.perf_counter()
        error = execute(notebook, target, params, args)
        seconds = round(time.perf_counter() - start, 1)
        status[key] = dict(
            status="failed" if error else "ok",
            seconds=seconds,
            finished=f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
            parameters=params,
            error=error[:500],
        )
        status_path.write_text(json.dumps(status, indent=1) + "\n")
        ran.append(key)
        print(
            f"{notebook.stem}: {status[key]['status']} in {seconds:.0f} s {error[:300]}", flush=True
        )
        if error.startswith(STOP_ON):
            print("stopped: this error would repeat in every notebook", file=sys.stderr)
            break
    return ran


def write_summaries(run_dir: Path, status: dict) -> None:
    """RESULTS.md from the run folder's records; RUN.md with each notebook's run and figures."""
    results = run_dir / "results"
    if (results / "records").is_dir():  # figures drawn from records, before RUN.md lists them
        (run_dir / "figures").mkdir(parents=True, exist_ok=True)
        roofline_plot.main([str(results / "records"), "--out", str(run_dir / "figures")])
    (results / "RESULTS.md").write_text(build_report(load_records(results / "records")))
    (results / "RUN.md").write_text(run_table(status, sorted((run_dir / "figures").glob("*.png"))))
    print(f"results: {results / 'RESULTS.md'}")


def run_table(status: dict, figures: list[Path]) -> str:
    """RUN.md: one row per notebook and workload, then the figures."""
    lines = [
        "# Series runs in this folder",
        "",
        "Generated by `python -m helpers.tools.series`; parameters are those given to the run "
        "(a notebook's own defaults for the rest).",
        "",
        "| notebook and workload | status | seconds | finished | parameters | error |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for key, entry in status.items():
        given = ", ".join(f"{k}={v!r}" for k, v in entry["parameters"].items()) or "defaults"
        lines.append(
            f"| {key} | {entry['status']} | {entry['seconds']} | {entry['finished']} | {given} "
            f"| {entry['error']} |"
        )
    lines += ["", "## Figures", ""] + [f"![{f.stem}](../figures/{f.name})" for f in figures]
    return "\n".join(lines + ["", "Table: [RESULTS.md](RESULTS.md)", ""])


def publish(root: Path, run_dir: Path, since: float, ran: dict) -> None:
    """Copy this run's records and figures into results/ and figures/; add its rows to RUN.md.

    The published run table keeps the rows of notebooks published earlier (possibly from
    another machine), in results/run-status.json, and replaces those run now.
    """
    for kind, target in (("results/records", "results/records"), ("figures", "figures")):
        for path in sorted((run_dir / kind).glob("*")):
            if path.stat().st_mtime >= since:
                (root / target).mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, root / target / path.name)
                print(f"published {target}/{path.name}")
    records = load_records(root / "results" / "records")
    (root / "results").mkdir(exist_ok=True)
    (root / "results" / "RESULTS.md").write_text(build_report(records))
    readme = root / "README.md"
    if readme.exists():  # the project's README carries the claims table between markers
        readme.write_text(with_claims(readme.read_text(), records))
    status_path = root / "results" / "run-status.json"
    published = json.loads(status_path.read_text()) if status_path.exists() else {}
    published.update(ran)
    status_path.write_text(json.dumps(published, indent=1) + "\n")
    figures = sorted((root / "figures").glob("*.png"))
    (root / "results" / "RUN.md").write_text(run_table(published, figures))


if __name__ == "__main__":
    raise SystemExit(main())
