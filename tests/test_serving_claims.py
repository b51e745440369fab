"""Every branch of notebook 09's verdict wording."""

from helpers import serving_claims as sc
from helpers.claims import TOO_NOISY

BASE = dict(limit_x=2.4, packed_x=2.6, tpot_x=1.0, tokens_per_s=2500, cap=16, noisy=[])


def test_in_flight_branches():
    assert "delivers 96 %" in sc.in_flight(scheduling_x=2.3, **BASE).verdict
    assert "works, at 62 %" in sc.in_flight(scheduling_x=1.5, **BASE).verdict
    assert "bought nothing" in sc.in_flight(scheduling_x=1.0, **BASE).verdict
    near_one = sc.in_flight(scheduling_x=0.95, **{**BASE, "limit_x": 1.02}).verdict
    assert "bought nothing" in near_one  # within 10 % of a limit near 1 is not a delivery
    slower = sc.in_flight(scheduling_x=2.3, **{**BASE, "tpot_x": 1.5}).verdict
    assert "1.50x as far apart" in slower
    noisy = sc.in_flight(scheduling_x=2.3, **{**BASE, "noisy": ["rounds drifted"]}).verdict
    assert TOO_NOISY in noisy


def test_in_flight_names_both_limits():
    measured = sc.in_flight(scheduling_x=1.97, **{**BASE, "limit_x": 1.98}).measured
    assert "first-come-first-served slots on this mix: 1.98x" in measured
    assert "every slot busy on every step: 2.60x" in measured


def test_a_gain_past_the_schedules_limit_is_too_noisy_to_read():
    within = dict(limit_x=2.43, static_step_ms=2.8, in_flight_step_ms=2.7)
    assert sc.beyond_limit(scheduling_x=2.5, **within) == []
    reasons = sc.beyond_limit(scheduling_x=3.0, **{**within, "static_step_ms": 4.12})
    assert "above the schedule's own limit of 2.43x" in reasons[0]
    assert "4.12 ms per step" in reasons[0]
    assert "too noisy" in sc.in_flight(scheduling_x=3.0, **{**BASE, "noisy": reasons}).verdict


def test_utilization_names_the_busiest_and_what_busy_means():
    verdict = sc.utilization({"a": 20.0, "b": 90.0, "c": None})
    assert "b kept the GPU busiest (90 %)" in verdict.verdict and "c" not in verdict.measured
    assert "measure it" in sc.utilization({"a": None}).verdict
    naive = sc.utilization({"generate": 20.0, "b": 90.0}, naive="generate").verdict
    assert naive.startswith("generate (naive batching) 20 %, below the article's 60-70 %")
    assert "within the article's" in sc.utilization({"g": 65.0}, naive="g").verdict


def test_paged_inside_and_outside_the_range():
    assert "inside" in sc.paged(gain=2.5, gain_known=1.5, block_size=256).verdict
    assert "outside" in sc.paged(gain=5.0, gain_known=1.5, block_size=256).verdict
    masked = sc.paged(gain=2.3, gain_known=1.9, block_size=256, with_mask=1.5)
    assert "inside the article's 2-3x for this mix, on KV bytes alone" in masked.verdict
    assert masked.verdict.endswith("beside it, 1.5x") and "1.5x counting" in masked.measured
    assert "1.7x" in sc.linear_4x().measured
