"""The runner's peak GPU memory, read from a fake driver."""

import time

from helpers.tools.gpu_peak import PeakMemory


def test_the_peak_is_the_most_used_above_the_start():
    readings = iter([1024.0, 2048.0, 9 * 1024.0, 3072.0])
    last = [1024.0]

    def read() -> float:
        last[0] = next(readings, last[0])
        return last[0]

    with PeakMemory(read, interval_s=0.01) as peak:
        time.sleep(0.1)
    assert peak.gib == 8.0


def test_no_gpu_gives_no_peak():
    with PeakMemory(read=None) as peak:
        pass
    assert peak.gib is None

    def broken() -> float:
        raise OSError("no driver")

    with PeakMemory(broken, interval_s=0.01) as peak:
        time.sleep(0.03)
    assert peak.gib is None
