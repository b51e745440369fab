"""Each notebook's own parameter rules, beyond ``check_parameters``, in one place.

A notebook's first code cell after its parameters calls
``h.check_notebook_values("08", globals())``; the series runner calls the same rules for
every notebook it will run before the first kernel starts, so a bad value is refused
once, early, and in the words the notebook would use.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

import torch

from helpers.environment import resolve_device
from helpers.errors import ParameterError
from helpers.gpu import gpu_features
from helpers.offline import canonical_name
from helpers.parameters import (
    check_choice,
    check_count,
    check_counts,
    check_fits_one_gpu,
    check_parameters,
)
from helpers.workload import TINY_DECODER, load_config, offline_decoder

#: 09's request mix on a tiny model (a CPU's worth: the mechanics, not the speeds): the most
#: of each value; 09's setup cell applies them and the runner checks what 09 will run.
TINY_SERVING = dict(num_requests=12, batch_size=4, block_size=16, seq_len=64, prompt_median=24)
TINY_SERVING |= dict(max_new_tokens=16, output_median=8)

#: Notebooks that decode with a causal LM; the others run an encoder.
DECODER_NOTEBOOKS = ("08", "09", "10")
SIZES = ("auto", "full", "tiny")
COMPILE_MODES = (
    "auto",
    "none",
    "default",
    "reduce-overhead",
    "max-autotune",
    "max-autotune-no-cudagraphs",
)


def _on_gpu(values: Mapping) -> bool:
    return resolve_device(values["device"]).type == "cuda"


def _tiny(values: Mapping) -> bool:
    """The notebooks' rule: "tiny", or "auto" on a CPU (the mechanics, not the speeds)."""
    return values["size"] == "tiny" or (values["size"] == "auto" and not _on_gpu(values))


#: Offline-table decoders whose tiny random version has clear greedy steps for 08's loop
#: check (Llama-3.2-1B ties its embeddings); a tiny random 8B has none ("agree_clear nan").
CLEAR_WHEN_TINY = ("Llama-3.2-1B",)


def _decoding(values: Mapping) -> None:
    """08: the model size, the tokens decoded, the batch sweep, a model its check can judge."""
    check_choice("size", values["size"], SIZES)
    check_count("new_tokens", values["new_tokens"], 2)  # decode needs at least 2 tokens
    check_counts("sweep_batches", values["sweep_batches"])
    name = values["model_name"]
    if _tiny(values) and offline_decoder(name) and canonical_name(name) not in CLEAR_WHEN_TINY:
        raise ParameterError(
            f"model_name={name!r}: its tiny random version (size 'tiny', or 'auto' on a CPU) "
            "has no clear greedy step for 08's loop check; use 'meta-llama/Llama-3.2-1B' or a GPU"
        )


def _serving(values: Mapping) -> None:
    """09: the request mix; a median above its maximum would draw no valid request."""
    check_choice("size", values["size"], SIZES)
    for name, low in (
        ("batch_size", 1),
        ("seq_len", 2),
        ("seed", 0),
        ("num_requests", 1),
        ("prompt_median", 1),
        ("output_median", 2),
        ("max_new_tokens", 2),
        ("block_size", 4),
    ):
        check_count(name, values[name], low)
    if values["prompt_median"] > values["seq_len"]:
        raise ParameterError(
            f"prompt_median={values['prompt_median']} exceeds seq_len={values['seq_len']}: "
            "a median must not exceed its maximum"
        )
    if values["output_median"] > values["max_new_tokens"]:
        raise ParameterError(
            f"output_median={values['output_median']} exceeds max_new_tokens="
            f"{values['max_new_tokens']}: a median must not exceed its maximum"
        )
    spread = values["spread"]
    if isinstance(spread, bool) or not isinstance(spread, int | float) or spread < 0:
        raise ParameterError(f"spread={spread!r} must be a number >= 0 (0: every request alike)")
    if "arrival_load" not in values:  # 09d: every request arrives at once
        return
    load = values["arrival_load"]
    if isinstance(load, bool) or not isinstance(load, int | float) or not 0 < load <= 1:
        raise ParameterError(f"arrival_load={load!r} must be a number in (0, 1]")


def _tensor_parallel(values: Mapping) -> None:
    """10: the processes must split the model's key-value heads evenly."""
    check_choice("size", values["size"], SIZES)
    check_count("new_tokens", values["new_tokens"], 2)
    check_counts("batch_sizes", values["batch_sizes"])
    gpus = values["gpus"]
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 2:
        raise ParameterError(f"gpus={gpus!r}: tensor parallelism needs at least 2 processes")
    check_choice("compile_mode", values["compile_mode"], COMPILE_MODES)
    timeout = values["run_timeout_s"]
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ParameterError(f"run_timeout_s={timeout!r}: give the seconds one torchrun may take")
    gpu = _on_gpu(values) and torch.cuda.device_count() >= 2  # one GPU: CPU processes
    tiny = values["size"] == "tiny" or (values["size"] == "auto" and not gpu)
    shape = {**load_config(values["model_name"]).to_dict(), **(TINY_DECODER if tiny else {})}
    if shape["num_key_value_heads"] % gpus:
        raise ParameterError(
            f"gpus={gpus}: it must divide the model's {shape['num_key_value_heads']} key-value "
            "heads"
        )
    batch_size, batch_sizes = values["batch_size"], values["batch_sizes"]
    if gpu and batch_size not in batch_sizes:
        raise ParameterError(f"batch_size={batch_size} must be one of batch_sizes={batch_sizes}")
    if gpu and not tiny:  # the one-process baseline holds the whole model and cache on one GPU
        check_fits_one_gpu(
            values["model_name"],
            tokens=values["seq_len"] + values["new_tokens"],
            batch=max(batch_sizes),
            gpu_gib=gpu_features(resolve_device(values["device"])).memory_gib,
        )


#: The rules of each notebook that has rules of its own, by its number.
RULES: dict[str, Callable[[Mapping], None]] = {
    "08": _decoding,
    "09": _serving,
    "10": _tensor_parallel,
}


def check_notebook_values(notebook: str, values: Mapping) -> None:
    """Raise a one-line ParameterError for the first value notebook ``notebook`` cannot use.

    ``notebook`` is its number ("08"); ``values`` maps its parameter names to their values
    (a notebook passes ``globals()``). These are the rules beyond ``check_parameters``.
    """
    rules = RULES.get(str(notebook)[:2])
    if rules is not None:
        rules(values)


def check_arguments(notebook: str, values: Mapping) -> dict:
    """What notebook ``notebook``'s first cell hands ``check_parameters``, from its values.

    Each notebook passes every parameter of its own that ``check_parameters`` takes; 09
    checks its longest request (prompt and output) at the size it will run.
    """
    takes = inspect.signature(check_parameters).parameters
    arguments = {name: value for name, value in values.items() if name in takes}
    arguments["kind"] = "decoder" if notebook[:2] in DECODER_NOTEBOOKS else "encoder"
    if notebook[:2] == "09":
        most = TINY_SERVING if _tiny(values) else {}  # 09's setup cell caps a tiny run so
        batch, prompt, output = (
            min(values[name], most.get(name, values[name]))
            for name in ("batch_size", "seq_len", "max_new_tokens")
        )
        arguments["batch_size"], arguments["seq_len"] = batch, prompt + output
    return arguments


def check_notebook(notebook: str, values: Mapping) -> torch.device:
    """Every check of notebook ``notebook``'s first cell, without starting it; the device."""
    check_notebook_values(notebook, values)
    return check_parameters(**check_arguments(notebook, values))
