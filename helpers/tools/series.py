"""Run the notebook series headless with papermill, then write the results table.

    python -m helpers.tools.series                         # every notebook -> runs/latest/
    python -m helpers.tools.series --only 02,03 --batch-size 8 --seq-len 128
    python -m helpers.tools.series --model-name bert-base-uncased --decoder-name Llama-3.2-1B
    python -m helpers.tools.series --only 08 -p sweep_batches "[1, 8]"
    python -m helpers.tools.series --publish               # the one command that publishes

A run writes executed notebooks, records, figures, RESULTS.md and RUN.md under its run
folder and never touches the published files. ``--publish`` (a GPU machine with
Torch-TensorRT only) runs the notebooks at their own defaults in place (or, with a workload
option, into results/executed/) and copies the records and figures of those that finished
ok into results/ and figures/. Every value is checked with each notebook's own checks
before the first kernel starts. A notebook's run replaces its last good one only when it
finishes ok; a failed, interrupted (Ctrl-C) or noisy run is kept beside it; --resume reruns it.
SERIES_RUN_ID, where set, names the run: invocations that share it (``--only`` parts on one
machine) are one run for the checks across notebooks: every notebook that times eager FP32 on
a GPU must agree with the others of its run within 1.3x, or it is noisy.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shlex
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import NoReturn
from unittest import mock

import torch

from helpers.errors import SeriesError
from helpers.gpu import EMULATE_VARIABLE
from helpers.notebook_checks import DECODER_NOTEBOOKS, check_arguments, check_notebook_values
from helpers.parameters import check_parameters
from helpers.records import number_of, output_path, project_root, workload_tag
from helpers.tools.gpu_peak import GpuMeter
from helpers.tools.host_probe import dispatch_us
from helpers.tools.notebook_run import (
    beside,
    drop_set_aside,
    execute,
    kernel_environment,
    latest,
    lighten,
    literal_assignments,
    merge_entry,
    noise_of,
    ran_as,
    records_of,
    set_aside,
    settle,
)
from helpers.tools.png import shrink_notebook_images
from helpers.tools.run_summary import publish, write_summaries
from helpers.trt_compat import tensorrt_status

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
#: Errors of a notebook's set-up and the values they depend on: when every notebook still
#: to run shares those values, the error would repeat in each, and the run stops.
STOP_ON = {
    "ParameterError": ("model_name", "batch_size", "seq_len", "device"),
    "ModelNotAvailableError": ("model_name",),
    "DeviceUnavailableError": ("device",),
}
#: The exit status of a run stopped with Ctrl-C, as a shell gives it.
INTERRUPTED = 130


class Interrupted(Exception):
    """Ctrl-C during a notebook: which one, what ran, and the notebooks left."""

    def __init__(self, notebook: Path, kept: Path, ran: list[str], left: list[Path]) -> None:
        super().__init__(notebook.stem)
        self.notebook, self.kept, self.ran, self.left = notebook, kept, ran, left


#: Where the deep dives live, beside the core lessons: ``02d_...ipynb`` goes deeper than 02.
DEEP_DIVES = "deep-dives"
#: Names --only takes for a whole part of the series.
PARTS = ("core", DEEP_DIVES)


def notebooks(root: Path, only: str | None = None) -> list[Path]:
    """The core lessons, then the deep dives; with ``only``, those it names.

    ``only`` lists numbers ("2", "02", "02d") or a part ("core", "deep-dives").
    """
    core = sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    deep = sorted((root / "notebooks" / DEEP_DIVES).glob("[0-9][0-9]d_*.ipynb"))
    found = [p for p in core + deep if "." not in p.stem]  # not NAME.failed.ipynb and the like
    if only:
        words = {n.strip() for n in only.split(",") if n.strip()}
        parts = {"core": core, DEEP_DIVES: deep}
        wanted = {number_of(p) for w in words & set(PARTS) for p in parts[w]}
        wanted |= {w.zfill(3) if w.endswith("d") else w.zfill(2) for w in words - set(PARTS)}
        unknown = {w for w in wanted if w not in {number_of(p) for p in found}}
        if unknown:
            stop(
                f"--only: no notebook numbered {', '.join(sorted(unknown))} in {root} "
                f"(numbers such as 02 or 02d, or {' or '.join(PARTS)})"
            )
        found = [p for p in found if number_of(p) in wanted]
    return found


def kind_of(notebook: Path) -> str:
    return "decoder" if notebook.name[:2] in DECODER_NOTEBOOKS else "encoder"


def is_deep_dive(notebook: Path) -> bool:
    return number_of(notebook).endswith("d")


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
    add(
        "--only",
        help="comma-separated notebook numbers, e.g. 02,03,02d, or core or deep-dives "
        "(default: all, the core lessons first)",
    )
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
    add(
        "--emulate",
        choices=["t4"],
        help="keep to a T4's limits on a larger GPU (fp16; no FP8, TF32, flash or cuDNN "
        "attention; 15 GiB for PyTorch); never published, e.g. --output-dir results/t4-emulation",
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


def same_type(value, default) -> bool:
    """Whether ``value`` can stand where ``default`` stands: an int for a float, a list of
    the default's item type for a list, True/False only for a bool."""
    if isinstance(default, float) and not isinstance(value, bool):
        return isinstance(value, int | float)
    if isinstance(default, list) and isinstance(value, list):
        return not default or all(same_type(item, default[0]) for item in value)
    return type(value) is type(default)


def numbers(paths: list[Path], sep: str = ", ") -> str:
    return sep.join(number_of(p) for p in paths)


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
                f"{option} {value!r}: notebook {number_of(path)} takes a {type_name(default)}, "
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


def publish_refusal() -> str | None:
    """Why this machine cannot publish, or None: the published numbers are a GPU's, with
    Torch-TensorRT's engines among them."""
    if not torch.cuda.is_available():
        return "no CUDA GPU is visible"
    status = tensorrt_status()
    return None if status.available else f"Torch-TensorRT cannot run here ({status.reason})"


def check_values(jobs: list[tuple[Path, dict]]) -> None:
    """Each notebook's own first-cell checks of the values it will run with, before any
    kernel starts; an error that every notebook would meet is said once, as such."""
    errors, seen = {}, {}
    for path, params in jobs:
        error = notebook_error(number_of(path), {**notebook_defaults(path), **params}, seen)
        if error:
            errors[path] = error
    if not errors:
        return
    first = next(iter(errors.values()))
    paths = [path for path, error in errors.items() if error == first]
    if len(paths) == len(jobs) > 1:
        stop(f"{first}; stopped: this error would repeat in every notebook ({numbers(paths)})")
    stop(f"notebook {numbers(paths)}: {first}")


def notebook_error(number: str, values: dict, seen: dict[str, str]) -> str:
    """'' or 'ErrorName: message' from notebook ``number``'s checks of ``values``.

    ``seen`` keeps check_parameters' answer per set of arguments: notebooks that share
    them ask the hub and read the model's config once.
    """
    try:
        check_notebook_values(number, values)
        arguments = check_arguments(number, values)
    except SeriesError as error:
        return f"{type(error).__name__}: {error}"
    key = repr(sorted(arguments.items()))
    if key not in seen:
        try:
            check_parameters(**arguments)
            seen[key] = ""
        except SeriesError as error:
            seen[key] = f"{type(error).__name__}: {error}"
    return seen[key]


def main(argv: list[str] | None = None) -> int:
    """Run the series; Ctrl-C ends it with one line that says how to go on."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return run_series(argv)
    except KeyboardInterrupt:  # outside a notebook: what finished is recorded already
        print(
            "series: interrupted between notebooks; what finished is kept; go on with: "
            f"{resume_command(argv, None, '--publish' in argv)}",
            file=sys.stderr,
        )
        return INTERRUPTED


def run_series(argv: list[str]) -> int:
    """Check, run, summarise (and publish); 0 if every notebook run finished ok."""
    args = parse_args(argv)
    if args.publish and args.emulate:
        stop("--emulate runs are never published: give --output-dir results/t4-emulation instead")
    if args.publish and (why := publish_refusal()):
        stop(
            f"--publish needs an NVIDIA GPU and Torch-TensorRT, and {why}: publish from a GPU "
            "machine, or leave out --publish to run into runs/latest (nothing was changed)"
        )
    # the checks and every kernel see the emulated GPU; patch.dict puts the variable back
    with mock.patch.dict(os.environ, {EMULATE_VARIABLE: args.emulate} if args.emulate else {}):
        return checked_run(args, argv)


def checked_run(args: argparse.Namespace, argv: list[str]) -> int:
    root = project_root()
    run_dir = args.output_dir or "runs/latest"
    jobs = plan(args, root, None if args.publish else run_dir)
    check_values(jobs)
    status_path = output_path(run_dir, "results", "run-status.json")
    status = json.loads(status_path.read_text()) if status_path.exists() else {}
    started = time.time()
    # a run spread over several invocations (one machine, --only parts) names itself once
    now = datetime.now(timezone.utc)
    run_id = os.environ.get("SERIES_RUN_ID") or f"{now:%Y-%m-%d %H:%M UTC} series"
    interrupted = None
    # patch.dict puts the caller's environment back afterwards
    with mock.patch.dict(os.environ, kernel_environment(root, run_id)):
        try:
            ran = run_jobs(jobs, args, root, run_dir, status, status_path)
        except Interrupted as stopped:
            ran, interrupted = stopped.ran, stopped
    write_summaries(root / run_dir, status, ran)
    copied = []
    if args.publish:  # an interrupted run publishes the notebooks that finished ok
        copied = publish(root, root / run_dir, started, {key: status[key] for key in ran})
    if interrupted is not None:
        print(interrupted_line(interrupted, root, argv, args.publish), file=sys.stderr)
        return INTERRUPTED
    print("".join(f"published {name}\n" for name in copied), end="")
    print(f"results: {root / run_dir / 'results' / 'RESULTS.md'}")
    return 1 if any(latest(status[key])["status"] != "ok" for key in ran) else 0


def run_jobs(jobs, args, root: Path, run_dir: str, status: dict, status_path: Path) -> list[str]:
    """Execute each notebook in turn, recording its status; return the keys of those run.

    Ctrl-C during a notebook raises Interrupted once its partial run is kept and recorded.
    """
    ran = []
    for index, (notebook, params) in enumerate(jobs):
        values = {**notebook_defaults(notebook), **params}
        tag = workload_tag(values["model_name"], values["batch_size"], values["seq_len"])
        key = f"{notebook.stem}_{tag}"
        earlier = status.get(key, {})
        done = earlier.get("status") == "ok" and "attempt" not in earlier  # its last run too
        if args.resume and done and earlier.get("parameters") == params:
            print(f"{notebook.stem}: ok earlier, skipped (--resume)", flush=True)
            continue
        target = target_of(notebook, key, params, args, root, run_dir)
        print(f"{notebook.stem}: running ...", flush=True)
        start, since, number = time.perf_counter(), time.time(), number_of(notebook.name)
        records = output_path(run_dir, "results", "records")
        before = records_of(records, number)
        host_us = dispatch_us()  # the host's speed as this notebook starts
        try:
            with GpuMeter() as gpu:  # the driver's count: TensorRT and child processes too
                error = execute(notebook, beside(target, "running"), params, args)
            outcome = "failed" if error else "ok"
            run_id = os.environ.get("SERIES_RUN_ID")  # set for the kernels: this run's
            if not error and (noise := noise_of(records, number, since, run_id)):
                how = "rerun it"  # a rerun in this run is held to the same notebooks:
                if "of this run" in noise:  # their baseline may be the one that moved
                    how = "rerun it with those notebooks under a new SERIES_RUN_ID"
                error = f"noisy by the series' rules ({noise}): {how}; the last good run stays"
                outcome = "noisy"  # kept beside the good notebook, never published
                set_aside(records, number, since, before)
            elif not error:
                drop_set_aside(records, number, since)
        except KeyboardInterrupt:  # papermill has shut its kernel down by now
            error, outcome = "KeyboardInterrupt: stopped with Ctrl-C", "interrupted"
        kept = settle(target, outcome)
        if os.environ.get(EMULATE_VARIABLE) and kept.exists():
            lighten(kept)  # evidence kept in git: no images or timestamps; cell seconds kept
        elif args.publish and outcome == "ok":
            shrink_notebook_images(kept)  # committed: the repository must stay small
        seconds = round(time.perf_counter() - start, 1)
        entry = dict(
            status=outcome,
            seconds=seconds,
            finished=f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
            parameters=params,
            error=error[:500],
            notebook=str(kept.relative_to(root) if kept.is_relative_to(root) else kept),
            peak_gpu_gib=gpu.peak_gib,
            gpu_busy_share=gpu.busy_share,
            busy_clock_mhz=gpu.busy_clock_mhz,
            host_dispatch_us=host_us,
            emulated=os.environ.get(EMULATE_VARIABLE),
            ran_as=ran_as(records, number, since, tag),
        )
        status[key] = merge_entry(status.get(key), entry)
        status_path.write_text(json.dumps(status, indent=1) + "\n")
        ran.append(key)
        if outcome == "interrupted":
            raise Interrupted(notebook, kept, ran, [path for path, _ in jobs[index:]])
        print(f"{notebook.stem}: {outcome} in {seconds:.0f} s {error[:300]}", flush=True)
        left = [{**notebook_defaults(path), **more} for path, more in jobs[index + 1 :]]
        if repeats_everywhere(error, values, left):
            print("stopped: this error would repeat in every notebook left", file=sys.stderr)
            break
    return ran


def target_of(notebook: Path, key: str, params: dict, args, root: Path, run_dir: str) -> Path:
    """Where a notebook's good run goes: in place when published at its own workload,
    results/executed/ when published at another, else the run folder."""
    if args.publish and not {"model_name", "batch_size", "seq_len"} & set(params):
        return notebook
    if args.publish:
        target = root / "results" / "executed" / f"{key}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        return target
    return output_path(run_dir, "results", "executed", f"{key}.ipynb")


def repeats_everywhere(error: str, values: dict, left: list[dict]) -> bool:
    """Whether a set-up error would recur in every notebook left: each of them shares the
    values that error depends on (STOP_ON)."""
    names = STOP_ON.get(error.split(":", 1)[0], ())
    return bool(names and left) and all(
        all(other.get(name) == values.get(name) for name in names) for other in left
    )


def interrupted_line(stopped: Interrupted, root: Path, argv: list[str], publish: bool) -> str:
    """What was interrupted, where its partial run is, and the command that goes on."""
    kept = stopped.kept.relative_to(root) if stopped.kept.is_relative_to(root) else stopped.kept
    partial = f"its partial run is kept as {kept}" if stopped.kept.exists() else "nothing written"
    return (
        f"series: interrupted {stopped.notebook.stem} ({partial}; earlier good runs are "
        f"untouched); go on with: {resume_command(argv, stopped.left, publish)}"
    )


def resume_command(argv: list[str], left: list[Path] | None, publish: bool) -> str:
    """The command that goes on: --resume skips what finished ok; a publishing run, which
    cannot resume, runs again the notebooks left."""
    words = ["python", "-m", "helpers.tools.series"]
    if not publish:
        return shlex.join([*words, *argv, *([] if "--resume" in argv else ["--resume"])])
    if not left:
        return shlex.join([*words, *argv])
    kept, skip = [], False
    for word in argv:  # drop the old --only: the notebooks left replace it
        if not skip and word != "--only" and not word.startswith("--only="):
            kept.append(word)
        skip = word == "--only"
    return shlex.join([*words, *kept, "--only", numbers(left, ",")])


if __name__ == "__main__":
    raise SystemExit(main())
