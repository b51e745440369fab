"""Interactive views over plain tables: the table prints headless, the widget adds a control."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import torch


def share_over_thresholds(
    diffs: dict[str, torch.Tensor], thresholds: Sequence[float]
) -> pd.DataFrame:
    """Percentage of elements with |diff| above each threshold, one column per path."""
    table = {}
    for name, diff in diffs.items():
        values = diff.detach().float().abs().flatten().cpu()
        table[name] = [100 * float((values > t).float().mean()) for t in thresholds]
    return pd.DataFrame(table, index=pd.Index(list(thresholds), name="threshold"))


def threshold_explorer(diffs: dict[str, torch.Tensor], threshold: float = 0.01):
    """A log-scale slider over the threshold, showing the share of elements above it."""
    import ipywidgets as widgets

    slider = widgets.FloatLogSlider(
        value=threshold, base=10, min=-5, max=0, step=0.1, description="threshold"
    )
    return widgets.interactive(
        lambda threshold: share_over_thresholds(diffs, [threshold]), threshold=slider
    )
