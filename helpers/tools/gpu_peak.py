"""What a notebook's run asked of the GPU, as the driver counts it: peak memory, busy share.

PyTorch's own statistics miss TensorRT's engines and contexts and any child process (cold
starts, torchrun), and an emulated T4's 15 GiB must hold all of them. So the runner reads
the device's used memory and its busy share from NVML (nvidia-smi where the bindings are
missing) every ``interval_s`` while a notebook runs. The busy share is what the estimate
of a notebook's T4 time scales (notebooks/README.md says how).
"""

from __future__ import annotations

import statistics
import subprocess
import threading
from collections.abc import Callable

#: A reader returns (used MiB, busy percent) of one GPU, and may add its SM clock (MHz).
Reader = Callable[[], tuple[float, ...]]


def nvml_reader(index: int = 0) -> Reader | None:
    """A function returning GPU ``index``'s (used MiB, busy %, SM MHz), or None without a GPU."""
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)

        def from_nvml() -> tuple[float, ...]:
            used = pynvml.nvmlDeviceGetMemoryInfo(handle).used / 2**20
            busy = float(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)
            try:  # a clock some GPUs (vGPU, MIG) do not report: memory and busy still count
                return (
                    used,
                    busy,
                    float(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)),
                )
            except pynvml.NVMLError:
                return used, busy

        return from_nvml
    except Exception:  # no bindings, no driver: try the command line
        pass
    query = "--query-gpu=memory.used,utilization.gpu,clocks.sm"
    command = ["nvidia-smi", f"--id={index}", query, "--format=csv,noheader,nounits"]

    def from_smi() -> tuple[float, ...]:
        out = subprocess.run(command, capture_output=True, text=True, timeout=10).stdout
        used, busy, *clock = out.split(",")[:3]
        try:  # "[N/A]" where the GPU does not report its clock
            return float(used), float(busy), float(clock[0])
        except (ValueError, IndexError):
            return float(used), float(busy)

    try:
        from_smi()
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    return from_smi


class GpuMeter:
    """``with GpuMeter() as meter: ...``; then ``meter.peak_gib`` and ``meter.busy_share``.

    ``peak_gib`` is the most memory used above the start; both are None without a GPU.
    ``busy_clock_mhz``: the SM clock's (lowest, median) over samples whose window had a kernel
    running, where the reader gives it (read at one instant, so the lowest may catch a gap):
    a clock that stays low under light work would slow eager rows (02's noise).
    """

    def __init__(self, read: Reader | None | str = "nvml", interval_s: float = 0.2):
        self.read = nvml_reader() if read == "nvml" else read
        self.interval_s = interval_s
        self.peak_gib: float | None = None
        self.busy_share: float | None = None
        self.busy_clock_mhz: tuple[float, float] | None = None
        self._stop = threading.Event()
        self._start = self._most = 0.0
        self._busy: list[float] = []
        self._clocks: list[float] = []

    def _poll(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def _sample(self) -> None:
        try:
            used, busy, *clock = self.read()
        except Exception:  # a missed sample is not worth a failed run
            return
        self._most = max(self._most, used)
        self._busy.append(busy)
        if clock and busy > 0:
            self._clocks.append(clock[0])

    def __enter__(self) -> GpuMeter:
        try:
            self._start = self._most = self.read()[0] if self.read is not None else 0.0
        except Exception:  # the driver went away: no numbers, and no failed run
            self.read = None
        if self.read is not None:
            self._thread = threading.Thread(target=self._poll, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.read is None:
            return
        self._stop.set()
        self._thread.join()
        self._sample()
        self.peak_gib = round((self._most - self._start) / 1024, 2)
        self.busy_share = round(statistics.fmean(self._busy) / 100, 3) if self._busy else None
        if self._clocks:
            self.busy_clock_mhz = (min(self._clocks), statistics.median(self._clocks))
