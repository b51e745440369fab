"""Run the notebook series headless with papermill, then write the results table.

    python -m helpers.tools.series                         # every notebook -> runs/latest/
    python -m helpers.tools.series --fast                  # a smoke run -> runs/fast/
    python -m helpers.tools.series --only 02,03 --batch-size 64 --seq-len 512
    python -m helpers.tools.series --publish               # the one command that publishes

A run writes executed notebooks, records, figures, RESULTS.md and RUN.md under its run
folder and never touches the published files. ``--publish`` runs the notebooks at their
own defaults in place (or, with a workload option, into results/executed/) and copies the
run's records and figures into results/ and figures/.
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

from helpers.errors import SeriesError
from helpers.parameters import check_parameters
from helpers.records import load_records, output_path, project_root, workload_tag
from helpers.tools import roofline_plot
from helpers.tools.report import build_report, with_claims

#: Parameters the runner forwards; every notebook's parameters cell defines them.
FORWARDED = ("model_name", "batch_size", "seq_len", "warmup", "iterations", "max_seconds", "device")
DEFAULTS = dict(model_name="roberta-base", batch_size=16, seq_len=32, device="auto")
FAST = {"warmup": 1, "iterations": 3, "max_seconds": 5.0}
#: Errors that would repeat in every notebook: the run stops at the first one.
STOP_ON = ("ParameterError", "ModelNotAvailableError", "DeviceUnavailableError")


def notebooks(root: Path, only: str | None = None) -> list[Path]:
    """The numbered notebooks, optionally only those whose number is in ``only``."""
    found = sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if only:
        wanted = {n.strip().zfill(2) for n in only.split(",") if n.strip()}
        unknown = wanted - {p.name[:2] for p in found}
        if unknown:
            raise SystemExit(f"no notebook numbered {', '.join(sorted(unknown))} in {root}")
        found = [p for p in found if p.name[:2] in wanted]
    return found


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", help="run folder (default runs/latest, runs/fast)")
    parser.add_argument("--only", help="comma-separated notebook numbers, e.g. 02,03")
    parser.add_argument("--model-name")
    parser.add_argument("--batch-size", type=int)
    parser.add_argument("--seq-len", type=int)
    parser.add_argument("--warmup", type=int)
    parser.add_argument("--iterations", type=int)
    parser.add_argument("--max-seconds", type=float)
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--fast", action="store_true", help="few timed calls: a smoke run")
    parser.add_argument("--resume", action="store_true", help="skip notebooks that succeeded")
    parser.add_argument("--publish", action="store_true", help="publish this run (see above)")
    parser.add_argument("--kernel", default="python3", help="Jupyter kernel name")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds allowed per cell")
    args = parser.parse_args(argv)
    if args.publish and (args.fast or args.output_dir or args.resume):
        parser.error(
            "--publish runs at full settings into runs/latest: drop --fast/--output-dir/--resume"
        )
    values = {**DEFAULTS, **injected_parameters(args, None)}
    try:
        check_parameters(
            **{n: values.get(n) for n in ("model_name", "batch_size", "seq_len", "device")},
            warmup=values.get("warmup"),
            iterations=values.get("iterations"),
            max_seconds=values.get("max_seconds"),
        )
    except SeriesError as error:
        parser.error(str(error))
    return args


def injected_parameters(args: argparse.Namespace, output_dir: str | None) -> dict:
    """What papermill injects: --fast values first, explicit options win."""
    params = dict(FAST) if args.fast else {}
    params.update({n: getattr(args, n) for n in FORWARDED if getattr(args, n) is not None})
    if output_dir is not None:
        params["output_dir"] = output_dir
    return params


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
    run_dir = args.output_dir or ("runs/fast" if args.fast else "runs/latest")
    params = injected_parameters(args, None if args.publish else run_dir)
    status_path = output_path(run_dir, "results", "run-status.json")
    status = json.loads(status_path.read_text()) if status_path.exists() else {}
    started = time.time()
    run_id = f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC} {'fast' if args.fast else 'full'}"
    os.environ["SERIES_RUN_ID"] = run_id
    # The kernel must import this checkout's helpers whatever folder it starts in.
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), os.getenv("PYTHONPATH")]))

    failures, ran = 0, []
    for notebook in notebooks(root, args.only):
        workload = {**DEFAULTS, **notebook_defaults(notebook), **params}
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
        failures += bool(error)
        if error.startswith(STOP_ON):
            print("stopped: this error would repeat in every notebook", file=sys.stderr)
            break

    write_summaries(root / run_dir, status)
    if args.publish:
        publish(root, root / run_dir, started, {key: status[key] for key in ran})
    return 1 if failures else 0


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
