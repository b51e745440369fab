"""The series' figures; imported where a figure is drawn, so ``import helpers`` stays light."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import torch

from helpers.gpu import emulation_tag
from helpers.results import PathResult

#: One colour per family of paths, so that a reader can follow a family across figures.
FAMILIES = ("eager", "torch.compile", "torch-tensorrt", "cuda graph")
COLOURS = dict(zip((*FAMILIES, "other"), sns.color_palette("colorblind", 5), strict=True))


def family(name: str) -> str:
    """The family a path's name belongs to (the last match wins: 'eager + cuda graph')."""
    found = [f for f in FAMILIES if f in name.lower()]
    return found[-1] if found else "other"


def titled(title: str) -> str:
    """The title with ' (EMULATED T4 limits)' on an emulated run, unless it already says so:
    a figure saved alone must not pass for the emulated GPU's speeds."""
    tag = emulation_tag()
    return title if not tag or tag.strip() in title else title + tag


def plot_latency(results: Sequence[PathResult], title: str, path: Path | None = None):
    """Median latency per path with whiskers to p90; paths without a time say why."""
    fig, ax = plt.subplots(figsize=(8, 1.6 + 0.42 * max(len(results), 1)))
    timed = [r.latency.p90_ms for r in results if r.latency]
    right = max(timed, default=1.0)
    for y, result in enumerate(results):
        if result.latency is None:
            ax.text(
                0, y, f" {result.status.upper()}: {result.reason[:70]}", va="center", fontsize=7
            )
            continue
        median, p90 = result.latency.median_ms, result.latency.p90_ms
        ax.barh(
            y, median, xerr=[[0], [p90 - median]], capsize=3, color=COLOURS[family(result.name)]
        )
        ax.text(p90, y, f"  {median:.3g} ms", va="center", fontsize=8)  # right of the whisker
    ax.set_yticks(range(len(results)), [r.name for r in results])
    ax.set_xlim(0, right * 1.35)
    ax.set_ylim(len(results) - 0.4, -0.6)  # first path on top, room under the last one
    ax.set_xlabel("latency per batch, ms (bar: median, whisker: p90)")
    ax.set_title(textwrap.fill(titled(title), 75), fontsize=9)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig


def plot_length_sweep(medians, batch_size: int, title: str, path: Path | None = None):
    """Median latency per path (columns) against the sequence length (the index), log-log."""
    ax = medians.plot(marker="o", logy=True, figsize=(7, 3.5))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("sequence length (tokens of real text)")
    ax.set_ylabel(f"median latency per batch of {batch_size}, ms")
    ax.set_title(textwrap.fill(titled(title), 90), fontsize=9)
    ax.figure.tight_layout()
    if path is not None:
        ax.figure.savefig(path, dpi=100)
    return ax.figure


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
    ax.set_xlabel("absolute difference from eager FP32, real tokens only (log scale)")
    ax.set_title(textwrap.fill(titled(title), 80), fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig
