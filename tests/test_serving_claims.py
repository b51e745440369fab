"""Every branch of notebook 09's verdict wording, each verdict at most 30 words."""

import pytest

from helpers import serving_claims as sc

BASE = dict(limit_x=2.4, packed_x=2.6, tpot_x=1.0, step_x=1.0, tokens_per_s=2500, cap=16)
BASE["pass_step_ms"] = (2.0, 2.0)


def words(text: str) -> int:
    return len(text.split())


def test_in_flight_branches():
    assert "delivers 96 %" in sc.in_flight(scheduling_x=2.3, **BASE).verdict
    assert "works, at 62 %" in sc.in_flight(scheduling_x=1.5, **BASE).verdict
    assert "less than 10 %" in sc.in_flight(scheduling_x=1.0, **BASE).verdict
    near_one = sc.in_flight(scheduling_x=0.95, **{**BASE, "limit_x": 1.02}).verdict
    assert "less than 10 %" in near_one  # within 10 % of a limit near 1 is not a delivery
    slower = sc.in_flight(scheduling_x=2.3, **{**BASE, "tpot_x": 1.5}).verdict
    assert (
        "median time per output token 1.50x static's, the step itself no slower: "
        "the extra time falls between steps" in slower
    )
    assert words(slower) <= 30 and "apart" not in slower  # the median, not every token
    dearer_step = sc.in_flight(scheduling_x=2.3, **{**BASE, "tpot_x": 1.5, "step_x": 1.2})
    assert dearer_step.verdict.endswith("1.50x static's")  # no cause it cannot show
    noisy = sc.in_flight(scheduling_x=2.6, **{**BASE, "pass_step_ms": (2.9, 2.0)})
    assert noisy.verdict == sc.NOT_JUDGED and "static batches took 2.90 ms" in noisy.measured
    cpu = sc.in_flight(scheduling_x=2.3, **BASE, gpu=False).verdict
    assert cpu.startswith("not testable on a CPU")


def test_in_flight_names_both_limits():
    measured = sc.in_flight(scheduling_x=1.97, **{**BASE, "limit_x": 1.98}).measured
    assert "first-come-first-served slots on this mix: 1.98x" in measured
    assert "every slot busy on every step: 2.60x" in measured


def test_a_gain_past_the_schedules_limit_is_not_judged():
    within = dict(limit_x=2.43, static_step_ms=2.8, in_flight_step_ms=2.7)
    assert sc.beyond_limit(scheduling_x=2.5, **within) == []
    reasons = sc.beyond_limit(scheduling_x=3.0, **{**within, "static_step_ms": 4.12})
    assert "above the schedule's own limit of 2.43x" in reasons[0]
    assert "4.12 ms per step" in reasons[0]
    verdict = sc.in_flight(scheduling_x=3.0, **BASE).verdict
    assert verdict.startswith("not judged")


PROBES = {
    "nondeterminism": {"rows": 16, "repeat": 12, "moved": 16},
    "slot": {"rows": 16, "repeat": 16, "moved": 15},
    "both": {"rows": 16, "repeat": 12, "moved": 14},
    "neither": {"rows": 16, "repeat": 16, "moved": 16},
}


def test_parting_says_only_what_the_probe_shows():
    said = {name: sc.parting(parted=3, requests=100, probe=p) for name, p in PROBES.items()}
    assert said["nondeterminism"].endswith("through the step's nondeterminism, not the slot")
    assert said["slot"].endswith("a request's slot can tip near-ties")
    assert "cannot tell" in said["both"]
    assert "does not show why" in said["neither"]
    same = sc.parting(parted=0, requests=12, probe=PROBES["slot"])
    assert same == "the two schedulers gave all 12 requests the same tokens"  # a CPU's case
    assert all(words(s) <= 30 for s in [*said.values(), same])


def test_utilization_tests_naive_batching_and_says_what_busy_means():
    verdict = sc.utilization({"a": 20.0, "b": 90.0, "c": None})
    assert verdict.verdict.startswith("b kept the GPU busiest, 90 %")
    assert "; c " not in verdict.measured and "not how well" in verdict.measured
    assert "not testable here" in sc.utilization({"a": None}).verdict
    both = sc.utilization(
        {"padded generate": 25.0, "b": 14.0}, naive="padded generate", in_flight=16
    )
    assert both.verdict == (
        "at 16 in flight, padded generate kept the GPU busy 25 % and b 14 %: "
        "both below the article's 60-70 % for naive batching"
    )  # the 95 %+ is TensorRT-LLM's, which no row runs
    printed = sc.utilization({"g": 59.8, "b": 11.9}, naive="g", in_flight=16)
    assert printed.verdict.endswith("busy 60 % and b 12 %: g within the article's 60-70 %")
    assert "all below" in sc.utilization({"g": 20.0, "b": 9.0, "c": 1.0}, naive="g").verdict
    assert sc.utilization({"g": 20.0}, naive="g").verdict.endswith(
        ": g below the article's 60-70 %"
    )
    assert "g within the article's" in sc.utilization({"g": 65.0, "b": 9.0}, naive="g").verdict
    assert "g above the article's" in sc.utilization({"g": 75.0}, naive="g").verdict


def test_an_emulated_busy_share_is_not_judged(monkeypatch):
    monkeypatch.setenv("SERIES_EMULATE", "t4")
    emulated = sc.utilization({"g": 70.0, "b": 71.0}, naive="g", in_flight=16)
    assert emulated.verdict == (
        "not judged: T4 limits emulated, so the busy share is this GPU's, not a T4's"
    )
    assert emulated.measured.startswith("g 70 %; b 71 %")


def test_paged_inside_and_outside_the_range():
    assert sc.paged(gain=2.5, gain_known=1.5, block_size=256).verdict == (
        "KV bytes alone: 2.50x, inside the article's 2-3x"
    )
    assert sc.paged(gain=5.0, gain_known=1.5, block_size=256).verdict.endswith(
        "outside the article's 2-3x"
    )
    masked = sc.paged(gain=2.27, gain_known=1.9975, block_size=256, with_mask=1.52)
    assert masked.verdict.endswith("; transformers' batcher with its dense mask: 1.52x, outside")
    assert "1.52x counting" in masked.measured and "(1.998x against" in masked.measured
    assert (
        "arithmetic, not measured" in sc.linear_4x().measured and "1.7x" in sc.linear_4x().measured
    )


def test_a_ratio_next_to_the_articles_bounds_shows_its_side():
    assert [sc.ratio(x) for x in (2.2677, 1.9975, 2.0, 3.004, 1.5)] == [
        "2.27x",
        "1.998x",
        "2.00x",
        "3.004x",
        "1.50x",
    ]


NAMES = ("padded generate", "continuous batching, transformers")


@pytest.mark.parametrize(
    "verdict",
    [
        sc.in_flight(scheduling_x=x, **{**BASE, "tpot_x": 1.39}, gpu=g)
        for x in (1.0, 1.5, 2.3, 3.0)
        for g in (True, False)
    ]
    + [
        sc.utilization(dict.fromkeys(NAMES, 30.0), naive=NAMES[0], in_flight=16),
        sc.utilization(dict(zip(NAMES, (65.0, 30.0), strict=True)), naive=NAMES[0], in_flight=16),
        sc.utilization(dict.fromkeys(NAMES, 30.0)),
        sc.utilization({}),
        sc.linear_4x(),
        sc.paged(gain=2.3, gain_known=1.9975, block_size=256, with_mask=1.6),
    ],
)
def test_every_verdict_is_at_most_30_words_and_never_says_rerun(verdict):
    assert words(verdict.verdict) <= 30, verdict.verdict
    assert "rerun" not in f"{verdict.measured} {verdict.verdict}"
