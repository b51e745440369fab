"""Every branch of notebook 10's verdict wording."""

from helpers import tp_claims


def test_change_reads_both_ways():
    assert tp_claims.change(2.0, 1.0) == "2.00x faster"
    assert tp_claims.change(1.0, 3.0) == "3.00x slower"


def test_the_four_h100_numbers_against_the_roofline():
    verdict = tp_claims.four_h100_roofline()
    assert "at most 190 tokens/s with the weights split" in verdict.measured
    assert (
        "280 tokens/s needs 1.5x" in verdict.verdict and "not for FSDP as stated" in verdict.verdict
    )


def test_nccl_fusion_branches():
    assert "needs 2 GPUs" in tp_claims.nccl_fusion(comm_ms=None, steps={}, batch=1, gpus=1).verdict
    gloo = tp_claims.nccl_fusion(comm_ms=3.0, steps={}, batch=1, gpus=2)
    assert "over gloo" in gloo.measured and "not testable" in gloo.verdict
    steps = {"eager generate": (5.0, 30.0), "compiled step": (4.0, 8.0)}
    small = tp_claims.nccl_fusion(comm_ms=0.4, steps=steps, batch=1, gpus=2)
    assert (
        "matters little" in small.verdict
        and "5.0% of a 8.00 ms step of the compiled step" in small.verdict
    )
    large = tp_claims.nccl_fusion(comm_ms=2.0, steps=steps, batch=1, gpus=2)
    assert "it matters here" in large.verdict and "at batch 1 on 2 GPUs" in large.measured
