"""Check a notebook's parameters before any model loads, one clear line per mistake.

The first code cell after the parameters calls ``check_parameters``; the series runner
calls it too, before any notebook starts, so a typo fails once and fast.
"""

from __future__ import annotations

from pathlib import Path

import torch

from helpers.environment import resolve_device
from helpers.errors import ParameterError
from helpers.trt_compat import check_precision
from helpers.workload import check_workload, load_config

#: Tokens per batch above which a CPU run is refused: 8x the seed workload (16 x 32). A
#: roberta-base call grows at least linearly with tokens, so 64 x 512 (64x) takes minutes.
CPU_TOKEN_LIMIT = 4096


def _check_count(name: str, value, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ParameterError(f"{name}={value!r} must be an integer >= {minimum}")


def check_parameters(
    *,
    model_name: str,
    batch_size: int,
    seq_len: int,
    device: str = "auto",
    precision: str | None = None,
    warmup: int | None = None,
    iterations: int | None = None,
    max_seconds: float | None = None,
    threshold: float | None = None,
    output_dir: str | None = None,
) -> torch.device:
    """Validate every parameter given (None: not used by this notebook); return the device.

    Raises a ParameterError, ModelNotAvailableError or DeviceUnavailableError whose
    message says what to change.
    """
    if precision is not None:
        check_precision(precision)
    if warmup is not None:
        _check_count("warmup", warmup, 0)
    if iterations is not None:
        _check_count("iterations", iterations, 1)
    if max_seconds is not None and not (isinstance(max_seconds, int | float) and max_seconds > 0):
        raise ParameterError(f"max_seconds={max_seconds!r} must be a number > 0")
    if threshold is not None and not (isinstance(threshold, int | float) and threshold > 0):
        raise ParameterError(f"threshold={threshold!r} must be a number > 0")
    if output_dir is not None:
        parent = Path(output_dir).expanduser().parent
        if Path(output_dir).expanduser().is_absolute() and not parent.is_dir():
            raise ParameterError(f"output_dir={output_dir!r}: no such folder {str(parent)!r}")
    resolved = resolve_device(device)
    _check_count("batch_size", batch_size, 1)
    _check_count("seq_len", seq_len, 2)
    check_workload(batch_size, seq_len, config=load_config(model_name), model_name=model_name)
    if resolved.type == "cpu" and batch_size * seq_len > CPU_TOKEN_LIMIT:
        raise ParameterError(
            f"batch {batch_size} x {seq_len} = {batch_size * seq_len} tokens per call is too "
            f"slow for a CPU (limit {CPU_TOKEN_LIMIT}, e.g. 16 x 256); run it on a GPU"
        )
    return resolved
