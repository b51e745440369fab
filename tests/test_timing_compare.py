import math
import time

import pytest
import torch

from helpers.compare import (
    AccuracyError,
    check_accuracy,
    compare_outputs,
    mean_pool,
    nearest_neighbour_agreement,
)
from helpers.timing import LatencyStats, benchmark_latency, time_single_call


def test_latency_stats_percentiles():
    stats = LatencyStats.from_samples([float(i) for i in range(1, 101)], "test")
    assert stats.median_ms == pytest.approx(50.5)
    assert stats.p90_ms == pytest.approx(90.1)
    assert stats.p99_ms == pytest.approx(99.01)
    assert stats.count == 100 and stats.min_ms == 1.0
    assert stats.std_ms == pytest.approx(29.011, abs=1e-3)


def test_latency_stats_needs_samples():
    with pytest.raises(ValueError):
        LatencyStats.from_samples([], "test")


def test_benchmark_measures_a_known_sleep():
    stats = benchmark_latency(lambda: time.sleep(0.01), "cpu", warmup=1, iterations=5)
    assert stats.count == 5
    assert 9.5 <= stats.median_ms < 50


def test_benchmark_stops_at_max_seconds_and_reports_the_count():
    stats = benchmark_latency(lambda: time.sleep(0.02), "cpu", 0, 1000, max_seconds=0.1)
    assert 1 <= stats.count < 20


@pytest.mark.parametrize("warmup,iterations", [(-1, 5), (0, 0)])
def test_benchmark_rejects_bad_counts(warmup, iterations):
    with pytest.raises(ValueError):
        benchmark_latency(lambda: None, "cpu", warmup, iterations)


def test_single_call_timer():
    assert time_single_call(lambda: time.sleep(0.01), "cpu") >= 0.0095


def test_compare_outputs_statistics():
    ref = torch.zeros(2, 3, 4)
    out = ref.clone()
    out[0, 0, 0] = 0.5
    out[1, 2, 3] = -0.005
    diff = compare_outputs(ref + 1, out + 1, threshold=0.01)
    assert diff.max_abs == pytest.approx(0.5)
    assert diff.min_abs == 0.0
    assert diff.share_over_threshold == pytest.approx(1 / 24)
    assert diff.finite and diff.min_cosine < 1.0


def test_shape_mismatch_is_an_accuracy_error():
    with pytest.raises(AccuracyError, match="shape"):
        compare_outputs(torch.zeros(2, 3), torch.zeros(3, 2))


def test_gate_passes_fp16_rounding_and_fails_a_wrong_output():
    torch.manual_seed(0)
    ref = torch.randn(4, 8, 16)
    check_accuracy(compare_outputs(ref, ref.half().float()), "fp16")
    with pytest.raises(AccuracyError, match="WRONG"):
        check_accuracy(compare_outputs(ref, ref.flip(1)), "fp16", "flipped")


def test_gate_fails_nan_even_when_other_statistics_look_fine():
    ref = torch.ones(2, 2, 2)
    out = ref.clone()
    out[0, 0, 0] = math.nan
    with pytest.raises(AccuracyError, match="NaN"):
        check_accuracy(compare_outputs(ref, out), "fp32")


def test_fp32_gate_is_stricter_than_fp16():
    ref = torch.ones(1, 4, 8)
    diff = compare_outputs(ref, ref + 0.05)
    check_accuracy(diff, "fp16")
    with pytest.raises(AccuracyError):
        check_accuracy(diff, "fp32")


def test_mean_pool_ignores_padding():
    hidden = torch.tensor([[[1.0], [3.0], [100.0]]])
    mask = torch.tensor([[1, 1, 0]])
    assert mean_pool(hidden, mask).item() == 2.0


def test_nearest_neighbour_agreement_detects_a_shuffled_output():
    torch.manual_seed(0)
    ref = torch.randn(8, 5, 16)
    mask = torch.ones(8, 5, dtype=torch.int32)
    assert nearest_neighbour_agreement(ref, ref + 1e-4, mask) == 1.0
    assert nearest_neighbour_agreement(ref, torch.randn(8, 5, 16), mask) < 1.0
