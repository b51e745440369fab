"""Run the whole notebook series headless with papermill, then write the results table.

    python -m helpers.series                      # every notebook, default parameters
    python -m helpers.series --model-name bert-base-uncased --fast
    python -m helpers.series --only 02,03 --batch-size 64 --seq-len 512 --resume

Executed notebooks go to ``<output-dir>/results/executed/`` (or replace the originals with
``--in-place``), records to ``<output-dir>/results/records/``, figures to
``<output-dir>/figures/``; ``<output-dir>/results/RESULTS.md`` is rebuilt from all
records there and ``RUN.md`` lists each notebook's status and time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from helpers.paths import project_root, resolve_output_dir
from helpers.records import load_records, workload_tag
from helpers.report import build_report

#: Parameters the runner forwards; every notebook's parameters cell defines them.
FORWARDED = ("model_name", "batch_size", "seq_len", "warmup", "iterations", "max_seconds", "device")
FAST = {"warmup": 1, "iterations": 3, "max_seconds": 5.0}


def notebooks(root: Path, only: str | None = None) -> list[Path]:
    """The numbered notebooks, optionally only those whose number is in ``only``."""
    found = sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if only:
        wanted = {n.strip().zfill(2) for n in only.split(",") if n.strip()}
        unknown = wanted - {p.name[:2] for p in found}
        if unknown:
            missing = ", ".join(sorted(unknown))
            raise SystemExit(f"no notebook numbered {missing} in {root / 'notebooks'}")
        found = [p for p in found if p.name[:2] in wanted]
    return found


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Run the notebook series headless and build the results table."
    )
    parser.add_argument("--output-dir", default="runs/latest", help="run folder")
    parser.add_argument("--only", help="comma-separated notebook numbers, e.g. 02,03")
    parser.add_argument("--model-name")
    parser.add_argument("--batch-size", type=int)
    parser.add_argument("--seq-len", type=int)
    parser.add_argument("--warmup", type=int)
    parser.add_argument("--iterations", type=int)
    parser.add_argument("--max-seconds", type=float)
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--fast", action="store_true", help="few timed iterations: a smoke run")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="skip notebooks that succeeded with the same parameters",
    )
    parser.add_argument(
        "--in-place", action="store_true", help="write executed notebooks over notebooks/"
    )
    parser.add_argument("--kernel", default="python3", help="Jupyter kernel name")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds allowed per cell")
    args = parser.parse_args(argv)
    for name in ("batch_size", "seq_len", "iterations"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    if args.warmup is not None and args.warmup < 0:
        parser.error(f"--warmup must be at least 0, got {args.warmup}")
    return args


def run_parameters(args: argparse.Namespace, output_dir: Path, root: Path) -> dict:
    """Parameters to inject: --fast defaults first, explicit options win.

    An output folder inside the project is passed relative to it, so a published
    notebook does not carry this machine's absolute path into its parameters.
    """
    params = dict(FAST) if args.fast else {}
    for name in FORWARDED:
        value = getattr(args, name)
        if value is not None:
            params[name] = value
    inside = output_dir == root or root in output_dir.parents
    params["output_dir"] = str(output_dir.relative_to(root)) if inside else str(output_dir)
    return params


def main(argv: list[str] | None = None) -> int:
    import papermill
    from tqdm.auto import tqdm

    args = parse_args(argv)
    root = project_root()
    output_dir = resolve_output_dir(args.output_dir)
    params = run_parameters(args, output_dir, root)
    tag = workload_tag(
        params.get("model_name", "roberta-base"),
        params.get("batch_size", 16),
        params.get("seq_len", 32),
    )
    status_path = output_dir / "results" / "run-status.json"
    status_path.parent.mkdir(parents=True, exist_ok=True)
    status = json.loads(status_path.read_text()) if status_path.exists() else {}
    # The kernel must import this checkout's helpers whatever folder it starts in.
    paths = [str(root), os.environ.get("PYTHONPATH")]
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)

    failures = 0
    progress = tqdm(notebooks(root, args.only), unit="notebook", file=sys.stderr)
    for notebook in progress:
        key = f"{notebook.stem}_{tag}"
        progress.set_description(notebook.stem)
        previous = status.get(key, {})
        if args.resume and previous.get("status") == "ok" and previous.get("parameters") == params:
            tqdm.write(f"{notebook.stem}: ok earlier, skipped (--resume)")
            continue
        if args.in_place:
            target = notebook
        else:
            target = output_dir / "results" / "executed" / f"{key}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        try:
            papermill.execute_notebook(
                str(notebook),
                str(target),
                parameters=params,
                kernel_name=args.kernel,
                cwd=str(root),
                progress_bar=False,
                execution_timeout=args.timeout,
            )
            outcome, error = "ok", ""
        except Exception as exc:  # PapermillExecutionError carries the cell's error
            failures += 1
            outcome = "failed"
            error = f"{getattr(exc, 'ename', type(exc).__name__)}: {getattr(exc, 'evalue', exc)}"
        seconds = time.perf_counter() - start
        status[key] = {
            "status": outcome,
            "seconds": round(seconds, 1),
            "error": error[:500],
            "parameters": params,
            "output": str(target),
        }
        status_path.write_text(json.dumps(status, indent=1) + "\n")
        tqdm.write(f"{notebook.stem}: {outcome} in {seconds:.0f} s {error[:300]}")

    write_summaries(output_dir, status)
    print(f"results: {output_dir / 'results' / 'RESULTS.md'}")
    return 1 if failures else 0


def write_summaries(output_dir: Path, status: dict) -> None:
    """RESULTS.md from the records; RUN.md with each notebook's status and the figures."""
    results = output_dir / "results"
    (results / "RESULTS.md").write_text(build_report(load_records(results / "records")))
    lines = ["# Series run", "", "| notebook | status | seconds | error |"]
    lines.append("| --- | --- | --- | --- |")
    for key, entry in sorted(status.items()):
        lines.append(f"| {key} | {entry['status']} | {entry['seconds']} | {entry['error']} |")
    figures = sorted((output_dir / "figures").glob("*.png"))
    lines += ["", "## Figures", ""] + [f"![{f.stem}](../figures/{f.name})" for f in figures]
    lines += ["", "Results table: [RESULTS.md](RESULTS.md)", ""]
    (results / "RUN.md").write_text("\n".join(lines))


if __name__ == "__main__":
    raise SystemExit(main())
