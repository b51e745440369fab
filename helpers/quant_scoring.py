"""Notebook 06's scores: what a quantized path does to FP32's answers on the sentence pairs.

A quantized engine is gated against its own simulated model (is it computing what was
calibrated?); these scores put every path, simulated or built, beside FP32 itself on the
task the series judges (notebook 04): how the pairs rank, and which sentence is most like
each sentence. The size of an engine tells whether its weights were stored in 8 bits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F

from helpers.accuracy import compare_outputs, nearest_neighbour_agreement


def run_in_batches(fn: Callable, inputs: Sequence[torch.Tensor], batch: int) -> torch.Tensor:
    """``fn``'s output over ``inputs`` in slices of at most ``batch`` rows (an engine's range)."""
    rows = len(inputs[0])
    with torch.inference_mode():
        outputs = [fn(*(x[i : i + batch] for x in inputs)) for i in range(0, rows, batch)]
    return torch.cat([out.float() for out in outputs])


def pair_cosines(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Cosine of each pair's mean-pooled sentence embeddings (rows 0 and 1, 2 and 3, ...)."""
    mask = attention_mask.cpu().unsqueeze(-1).float()
    pooled = (hidden.float().cpu() * mask).sum(1) / mask.sum(1).clamp(min=1)
    pooled = F.normalize(pooled, dim=-1)
    return (pooled[0::2] * pooled[1::2]).sum(-1)


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation (ties share their mean rank)."""
    import pandas as pd  # only where a notebook scores; `import helpers` stays light

    return float(pd.Series(list(a)).corr(pd.Series(list(b)), method="spearman"))


def task_scores(
    reference: torch.Tensor,
    output: torch.Tensor,
    attention_mask: torch.Tensor,
    human_scores: Sequence[float],
    threshold: float = 0.01,
) -> dict[str, float]:
    """One path's row: the post's element statistics over real tokens, the worst token's
    cosine, Spearman against the pairs' human scores and against FP32's pair cosines, and
    the share of sentences whose nearest neighbour is FP32's."""
    diff = compare_outputs(reference, output, threshold, attention_mask=attention_mask)
    cosines = pair_cosines(output, attention_mask)
    return {
        "max_abs": diff.max_abs,
        "mean_abs": diff.mean_abs,
        "% > threshold": 100 * diff.share_over_threshold,
        "min_cosine": diff.min_cosine,
        "spearman_vs_scores": spearman(cosines.tolist(), human_scores),
        "spearman_vs_fp32": spearman(cosines.tolist(), pair_cosines(reference, attention_mask)),
        "neighbours_kept": nearest_neighbour_agreement(reference, output, attention_mask),
    }


def engine_mib(compiled: torch.nn.Module) -> float | None:
    """Size of the serialized TensorRT engines inside a compiled module: weights and kernels."""
    sizes = [getattr(m, "serialized_engine", None) for m in compiled.modules()]
    total = sum(len(s) for s in sizes if isinstance(s, (bytes, bytearray)))
    return total / 2**20 if total else None


def eight_bit_saving_mib(quantized: torch.nn.Module) -> float:
    """MiB an engine saves against FP16 when the weights modelopt quantizes are stored in
    8 bits: one byte per weight of each layer whose weight quantizer is on."""
    weights = [
        m.weight.numel()
        for m in quantized.modules()
        if getattr(getattr(m, "weight_quantizer", None), "is_enabled", False)
    ]
    return sum(weights) / 2**20
