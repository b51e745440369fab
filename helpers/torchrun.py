"""Running a script under ``torchrun`` from a notebook: its progress shown, its hangs bounded.

A tensor-parallel run is several processes that must all finish; one that hangs (a
collective waiting for a peer, a process group that will not close) must not hang the
notebook. This runs the command, prints rank 0's stage lines as they come, stops it after
a time limit, and turns each way of ending into one clear line.
"""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

from helpers.records import project_root


def run_torchrun(
    command: list[str], *, processes: int, out: Path, timeout_s: float, cpu: bool
) -> None:
    """Run ``command`` to its end, stopped after ``timeout_s``; ``out`` is its result file.

    The RuntimeError names each process's last stage after a timeout, and the last error
    line after a failure; results written before a hang in leaving the group are kept.
    """
    path = os.pathsep.join([str(project_root()), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    if cpu:
        env["CUDA_VISIBLE_DEVICES"] = ""  # the processes use the CPU and gloo
    out.unlink(missing_ok=True)  # only this run's results count
    output, timed_out = [], threading.Event()
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    ) as run:

        def stop() -> None:
            """SIGTERM: torchrun then stops its workers, which run in sessions of their own."""
            timed_out.set()
            run.terminate()

        stopper = threading.Timer(timeout_s, stop)
        stopper.start()
        try:
            for line in run.stdout:  # rank 0's stages as they happen; everything kept for errors
                output.append(line.rstrip())
                if line.startswith("[rank 0,"):
                    print(line, end="", flush=True)
        except BaseException:  # an interrupted cell stops the run too
            run.terminate()
            raise
        finally:
            stopper.cancel()
        run.wait()
    finished = sum(line.endswith("] done") for line in output) == processes and out.exists()
    if timed_out.is_set() and not finished:
        last = {line.split(",")[0]: line for line in output if line.startswith("[rank")}
        stages = " | ".join(last.values()) or "none reached"
        raise RuntimeError(
            f"torchrun with {processes} processes stopped after {timeout_s} s; "
            f"last stages: {stages}"
        )
    if run.returncode and not finished:
        errors = [line for line in output if "Error" in line] or output[-5:] or ["(no output)"]
        last = errors[-1][:300]
        raise RuntimeError(f"torchrun with {processes} processes failed: {last}")
    if run.returncode:  # every process wrote its results, then did not leave the group in time
        print(
            f"{processes} process(es): results written, then leaving the process group hung "
            "and the processes were stopped (pytorch/pytorch#115388)"
        )
