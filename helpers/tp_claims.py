"""Notebook 10's verdicts: the article's tensor-parallel claims against a run and a roofline.

The notebook measures a step's time, GPU compute and all-reduces on one GPU and on
several; these functions word what the numbers mean, so that every branch has a test.
"""

from __future__ import annotations

from helpers.claims import H100_TB_S, PARAMS_70B, Verdict

FOUR_H100 = (
    "In our 4x H100 NVLink setup, TensorRT-LLM achieves 280 tokens/second for Llama 3.1 70B "
    "(batch size 1, FP8), while PyTorch with FSDP and the same hardware achieves 70 tokens/second"
)
NCCL = (
    "PyTorch's NCCL backend, while fast, does not fuse the communication with computation as "
    "tightly"
)
#: NVIDIA's published NVLink bandwidth between H100s, each way (900 GB/s both together).
NVLINK_GB_S = 900 / 2


def change(before_ms: float, after_ms: float) -> str:
    """'1.80x faster' or '3.00x slower', from one time per step to another."""
    gain = before_ms / after_ms
    return f"{gain:.2f}x faster" if gain >= 1 else f"{1 / gain:.2f}x slower"


def four_h100_roofline() -> Verdict:
    """280 and 70 tokens/s against one pass over the weights per token, split or gathered."""
    split = 4 * H100_TB_S * 1e12 / PARAMS_70B  # tokens/s: each GPU reads a quarter
    gathered = H100_TB_S * 1e12 / PARAMS_70B  # every GPU reads all the weights
    regathered = NVLINK_GB_S * 1e9 / (3 / 4 * PARAMS_70B)  # every GPU receives 3/4 of them
    measured = (
        f"at one pass over {PARAMS_70B / 1e9:.1f} GB of weights per token, four H100s allow at "
        f"most {split:.0f} tokens/s with the weights split; {gathered:.0f} with every GPU reading "
        f"all of them; {regathered:.1f} if FSDP gathers every layer over NVLink for every token"
    )
    verdict = (
        f"TensorRT-LLM's 280 tokens/s needs {280 / split:.1f}x what four H100s allow with the "
        "weights split: not possible with one pass over the weights per token (speculative "
        "decoding, which the article also names, changes that arithmetic); PyTorch's 70 tokens/s "
        f"is {100 * 70 / split:.0f}% of the split bound but above both FSDP bounds: possible for "
        "a tensor-parallel split, not for FSDP as stated"
    )
    return Verdict(FOUR_H100, measured, verdict)


def nccl_fusion(
    *, comm_ms: float | None, steps: dict[str, tuple[float, float]], batch: int, gpus: int
) -> Verdict:
    """The article's NCCL claim: what overlapping this step's all-reduces could save at most.

    ``steps`` maps each path to (GPU compute ms, step ms) on ``gpus`` GPUs; empty on a CPU.
    """
    if comm_ms is None:
        return Verdict(NCCL, "not measured here (needs 2 GPUs)", "not testable here (needs 2 GPUs)")
    if not steps:
        measured = (
            f"over gloo, one step's all-reduces alone took {comm_ms:.2f} ms: the mechanics, not "
            "comparable with NCCL (needs 2 GPUs)"
        )
        return Verdict(NCCL, measured, "not testable here (needs 2 GPUs)")
    measured = f"one step's all-reduces alone: {comm_ms:.3f} ms; " + "; ".join(
        f"{path}: {compute:.2f} ms of GPU compute in a {step:.2f} ms step"
        for path, (compute, step) in steps.items()
    )
    last, (_, step_ms) = list(steps.items())[-1]
    share = comm_ms / step_ms
    matters = "it matters little here" if share < 0.1 else "it matters here"
    verdict = (
        "true of this plan, where each all-reduce waits for the matrix product before it and "
        f"nothing is fused or overlapped; {matters}: "
        f"perfect overlap could save at most about {100 * share:.1f}% of a {step_ms:.2f} ms step "
        f"of the {last} (its all-reduces timed alone, {comm_ms:.3f} ms); PyTorch's fused "
        "collective matrix products (async tensor parallelism) need a sequence-parallel plan, "
        "which this one is not"
    )
    return Verdict(NCCL, f"{measured}, at batch {batch} on {gpus} GPUs", verdict)
