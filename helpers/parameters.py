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
from helpers.workload import check_workload, load_config, model_kind

#: Tokens per batch above which a CPU run is refused: 8x the seed workload (16 x 32). A
#: roberta-base call grows at least linearly with tokens, so 64 x 512 (64x) takes minutes.
CPU_TOKEN_LIMIT = 4096

#: Per kind of model: how to name it, the series runner's option for it, and an example.
MODEL_KINDS = {
    "encoder": ("an encoder", "--model-name", "roberta-base"),
    "decoder": ("a decoder", "--decoder-name", "meta-llama/Llama-3.2-1B"),
}


#: Parameters this notebook run changed for its machine: name -> given, used and why.
ADJUSTED: dict[str, dict] = {}


def adjust(name: str, given, used, why: str):
    """``used`` in place of the given value on this machine, printed and recorded as changed.

    A value changed without a word would make the saved parameters say what did not run.
    """
    if used != given:
        ADJUSTED[name] = {"given": given, "used": used, "why": why}
        print(f"{name}: {given!r} -> {used!r} ({why})")
    return used


def check_count(name: str, value, minimum: int) -> None:
    """A whole number >= minimum: papermill's -p turns '1.5' into a float, 'x' into text."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ParameterError(f"{name}={value!r} must be an integer >= {minimum}")


def check_counts(name: str, values, minimum: int = 1) -> None:
    """A non-empty list of whole numbers >= minimum; papermill's -p passes a list as text."""
    if isinstance(values, list) and values and all(type(v) is int and v >= minimum for v in values):
        return
    text = (
        f"; papermill's -p passes text, -y '{name}: {values}' a list"
        if isinstance(values, str)
        else ""
    )
    raise ParameterError(f"{name}={values!r} must be a list of integers >= {minimum}{text}")


def check_choice(name: str, value, choices: tuple[str, ...]) -> None:
    """One of ``choices``, named in the error."""
    if value not in choices:
        raise ParameterError(f"{name}={value!r}: use one of {', '.join(map(repr, choices))}")


def check_fits_one_gpu(model_name: str, *, tokens: int, batch: int, gpu_gib: float) -> None:
    """Refuse, before loading, a model whose bf16 weights and KV cache exceed one GPU."""
    from transformers import AutoModelForCausalLM

    config = load_config(model_name)
    with torch.device("meta"):  # counts the parameters without allocating them
        parameters = AutoModelForCausalLM.from_config(config).num_parameters()
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    # a key and a value per layer and key-value head, 2 bytes each in bfloat16
    kv_bytes_per_token = 2 * config.num_hidden_layers * config.num_key_value_heads * head_dim * 2
    need_gib = (2 * parameters + kv_bytes_per_token * batch * tokens) / 2**30
    if need_gib > gpu_gib:
        raise ParameterError(
            f"{model_name} needs at least {need_gib:.1f} GiB on one GPU for the one-process "
            f"baseline (bfloat16 weights and cache); this GPU has {gpu_gib:.1f} GiB: use a "
            "smaller model, fewer tokens or smaller batches (or the tiny size)"
        )


def _check_number(name: str, value) -> None:
    if isinstance(value, bool) or not (isinstance(value, int | float) and value > 0):
        raise ParameterError(f"{name}={value!r} must be a number > 0")


def check_model(model_name, kind: str = "encoder"):
    """The model's config, once its name, its folder and its kind suit the notebook."""
    needs, option, example = MODEL_KINDS[kind]
    if not isinstance(model_name, str) or not model_name.strip():
        raise ParameterError(
            f"model_name={model_name!r} names no model: give a hub id such as {example!r} "
            "or a model's folder"
        )
    config = load_config(model_name)
    if model_kind(config) != kind:
        raise ParameterError(
            f"model_name={model_name!r} is {MODEL_KINDS[model_kind(config)][0]} "
            f"({config.model_type}); this notebook needs {needs} such as {example!r}: "
            f"the series runner takes it as {option}, papermill as -p model_name"
        )
    return config


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
    kind: str = "encoder",
) -> torch.device:
    """Validate every parameter given (None: not used by this notebook); return the device.

    ``kind`` is the model the notebook needs: "encoder" (01-07) or "decoder" (08-10).
    Raises a ParameterError, ModelNotAvailableError or DeviceUnavailableError whose
    message says what to change.
    """
    if precision is not None:
        check_precision(precision)
    if warmup is not None:
        check_count("warmup", warmup, 0)
    if iterations is not None:
        check_count("iterations", iterations, 1)
    if max_seconds is not None:
        _check_number("max_seconds", max_seconds)
    if threshold is not None:
        _check_number("threshold", threshold)
    if output_dir is not None:
        if not isinstance(output_dir, str | Path) or not str(output_dir).strip():
            raise ParameterError(f"output_dir={output_dir!r} must name a folder, e.g. 'runs/x'")
        parent = Path(output_dir).expanduser().parent
        if Path(output_dir).expanduser().is_absolute() and not parent.is_dir():
            raise ParameterError(f"output_dir={output_dir!r}: no such folder {str(parent)!r}")
    resolved = resolve_device(device)
    check_count("batch_size", batch_size, 1)
    check_count("seq_len", seq_len, 2)
    check_workload(batch_size, seq_len, config=check_model(model_name, kind), model_name=model_name)
    if resolved.type == "cpu" and batch_size * seq_len > CPU_TOKEN_LIMIT:
        raise ParameterError(
            f"batch {batch_size} x {seq_len} = {batch_size * seq_len} tokens per call is too "
            f"slow for a CPU (limit {CPU_TOKEN_LIMIT}, e.g. 16 x 256); run it on a GPU"
        )
    return resolved
