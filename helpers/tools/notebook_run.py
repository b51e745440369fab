"""One notebook's run for the series runner: its kernel, its files and its status entry.

A run is written beside the last good notebook (``NAME.running.ipynb``) and replaces it
only when it finishes ok; a failed, interrupted or noisy run is kept as ``NAME.failed.ipynb``,
``NAME.interrupted.ipynb`` or ``NAME.noisy.ipynb``, and the good one and its "ok" entry stay.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import json
import math
import os
import re
import signal
import threading
from pathlib import Path

from helpers.claims import baseline_moved
from helpers.records import number_of, path_median, workload_tag

#: Kineto (torch.profiler) prints "USDT: ... profiler_start/stop" at its top level, 5,
#: whatever its level below that; 6 keeps those lines out of the terminal and the outputs.
QUIET_KINETO = "6"
#: Set by Ctrl-C during a notebook, before its KeyboardInterrupt reaches papermill.
CTRL_C = threading.Event()


def kernel_environment(root: Path, run_id: str) -> dict[str, str]:
    """What the kernels read: the run's id, this checkout's helpers, a quiet profiler.

    PYTHONPATH makes every kernel import this checkout's helpers whatever folder it starts
    in; a KINETO_LOG_LEVEL the user set is kept.
    """
    path = os.pathsep.join(filter(None, [str(root), os.getenv("PYTHONPATH")]))
    kineto = os.environ.get("KINETO_LOG_LEVEL", QUIET_KINETO)
    return {"SERIES_RUN_ID": run_id, "PYTHONPATH": path, "KINETO_LOG_LEVEL": kineto}


def kernel_config():
    """Encrypt the kernel's connection (CurveZMQ) where jupyter_client can: ipykernel warns
    about plain TCP on every start otherwise."""
    from jupyter_client.manager import KernelManager
    from traitlets.config import Config

    if "transport_encryption" not in KernelManager.class_trait_names():
        return Config()
    return Config({"KernelManager": {"transport_encryption": "auto"}})


@functools.cache
def kernel_manager_class():
    """papermill's kernel manager, but one that kills the kernel at once after Ctrl-C.

    Asked to shut down in the middle of a cell, a kernel prints a traceback from its
    closing sockets; killed, its process group (torchrun's workers too) simply ends.
    """
    from jupyter_client.manager import AsyncKernelManager

    class KernelManager(AsyncKernelManager):
        async def shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:
            await super().shutdown_kernel(now=now or CTRL_C.is_set(), restart=restart)

    return KernelManager


@contextlib.contextmanager
def ctrl_c_noted():
    """Note Ctrl-C in CTRL_C, then raise KeyboardInterrupt as Python's own handler would."""

    def on_ctrl_c(signum, frame):
        CTRL_C.set()
        raise KeyboardInterrupt

    CTRL_C.clear()
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set a handler; there, no Ctrl-C arrives anyway
        return
    previous = signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def execute(notebook: Path, target: Path, params: dict, args: argparse.Namespace) -> str:
    """Run one notebook into ``target``; return '' or 'ErrorName: message'.

    A kernel that died while starting, before any cell ran, is started once more.
    A KeyboardInterrupt goes on to the caller once papermill has stopped the kernel.
    """
    error, cell_ran = execute_once(notebook, target, params, args)
    if error and not cell_ran and KERNEL_NOT_STARTED in error:
        print(f"{notebook.stem}: its kernel did not start ({error}); starting another")
        error, _ = execute_once(notebook, target, params, args)
    return error


def execute_once(
    notebook: Path, target: Path, params: dict, args: argparse.Namespace
) -> tuple[str, bool]:
    """One papermill run: its error ('' if none) and whether a cell ran before it."""
    import papermill

    try:
        with ctrl_c_noted():
            papermill.execute_notebook(
                str(notebook),
                str(target),
                parameters=params,
                kernel_name=args.kernel,
                cwd=str(notebook.parent),
                progress_bar=False,
                execution_timeout=args.timeout,
                config=kernel_config(),
                kernel_manager_class=kernel_manager_class(),
            )
        return "", False
    except Exception as exc:  # PapermillExecutionError carries the cell's error
        error = f"{getattr(exc, 'ename', type(exc).__name__)}: {getattr(exc, 'evalue', exc)}"
        return error, isinstance(exc, papermill.PapermillExecutionError)
    finally:
        if target.exists():  # a partial notebook too: it shows what ran, with its values
            fold_parameters(target)
            note_adjusted(target)


#: jupyter_client's words for a kernel that died while starting, as when another process took
#: one of the ports it had chosen (ZMQError: Address already in use); no cell has run then.
KERNEL_NOT_STARTED = "Kernel died before replying to kernel_info"


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
            cell["source"] = set_values("".join(cell["source"]), values)
    cells.remove(injected[0])
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")


def set_values(source: str, values: dict) -> list[str]:
    """``source`` with each assignment to a name in ``values`` on one line of its new value.

    The default's comment may no longer hold, so the line says what changed instead. An
    assignment may span lines (a formatter wraps a long comment in parentheses): its whole
    span is replaced, found by ``ast``.
    """
    lines = source.splitlines(keepends=True)
    for node in reversed(ast.parse(source).body):  # from the end: earlier spans stay valid
        name = node.targets[0].id if isinstance(node, ast.Assign) else None
        if name in values:
            default = ast.get_source_segment(source, node.value)
            line = f"{name} = {values[name]!r}  # set for this run; default {default}\n"
            lines[node.lineno - 1 : node.end_lineno] = [line]
    return lines


def literal_assignments(source: str) -> dict:
    """``name = literal`` lines of a cell, as a dict."""
    values = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = ast.literal_eval(node.value)
    return values


def record_paths(records: Path, number: str) -> list[Path]:
    """Notebook ``number``'s records in ``records`` (a file that names no notebook is none)."""
    found = []
    for path in sorted(records.glob("*.json")) if records.is_dir() else []:
        with contextlib.suppress(ValueError):
            if number_of(path.name) == number:
                found.append(path)
    return found


def records_of(records: Path, number: str) -> dict[Path, bytes]:
    """Notebook ``number``'s records in ``records``, as they are now (to put back later)."""
    return {path: path.read_bytes() for path in record_paths(records, number)}


def record_workload_tag(record: dict) -> str:
    """The workload tag of a saved record, from the parameters its notebook ran with: the
    runner's run keys, the published file names and the figures' names all use it."""
    p = record["parameters"]
    return workload_tag(p["model_name"], p["batch_size"], p["seq_len"])


def records_since(records: Path, number: str, since: float) -> list[tuple[Path, dict | None]]:
    """Notebook ``number``'s records written into ``records`` since ``since``, each parsed
    (None: it could not be read)."""
    found = []
    for path in record_paths(records, number):
        if path.stat().st_mtime >= since:
            try:
                found.append((path, json.loads(path.read_text())))
            except json.JSONDecodeError:
                found.append((path, None))
    return found


def ran_as(records: Path, number: str, since: float, asked: str) -> str | None:
    """The workload tag notebook ``number`` recorded since ``since``, where it differs from
    the ``asked`` one: a notebook that shrinks its workload (10 on CPU processes: prompt 32)
    must not be listed under the workload it did not run."""
    for _, record in records_since(records, number, since):
        with contextlib.suppress(KeyError, TypeError):  # TypeError: an unreadable record
            if (tag := record_workload_tag(record)) != asked:
                return tag
    return None


def noise_of(records: Path, number: str, since: float, run_id: str | None = None) -> str:
    """Why noise rules voided notebook ``number``'s run ('' where they did not), from the
    records it wrote into ``records`` since ``since``: its own (``lesson.finish(noisy=...)``),
    then eager FP32 against the other notebooks of run ``run_id`` (``baseline_moves``)."""
    reasons: list[str] = []
    new = records_since(records, number, since)  # read once, for both rules
    for path, record in new:
        if not isinstance(record, dict):
            reasons.append(f"its record {path.name} could not be read")
        else:
            reasons += record.get("noisy") or []
    said = "; ".join(reasons)  # 02 and 03 check notebook 01 themselves, and say so
    moves = baseline_moves(records, number, [record for _, record in new], run_id)
    reasons += [why for them, why in moves.items() if f"in notebook {them} of this run" not in said]
    return "; ".join(reasons)


def eager_fp32_ms(record: dict) -> float | None:
    """A record's eager FP32 median on a GPU, the series' baseline (None where it timed none,
    timed it on a CPU, whose timings are not the lesson, or kept no usable number)."""
    if (record.get("environment") or {}).get("device") != "cuda":
        return None
    ms = path_median(record, "eager fp32")
    return ms if isinstance(ms, int | float) and 0 < ms < math.inf else None


def run_baselines(records: Path, run_id: str, tag: str) -> dict[str, float]:
    """Eager FP32 medians by notebook number, from the records of run ``run_id`` at ``tag``."""
    found = {}
    for path in sorted(records.glob("*.json")):
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError, AttributeError):
            record = json.loads(path.read_text())  # JSONDecodeError is a ValueError
            if record.get("run_id") == run_id and record_workload_tag(record) == tag:
                if (ms := eager_fp32_ms(record)) is not None:
                    found[number_of(path.name)] = ms
    return found


def baseline_moves(records: Path, number: str, new: list, run_id: str | None) -> dict:
    """Why, by the other notebook's number, notebook ``number``'s ``new`` records (parsed)
    time eager FP32 beyond the series' 1.3x rule from another notebook of run ``run_id`` in
    ``records`` at the same workload.

    Every notebook that times eager FP32 is held to every other of its run, 01 included and
    whichever ran first: a host that slows for a few minutes must not leave one run's
    notebooks reading different baselines (its speed-ups over eager FP32 would then differ).
    """
    moves = {}
    for record in new if run_id else []:
        with contextlib.suppress(KeyError, TypeError, AttributeError):
            mine = eager_fp32_ms(record) if record.get("run_id") == run_id else None
            others = run_baselines(records, run_id, record_workload_tag(record)) if mine else {}
            for them, theirs in others.items():
                if them != number and baseline_moved(mine, theirs):
                    moves[them] = (
                        f"eager fp32 {mine:.3f} ms here, {theirs:.3f} ms in notebook {them} "
                        "of this run: beyond the 1.3x rule"
                    )
    return moves


def set_aside(records: Path, number: str, since: float, before: dict[Path, bytes]) -> None:
    """A noisy run's records go to ``records/noisy/``; the records from before it come back,
    so that a folder that is committed (an emulated run's) keeps only good runs' records."""
    for path in record_paths(records, number):
        if path.stat().st_mtime >= since:
            (records / "noisy").mkdir(exist_ok=True)
            os.replace(path, records / "noisy" / path.name)
    for path, data in before.items():
        path.write_bytes(data)


def drop_set_aside(records: Path, number: str, since: float) -> None:
    """An ok run's records replace a noisy run's set aside earlier, as ``settle`` drops its
    notebook: a noisy record stays only while it is the latest run of its workload."""
    for path in record_paths(records, number):
        if path.stat().st_mtime >= since:
            (records / "noisy" / path.name).unlink(missing_ok=True)


def beside(target: Path, outcome: str) -> Path:
    """``NAME.running.ipynb``, ``NAME.failed.ipynb``, ... next to ``NAME.ipynb``."""
    return target.with_name(f"{target.stem}.{outcome}{target.suffix}")


def settle(target: Path, outcome: str) -> Path:
    """Put the run's notebook where its outcome says; return where it is now.

    "ok" replaces the good notebook (and drops older failed, interrupted or noisy copies);
    any other outcome keeps it beside the good one, which stays as it was.
    """
    running = beside(target, "running")
    kept = target if outcome == "ok" else beside(target, outcome)
    if running.exists():
        os.replace(running, kept)
    if outcome == "ok":
        for stale in ("failed", "interrupted", "noisy"):
            beside(target, stale).unlink(missing_ok=True)
    return kept


def merge_entry(earlier: dict | None, entry: dict) -> dict:
    """A key's status after a run: an ok run replaces it; a run that did not finish ok is
    recorded as the "attempt" of the last good run, which stays."""
    if entry["status"] == "ok" or not earlier or earlier.get("status") != "ok":
        return entry
    return {**{k: v for k, v in earlier.items() if k != "attempt"}, "attempt": entry}


def latest(entry: dict) -> dict:
    """The most recent run of a status entry: its attempt if it has one."""
    return entry.get("attempt", entry)


def lighten(path: Path) -> None:
    """Drop an executed notebook's images and timestamps, in place; keep each cell's seconds.

    An emulated run is evidence of what ran and what it printed, kept in git beside the
    published run; its figures show the larger GPU's speeds, and its images would
    double the repository's size. Each cell's duration stays: it says where a T4's time goes.
    """
    notebook = json.loads(path.read_text())
    for cell in notebook["cells"]:
        meta = cell.get("metadata", {})
        duration = meta.pop("papermill", {}).get("duration")
        meta.pop("execution", None)
        if duration is not None:
            meta["papermill"] = {"duration": round(duration, 1)}
        for output in cell.get("outputs", []):
            for kind in [k for k in output.get("data", {}) if k.startswith("image/")]:
                del output["data"][kind]
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")


#: What ``helpers.parameters.adjust`` prints: "NAME: GIVEN -> USED (WHY)".
ADJUSTED_LINE = re.compile(r"^(\w+): (.+) -> (.+?) \((.+)\)$")  # the reason may hold ( )
#: The tag an emulated run puts after a printed time (helpers.gpu.TaggedLines).
EMULATED_TAG = re.compile(r"\s+\[emulated \w+ limits\]$")
#: A note note_adjusted wrote, at the end of a line: "; ran with X here (why)" or "  # ran ...".
RAN_WITH = re.compile(r"(?:;\s*|\s*#\s*)ran with .+ here \(.*\)$")


def note_adjusted(path: Path) -> None:
    """Mark in the parameters cell each value the notebook changed for its machine.

    The notebook prints each change (``h.adjust``); the saved parameters cell then says
    what ran, not only what was asked for.
    """
    notebook = json.loads(path.read_text())
    printed = "".join(
        "".join(output.get("text", ""))
        for cell in notebook["cells"]
        for output in cell.get("outputs", [])
        if output.get("output_type") == "stream"
    )
    lines = [EMULATED_TAG.sub("", line) for line in printed.splitlines()]
    changed = {m[1]: (m[3], m[4]) for m in map(ADJUSTED_LINE.match, lines) if m}
    for cell in notebook["cells"]:
        if "parameters" in cell["metadata"].get("tags", []):
            # an earlier run's notes go first, wherever formatting moved them: this run's stay
            source = "".join(cell["source"])
            lines = [RAN_WITH.sub("", line) for line in source.splitlines()]
            for i, line in enumerate(lines):
                name = line.partition(" = ")[0]
                if name in changed:
                    used, why = changed[name]
                    joint = "; " if "#" in line else "  # "
                    lines[i] = f"{line.rstrip()}{joint}ran with {used} here ({why})"
            cell["source"] = ("\n".join(lines) + "\n" * source.endswith("\n")).splitlines(True)
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
