"""The most GPU memory a notebook's run held, as the driver counts it.

PyTorch's own statistics miss TensorRT's engines and contexts and any child process (cold
starts, torchrun), and an emulated T4's 15 GiB must hold all of them. So the runner reads
the device's used memory from NVML (nvidia-smi where the bindings are missing) every
``interval_s`` while a notebook runs, and reports the peak above what was used before.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable


def nvml_reader(index: int = 0) -> Callable[[], float] | None:
    """A function returning GPU ``index``'s used memory in MiB, or None without a GPU."""
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        return lambda: pynvml.nvmlDeviceGetMemoryInfo(handle).used / 2**20
    except Exception:  # no bindings, no driver: try the command line
        pass
    command = ["nvidia-smi", f"--id={index}", "--query-gpu=memory.used", "--format=csv,noheader"]

    def from_smi() -> float:
        out = subprocess.run(command, capture_output=True, text=True, timeout=10).stdout
        return float(out.split()[0])  # "1234 MiB"

    try:
        from_smi()
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return None
    return from_smi


class PeakMemory:
    """``with PeakMemory() as peak: ...``; then ``peak.gib``: the most used above the start.

    ``peak.gib`` is None where no GPU can be read.
    """

    def __init__(self, read: Callable[[], float] | None | str = "nvml", interval_s: float = 0.2):
        self.read = nvml_reader() if read == "nvml" else read
        self.interval_s = interval_s
        self.gib: float | None = None
        self._stop = threading.Event()
        self._most = self._start = 0.0

    def _poll(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def _sample(self) -> None:
        try:
            self._most = max(self._most, self.read())
        except Exception:  # a missed sample is not worth a failed run
            pass

    def __enter__(self) -> PeakMemory:
        try:
            self._start = self._most = self.read() if self.read is not None else 0.0
        except Exception:  # the driver went away: no peak, and no failed run
            self.read = None
        if self.read is not None:
            self._thread = threading.Thread(target=self._poll, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.read is not None:
            self._stop.set()
            self._thread.join()
            self._sample()
            self.gib = round((self._most - self._start) / 1024, 2)
