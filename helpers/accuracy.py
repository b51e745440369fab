"""How far a fast path's output is from the FP32 reference, and when that is wrong.

Lower precision moves outputs a little everywhere; a broken engine (a wrong mask, a bad
cast) moves them a lot or gives NaN. The gate tells the two apart. Statistics can be
restricted to real tokens: padding positions are outputs nobody reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from helpers.errors import AccuracyError

#: Gate per precision: (max abs diff, min cosine similarity) against eager FP32.
TOLERANCES = {torch.float32: (1e-2, 0.9999), torch.float16: (1e-1, 0.999)}
TOLERANCES[torch.bfloat16] = (2e-1, 0.995)


@dataclass(frozen=True)
class OutputDiff:
    """Element-wise and per-token agreement between two outputs."""

    max_abs: float
    mean_abs: float
    share_over_threshold: float  # fraction of compared elements with |diff| > threshold
    threshold: float
    min_cosine: float  # worst token's cosine similarity of hidden vectors
    finite: bool
    elements: int  # how many elements were compared

    def __str__(self) -> str:
        return (
            f"max {self.max_abs:.4g}, mean {self.mean_abs:.3g}, "
            f"{100 * self.share_over_threshold:.3f}% of {self.elements} elements > "
            f"{self.threshold:g}, min cosine {self.min_cosine:.6f}"
        )


def compare_outputs(
    reference: torch.Tensor,
    candidate: torch.Tensor,
    threshold: float = 0.01,
    attention_mask: torch.Tensor | None = None,
) -> OutputDiff:
    """Statistics of |candidate - reference| in float32, over real tokens if a mask is given."""
    if reference.shape != candidate.shape:
        raise AccuracyError(
            f"output shape {tuple(candidate.shape)} differs from the reference "
            f"{tuple(reference.shape)}"
        )
    ref = reference.detach().float().cpu().flatten(0, -2)
    out = candidate.detach().float().cpu().flatten(0, -2)
    if attention_mask is not None:
        keep = attention_mask.detach().cpu().flatten().bool()
        ref, out = ref[keep], out[keep]
    diff = (out - ref).abs()
    return OutputDiff(
        max_abs=float(diff.max()),
        mean_abs=float(diff.mean()),
        share_over_threshold=float((diff > threshold).float().mean()),
        threshold=threshold,
        min_cosine=float(F.cosine_similarity(out, ref, dim=-1).min()),
        finite=bool(torch.isfinite(out).all()),
        elements=diff.numel(),
    )


def check_accuracy(
    diff: OutputDiff,
    dtype: torch.dtype,
    name: str = "compiled model",
    tolerance: tuple[float, float] | None = None,
) -> None:
    """Raise AccuracyError if ``diff`` is beyond the gate of ``dtype``.

    ``dtype`` is the precision the path was asked for, which is its output's dtype unless an
    engine returns another (an FP16 engine may hand back FP32 tensors). ``tolerance`` (max
    abs diff, min cosine) replaces the dtype's gate, e.g. for a quantized engine judged
    against its own simulated model.
    """
    max_abs, min_cosine = tolerance or TOLERANCES.get(dtype, TOLERANCES[torch.float32])
    problems = []
    if not diff.finite:
        problems.append("output contains NaN or Inf")
    if not diff.max_abs <= max_abs:
        problems.append(f"max abs diff {diff.max_abs:.4g} > {max_abs:g}")
    if not diff.min_cosine >= min_cosine:
        problems.append(f"min cosine similarity {diff.min_cosine:.6f} < {min_cosine:g}")
    if problems and tolerance:  # e.g. a quantized engine against its simulation: a gate, not a bug
        raise AccuracyError(f"{name} is outside its gate ({'; '.join(problems)}); not timed")
    if problems:
        raise AccuracyError(
            f"{name} gives WRONG outputs against eager FP32 ({'; '.join(problems)}); do not use "
            "its timings: find what differs from the reference (for a compiled model its "
            "settings, e.g. attn_bias_is_causal; for any model its inputs and mask)"
        )


def nearest_neighbour_agreement(
    reference: torch.Tensor, candidate: torch.Tensor, attention_mask: torch.Tensor
) -> float:
    """Share of sentences whose most similar other sentence is the same under both outputs."""

    def neighbours(hidden: torch.Tensor) -> torch.Tensor:
        mask = attention_mask.cpu().unsqueeze(-1).float()
        pooled = (hidden.float().cpu() * mask).sum(1) / mask.sum(1).clamp(
            min=1
        )  # mean of real tokens
        embeddings = F.normalize(pooled, dim=-1)
        similarity = embeddings @ embeddings.T
        similarity.fill_diagonal_(-2.0)
        return similarity.argmax(dim=1)

    return float((neighbours(reference) == neighbours(candidate)).float().mean())
