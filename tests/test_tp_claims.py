"""Every branch of notebook 10's verdict wording; every verdict a person reads in one breath."""

from helpers import tp_claims


def short(verdict) -> bool:
    return len(verdict.verdict.split()) <= 30


def test_change_reads_both_ways():
    assert tp_claims.change(2.0, 1.0) == "2.00x faster"
    assert tp_claims.change(1.0, 3.0) == "3.00x slower"


def test_the_four_h100_numbers_against_the_roofline():
    verdict = tp_claims.four_h100_roofline()
    assert "at most 190 tokens/s with the weights split" in verdict.measured
    assert "published 3.35 TB/s each; NVLink 900 GB/s" in verdict.measured  # 10's markdown cites it
    assert "70 is 37% of the split bound" in verdict.measured
    assert "280 tokens/s needs 1.5x" in verdict.verdict and "not FSDP as stated" in verdict.verdict
    assert short(verdict)


def test_split_speed_branches():
    steps = {"eager generate": (30.0, 40.0), "compiled step": (8.0, 5.0)}
    cpu = tp_claims.split_speed(ideal=1.8, steps=steps, gpus=2, batch=1, on_gpus=False)
    assert "not testable on CPU processes" in cpu.verdict and "over gloo" in cpu.measured
    assert "compiled step: 8.00 ms per step on 1, 5.00 on 2 (1.60x faster)" in cpu.measured
    near = tp_claims.split_speed(ideal=1.8, steps=steps, gpus=2, batch=1, on_gpus=True)
    assert "pays: 1.60x faster on 2 GPUs (compiled step), near the ideal 1.80x" in near.verdict
    part = tp_claims.split_speed(ideal=3.0, steps=steps, gpus=4, batch=1, on_gpus=True)
    assert "pays in part" in part.verdict and "short of the ideal 3.00x" in part.verdict
    slower = {"eager generate": (30.0, 40.0), "compiled step": (5.0, 6.0)}
    none = tp_claims.split_speed(ideal=1.8, steps=slower, gpus=2, batch=1, on_gpus=True)
    assert "does not pay here: no path ran faster on 2 GPUs" in none.verdict
    assert all(map(short, (cpu, near, part, none))) and not near.quote


def test_nccl_fusion_branches():
    assert "needs 2 GPUs" in tp_claims.nccl_fusion(comm_ms=None, steps={}, batch=1, gpus=1).verdict
    gloo = tp_claims.nccl_fusion(comm_ms=3.0, steps={}, batch=1, gpus=2)
    assert "over gloo" in gloo.measured and "not testable" in gloo.verdict
    steps = {"eager generate": (5.0, 30.0), "compiled step": (4.0, 8.0)}
    small = tp_claims.nccl_fusion(comm_ms=0.4, steps=steps, batch=1, gpus=2)
    assert "matters little" in small.verdict and "5.0% of a 8.00 ms step (compiled step)" in (
        small.verdict
    )
    large = tp_claims.nccl_fusion(comm_ms=2.0, steps=steps, batch=1, gpus=2)
    assert "it matters here" in large.verdict and "at batch 1 on 2 GPUs" in large.measured
    assert all(map(short, (gloo, small, large)))


def test_a_slower_split_never_pays_even_when_the_ideal_is_small():
    """Tiny models: an ideal near 1x must not turn a slowdown into 'near the ideal'."""
    slower = {"compiled": (1.0, 1.1)}
    verdict = tp_claims.split_speed(ideal=1.03, steps=slower, gpus=2, batch=1, on_gpus=True)
    assert verdict.verdict.startswith("the split does not pay here")
