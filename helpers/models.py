"""Load an encoder and build the benchmark batch, online or offline.

The series must run where the Hugging Face hub cannot be reached (CI, air-gapped
workshops). Offline, a known model name falls back to the *same architecture* with
random weights and a tokenizer trained on our own sample text: latency is that of the
real model, accuracy figures are labelled as coming from random weights.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

SAMPLE_TEXT = (
    "Inference speed decides whether a model can answer in time. "
    "A transformer spends most of its time multiplying matrices. "
    "Graphics processors multiply matrices far faster than ordinary processors. "
    "Half precision halves the bytes that every weight occupies. "
    "Fewer bytes mean less memory traffic and faster tensor cores. "
    "TensorRT fuses layers and picks the fastest kernel for each one. "
    "Torch-TensorRT lets a PyTorch program hand its graph to TensorRT. "
    "A compiled engine is only useful if its answers stay correct. "
    "We compare every compiled output with the plain PyTorch reference. "
    "The first call of a model is slow for reasons unrelated to its speed. "
    "Memory allocation, kernel loading and autotuning all happen on that call. "
    "A fair benchmark warms up before it starts the clock. "
    "Many timed calls give a distribution rather than a single lucky number. "
    "The median and the ninetieth percentile tell most of the story. "
    "Padding makes short sentences as long as the longest one in the batch. "
    "The attention mask tells the model which tokens are padding. "
    "Dynamic shapes let one engine serve batches of different sizes. "
    "Every dynamic dimension has a minimum, an optimum and a maximum. "
    "An engine tuned for one shape can be slower at another. "
    "Measured carefully, the speed-up is real but rarely the headline number."
)

_ROBERTA_BASE = dict(
    vocab_size=50265,
    hidden_size=768,
    num_hidden_layers=12,
    num_attention_heads=12,
    intermediate_size=3072,
    max_position_embeddings=514,
    type_vocab_size=1,
    layer_norm_eps=1e-5,
    pad_token_id=1,
    bos_token_id=0,
    eos_token_id=2,
)

#: Architectures we can rebuild without the hub: the exact published configs.
OFFLINE_ARCHITECTURES: dict[str, tuple[str, dict]] = {
    "roberta-base": ("roberta", _ROBERTA_BASE),
    # distilroberta-base is roberta-base with half the layers.
    "distilroberta-base": ("roberta", {**_ROBERTA_BASE, "num_hidden_layers": 6}),
    "bert-base-uncased": (
        "bert",
        dict(
            vocab_size=30522,
            hidden_size=768,
            num_hidden_layers=12,
            num_attention_heads=12,
            intermediate_size=3072,
            max_position_embeddings=512,
            type_vocab_size=2,
            layer_norm_eps=1e-12,
            pad_token_id=0,
        ),
    ),
}

# Special tokens in id order, so that the trained offline tokenizer gives the pad token
# the id the config expects (roberta: <pad>=1, bert: [PAD]=0).
_SPECIAL_TOKENS = {
    "roberta": dict(
        order=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        cls="<s>",
        sep="</s>",
        pad="<pad>",
        unk="<unk>",
        mask="<mask>",
    ),
    "bert": dict(
        order=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
        cls="[CLS]",
        sep="[SEP]",
        pad="[PAD]",
        unk="[UNK]",
        mask="[MASK]",
    ),
}

WEIGHTS_RANDOM = "random (offline fallback)"


class ModelNotAvailableError(RuntimeError):
    """The model can be loaded neither from the hub, a local path nor the offline table."""


class WorkloadError(ValueError):
    """Batch size or sequence length that the model cannot run."""


class EncoderForInference(nn.Module):
    """Call an encoder positionally and return only ``last_hidden_state``.

    Compilers (torch.export, Torch-TensorRT, CUDA graphs) want a module that takes
    tensors and returns a tensor, not a ``ModelOutput`` dictionary.
    """

    def __init__(self, encoder: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


@dataclass
class LoadedModel:
    """A model ready for inference, with where its weights came from."""

    model: EncoderForInference
    tokenizer: object
    name: str
    weights: str  # "pretrained (hub)", "pretrained (local)" or WEIGHTS_RANDOM
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


def canonical_name(model_name: str) -> str:
    """'FacebookAI/roberta-base' -> 'roberta-base', for the offline table."""
    return model_name.rstrip("/").split("/")[-1]


def hub_reachable(timeout_s: float = 3.0) -> bool:
    """True if the hub answers an HTTP request (and offline mode is not forced).

    Asking first avoids transformers' retry loop, which takes ~25 s to give up offline.
    A real request, not a bare TCP connect: some sandboxes accept connections that
    lead nowhere, and proxies from the environment must be honoured as the hub
    client honours them.
    """
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


def max_sequence_length(config) -> int:
    """Longest input the model accepts (RoBERTa reserves padding_idx + 1 positions)."""
    positions = config.max_position_embeddings
    if config.model_type in ("roberta", "xlm-roberta", "camembert"):
        return positions - config.pad_token_id - 1
    return positions


def validate_workload(batch_size: int, seq_len: int, config, model_name: str = "model") -> None:
    """Reject shapes the model cannot run, before any library fails deep inside."""
    if not isinstance(batch_size, int) or batch_size < 1:
        raise WorkloadError(f"batch_size={batch_size!r} must be a positive integer")
    limit = max_sequence_length(config)
    if not isinstance(seq_len, int) or seq_len < 2:
        raise WorkloadError(
            f"seq_len={seq_len!r} must be an integer >= 2 (room for the start and end tokens)"
        )
    if seq_len > limit:
        raise WorkloadError(
            f"seq_len={seq_len} exceeds the longest input {model_name} accepts ({limit}, from "
            f"max_position_embeddings={config.max_position_embeddings}); use seq_len <= {limit}"
        )


def offline_config(model_name: str):
    """The exact published config of a known architecture, built without the hub."""
    from transformers import BertConfig, RobertaConfig

    family, fields = OFFLINE_ARCHITECTURES[canonical_name(model_name)]
    config_class = {"roberta": RobertaConfig, "bert": BertConfig}[family]
    return config_class(**fields)


def offline_tokenizer(family: str):
    """A byte-level BPE tokenizer trained on SAMPLE_TEXT: needs no download, deterministic."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    special = _SPECIAL_TOKENS[family]
    bpe = Tokenizer(models.BPE(unk_token=special["unk"]))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1000,
        special_tokens=special["order"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(split_sentences(SAMPLE_TEXT), trainer=trainer)
    cls, sep = special["cls"], special["sep"]
    bpe.post_processor = processors.TemplateProcessing(
        single=f"{cls} $A {sep}",
        special_tokens=[(cls, bpe.token_to_id(cls)), (sep, bpe.token_to_id(sep))],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        cls_token=cls,
        sep_token=sep,
        bos_token=cls,
        eos_token=sep,
        pad_token=special["pad"],
        unk_token=special["unk"],
        mask_token=special["mask"],
    )


def in_local_cache(model_name: str) -> bool:
    """True if the hub cache already holds this model's config (usable offline)."""
    from huggingface_hub import try_to_load_from_cache

    try:
        return isinstance(try_to_load_from_cache(model_name, "config.json"), str)
    except ValueError:  # not a valid repo id
        return False


def _from_pretrained(model_name: str, online: bool):
    """Pretrained weights and tokenizer from the hub or its cache."""
    from transformers import AutoModel, AutoTokenizer

    try:
        encoder = AutoModel.from_pretrained(
            model_name, attn_implementation="sdpa", local_files_only=not online
        )
        tokenizer = AutoTokenizer.from_pretrained(model_name, local_files_only=not online)
    except (OSError, ValueError) as error:
        raise ModelNotAvailableError(
            f"Cannot load {model_name!r} from the {'hub' if online else 'local cache'}: "
            f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
        ) from None
    return encoder, tokenizer, "pretrained (hub)" if online else "pretrained (local cache)"


def load_model(model_name: str = "roberta-base", seed: int = 0) -> LoadedModel:
    """Load ``model_name`` (hub id or local folder) in eval mode, on the CPU.

    Offline (hub unreachable and the model not cached), the names in
    OFFLINE_ARCHITECTURES fall back to random weights and say so in ``note``, without
    calling the hub at all (some transformers versions retry for ~25 s even with
    ``local_files_only``); any other name raises ModelNotAvailableError.
    """
    from transformers import AutoModel, AutoTokenizer

    local = Path(model_name).expanduser()
    if local.is_dir():
        encoder = AutoModel.from_pretrained(local, attn_implementation="sdpa")
        tokenizer = AutoTokenizer.from_pretrained(local)
        weights, note = "pretrained (local)", f"Loaded {model_name} from a local folder."
    else:
        online = hub_reachable()
        if online or in_local_cache(model_name):
            encoder, tokenizer, weights = _from_pretrained(model_name, online)
            note = f"Loaded pretrained {model_name} ({weights})."
        elif canonical_name(model_name) in OFFLINE_ARCHITECTURES:
            torch.manual_seed(seed)
            config = offline_config(model_name)
            encoder = AutoModel.from_config(config, attn_implementation="sdpa")
            tokenizer = offline_tokenizer(OFFLINE_ARCHITECTURES[canonical_name(model_name)][0])
            weights = WEIGHTS_RANDOM
            note = (
                f"Hub unreachable: built {model_name}'s exact architecture with RANDOM weights "
                f"(seed {seed}) and an offline tokenizer. Latency is the real architecture's; "
                "accuracy figures below compare random-weight models."
            )
        else:
            known = ", ".join(sorted(OFFLINE_ARCHITECTURES))
            raise ModelNotAvailableError(
                f"Cannot load {model_name!r}: the hub is unreachable and it is not in the local "
                f"cache. Offline, use a local folder or one of the architectures we can "
                f"rebuild: {known}."
            )
    model = EncoderForInference(encoder.eval()).eval()
    return LoadedModel(
        model=model, tokenizer=tokenizer, name=model_name, weights=weights, note=note
    )


def split_sentences(text: str) -> list[str]:
    """Split a paragraph into sentences at '. ', as the original post did."""
    pieces = [piece.strip() for piece in text.split(". ")]
    return [piece if piece.endswith(".") else piece + "." for piece in pieces if piece]


def sample_sentences(batch_size: int, text: str = SAMPLE_TEXT) -> list[str]:
    """``batch_size`` sentences of the sample text, cycling when more are asked for."""
    if batch_size < 1:
        raise WorkloadError(f"batch_size={batch_size!r} must be a positive integer")
    sentences = split_sentences(text)
    return [sentences[i % len(sentences)] for i in range(batch_size)]


def make_batch(
    loaded: LoadedModel,
    batch_size: int,
    seq_len: int,
    device: torch.device | str = "cpu",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Tokenize ``batch_size`` sample sentences to exactly ``seq_len`` tokens, as int32.

    Padding to ``max_length`` gives every run the same shape, so timings compare.
    Returns ``(input_ids, attention_mask)``, the positional arguments of the model.
    """
    validate_workload(batch_size, seq_len, loaded.config, loaded.name)
    encoded = loaded.tokenizer(
        sample_sentences(batch_size),
        padding="max_length",
        truncation=True,
        max_length=seq_len,
        return_tensors="pt",
    )
    return (
        encoded["input_ids"].to(device=device, dtype=torch.int32),
        encoded["attention_mask"].to(device=device, dtype=torch.int32),
    )
