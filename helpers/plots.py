"""The two pictures of the series: latency bars and the distribution of differences."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import torch

from helpers.benchmark import PathResult


def plot_latency(results: Sequence[PathResult], title: str, path: Path | None = None):
    """Median latency per path with whiskers to p90 (paths that did not run are left out)."""
    measured = [r for r in results if r.latency is not None]
    fig, ax = plt.subplots(figsize=(7, 1.5 + 0.45 * max(len(measured), 1)))
    if measured:
        medians = np.array([r.latency.median_ms for r in measured])
        p90 = np.array([r.latency.p90_ms for r in measured])
        ax.barh(
            [r.name for r in measured],
            medians,
            xerr=[np.zeros_like(medians), p90 - medians],
            color=sns.color_palette("colorblind", len(measured)),
            capsize=3,
        )
        for y, value in enumerate(medians):
            ax.text(value, y, f" {value:.3g} ms", va="center", fontsize=8)
        ax.invert_yaxis()
    ax.set_xlabel("latency per batch, ms (bar: median, whisker: p90)")
    ax.set_title(textwrap.fill(title, 80), fontsize=9)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig


def plot_abs_diff_kde(
    diffs: dict[str, torch.Tensor], title: str, threshold: float, path: Path | None = None
):
    """KDE of |output - reference| per compared path, on a log scale, with the threshold."""
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for label, diff in diffs.items():
        values = diff.detach().float().abs().flatten().cpu().numpy()
        values = values[values > 0]  # log scale; exact matches are counted in the text
        if values.size > 200_000:  # a KDE does not need every element
            values = np.random.default_rng(0).choice(values, 200_000, replace=False)
        sns.kdeplot(x=values, ax=ax, label=label, log_scale=True, fill=True, alpha=0.3)
    ax.axvline(threshold, color="black", linestyle="--", label=f"threshold {threshold:g}")
    ax.set_xlabel("absolute difference from eager FP32 (log scale)")
    ax.set_title(textwrap.fill(title, 80), fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig
