"""The runner's GPU meter, read from a fake driver."""

import time

import pytest
import torch

from helpers.tools.gpu_peak import GpuMeter, nvml_reader


def test_the_peak_is_the_most_used_above_the_start_and_busy_is_the_mean():
    readings = iter([(1024.0, 0.0), (2048.0, 50.0), (9 * 1024.0, 100.0), (3072.0, 50.0)])
    last = [(1024.0, 0.0)]

    def read():
        last[0] = next(readings, last[0])
        return last[0]

    with GpuMeter(read, interval_s=0.01) as meter:
        time.sleep(0.2)
    assert meter.peak_gib == 8.0
    assert 0.4 < meter.busy_share < 0.6  # mostly the last reading, 50 %


def test_no_gpu_gives_no_numbers():
    if not torch.cuda.is_available():
        assert nvml_reader() is None  # a machine without a GPU has no driver to read
    with GpuMeter(read=None) as meter:
        pass
    assert meter.peak_gib is None and meter.busy_share is None

    def broken():
        raise OSError("no driver")

    with GpuMeter(broken, interval_s=0.01) as meter:
        time.sleep(0.03)
    assert meter.peak_gib is None


@pytest.mark.parametrize("gib", [0.0, 14.99])
def test_a_flat_reading_is_its_own_peak(gib):
    with GpuMeter(lambda: (1024 * gib, 0.0), interval_s=0.01) as meter:
        time.sleep(0.03)
    assert meter.peak_gib == 0.0 and meter.busy_share == 0.0


def test_the_sm_clock_is_read_only_while_a_kernel_runs():
    readings = iter([(1024.0, 0.0, 345.0), (2048.0, 40.0, 1200.0), (2048.0, 90.0, 1980.0)])
    last = [(1024.0, 0.0, 345.0)]

    def read():
        last[0] = next(readings, last[0])
        return last[0]

    with GpuMeter(read, interval_s=0.01) as meter:
        time.sleep(0.1)
    assert meter.busy_clock_mhz == (1200.0, 1980.0)  # the idle 345 MHz is left out
    with GpuMeter(lambda: (1024.0, 50.0), interval_s=0.01) as meter:  # no clock to read
        time.sleep(0.03)
    assert meter.busy_clock_mhz is None


def test_nvidia_smi_without_a_clock_still_gives_memory_and_busy(monkeypatch):
    import subprocess
    import sys

    monkeypatch.setitem(sys.modules, "pynvml", None)  # no NVML bindings: the command line
    answer = subprocess.CompletedProcess([], 0, stdout="1024, 50, [N/A]\n", stderr="")
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: answer)
    assert nvml_reader()() == (1024.0, 50.0)
    answer.stdout = "2048, 90, 1980\n"
    assert nvml_reader()() == (2048.0, 90.0, 1980.0)
