"""How far a fast path's output is from the FP32 reference, and when that is wrong.

Lower precision changes outputs a little everywhere; a broken engine (a wrong mask,
a bad cast) changes them a lot or produces NaN. The accuracy gate tells these apart.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F


class AccuracyError(AssertionError):
    """A compiled model's output is wrong, not merely less precise."""


#: Gates per precision: (max abs diff, min cosine similarity) against eager FP32.
TOLERANCES = {"fp32": (1e-2, 0.9999), "fp16": (1e-1, 0.999)}


@dataclass(frozen=True)
class OutputDiff:
    """Element-wise and per-token agreement between two outputs."""

    max_abs: float
    min_abs: float
    mean_abs: float
    share_over_threshold: float  # fraction of elements with |diff| > threshold
    threshold: float
    min_cosine: float  # worst token's cosine similarity of hidden vectors
    mean_cosine: float
    finite: bool

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return (
            f"max {self.max_abs:.4g}, min {self.min_abs:.3g}, mean {self.mean_abs:.3g}, "
            f"{100 * self.share_over_threshold:.2f}% of elements > {self.threshold:g}, "
            f"min cosine {self.min_cosine:.6f}"
        )


def compare_outputs(
    reference: torch.Tensor, candidate: torch.Tensor, threshold: float = 0.01
) -> OutputDiff:
    """Statistics of |candidate - reference| over all elements, in float32."""
    if reference.shape != candidate.shape:
        raise AccuracyError(
            f"output shape {tuple(candidate.shape)} differs from the reference "
            f"{tuple(reference.shape)}"
        )
    ref = reference.detach().float().cpu()
    out = candidate.detach().float().cpu()
    diff = (out - ref).abs()
    finite = bool(torch.isfinite(out).all())
    cosine = F.cosine_similarity(out.flatten(0, -2), ref.flatten(0, -2), dim=-1)
    return OutputDiff(
        max_abs=float(diff.max()),
        min_abs=float(diff.min()),
        mean_abs=float(diff.mean()),
        share_over_threshold=float((diff > threshold).float().mean()),
        threshold=threshold,
        min_cosine=float(cosine.min()),
        mean_cosine=float(cosine.mean()),
        finite=finite,
    )


def check_accuracy(
    diff: OutputDiff,
    precision: str,
    name: str = "compiled model",
    max_abs: float | None = None,
    min_cosine: float | None = None,
) -> None:
    """Raise AccuracyError if ``diff`` is beyond the gate for ``precision``."""
    default_abs, default_cos = TOLERANCES[precision]
    max_abs = default_abs if max_abs is None else max_abs
    min_cosine = default_cos if min_cosine is None else min_cosine
    problems = []
    if not diff.finite:
        problems.append("output contains NaN or Inf")
    if not diff.max_abs <= max_abs:
        problems.append(f"max abs diff {diff.max_abs:.4g} > {max_abs:g}")
    if not diff.min_cosine >= min_cosine:
        problems.append(f"min cosine similarity {diff.min_cosine:.6f} < {min_cosine:g}")
    if problems:
        raise AccuracyError(
            f"{name} ({precision}) gives WRONG outputs against eager FP32: "
            + "; ".join(problems)
            + ". Do not use its timings; check the compile settings (e.g. attn_bias_is_causal) "
            "and the inputs' dtypes."
        )


def mean_pool(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Sentence embeddings: the mean of hidden states over real (unpadded) tokens."""
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)


def nearest_neighbour_agreement(
    reference: torch.Tensor, candidate: torch.Tensor, attention_mask: torch.Tensor
) -> float:
    """Share of sentences whose nearest other sentence is the same under both outputs.

    A downstream check: does lower precision change which sentences look alike?
    """

    def neighbours(hidden: torch.Tensor) -> torch.Tensor:
        embeddings = F.normalize(mean_pool(hidden.float().cpu(), attention_mask.cpu()), dim=-1)
        similarity = embeddings @ embeddings.T
        similarity.fill_diagonal_(-2.0)
        return similarity.argmax(dim=1)

    return float((neighbours(reference) == neighbours(candidate)).float().mean())
