import pytest
import torch

from helpers.models import (
    SAMPLE_TEXT,
    WEIGHTS_RANDOM,
    ModelNotAvailableError,
    WorkloadError,
    load_model,
    make_batch,
    max_sequence_length,
    offline_config,
    sample_sentences,
    split_sentences,
)


def test_offline_fallback_is_exact_roberta_base_and_says_so(roberta):
    cfg = roberta.config
    assert (cfg.vocab_size, cfg.hidden_size, cfg.num_hidden_layers) == (50265, 768, 12)
    assert (cfg.num_attention_heads, cfg.intermediate_size) == (12, 3072)
    assert (cfg.max_position_embeddings, cfg.type_vocab_size) == (514, 1)
    assert (cfg.layer_norm_eps, cfg.pad_token_id) == (1e-5, 1)
    assert roberta.weights == WEIGHTS_RANDOM and roberta.random_weights
    assert "RANDOM weights" in roberta.note
    assert roberta.describe()["parameters_millions"] == pytest.approx(124.6, abs=0.1)


def test_batch_is_int32_padded_to_seq_len_with_pad_id(roberta):
    ids, mask = make_batch(roberta, 16, 32)
    assert ids.shape == mask.shape == (16, 32)
    assert ids.dtype == mask.dtype == torch.int32
    assert 0 < mask.sum(1).min() < 32  # sentences are shorter than 32 tokens: padding exists
    assert torch.all(ids[mask == 0] == roberta.config.pad_token_id)
    assert int(ids.max()) < roberta.config.vocab_size


def test_truncation_keeps_the_requested_length(roberta):
    ids, mask = make_batch(roberta, 2, 4)
    assert ids.shape == (2, 4) and bool(mask.all())


def test_sample_text_has_at_least_16_sentences_and_cycles():
    sentences = split_sentences(SAMPLE_TEXT)
    assert len(sentences) >= 16 and all(s.endswith(".") for s in sentences)
    assert sample_sentences(len(sentences) + 2)[-1] == sentences[1]


@pytest.mark.parametrize("batch", [0, -1, 2.5])
def test_bad_batch_size_is_a_clear_error(roberta, batch):
    with pytest.raises(WorkloadError, match="batch_size"):
        make_batch(roberta, batch, 32)


def test_seq_len_above_the_model_limit_names_the_limit(roberta):
    with pytest.raises(WorkloadError, match=r"seq_len=600 exceeds .*\(512.*use seq_len <= 512"):
        make_batch(roberta, 2, 600)


def test_max_sequence_length_accounts_for_roberta_position_offset():
    assert max_sequence_length(offline_config("roberta-base")) == 512
    assert max_sequence_length(offline_config("bert-base-uncased")) == 512


def test_longest_allowed_input_runs(roberta):
    ids, mask = make_batch(roberta, 1, 512)
    with torch.inference_mode():
        assert roberta.model(ids, mask).shape == (1, 512, 768)


def test_unknown_model_offline_is_a_clear_error():
    with pytest.raises(ModelNotAvailableError, match="roberta-base"):
        load_model("no-such-org/no-such-model")


@pytest.mark.parametrize("name,pad", [("bert-base-uncased", 0), ("distilroberta-base", 1)])
def test_other_architectures_have_offline_fallbacks(name, pad):
    loaded = load_model(name)
    ids, mask = make_batch(loaded, 2, 16)
    assert torch.all(ids[mask == 0] == pad)
    with torch.inference_mode():
        assert loaded.model(ids, mask).shape == (2, 16, 768)


def test_aliases_with_an_organisation_resolve_offline():
    assert load_model("FacebookAI/roberta-base").config.num_hidden_layers == 12


def test_offline_fallback_never_asks_the_hub(monkeypatch):
    import transformers

    def refuse(*args, **kwargs):
        raise AssertionError("from_pretrained called while offline")

    monkeypatch.setattr(transformers.AutoModel, "from_pretrained", refuse)
    assert load_model("roberta-base").random_weights


def test_hub_probe_says_no_quickly_for_a_closed_port(monkeypatch):
    import time

    from helpers.models import hub_reachable

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: nothing listens
    start = time.perf_counter()
    assert hub_reachable(timeout_s=2.0) is False
    assert time.perf_counter() - start < 5


def test_forced_offline_mode_is_respected(monkeypatch):
    from helpers.models import hub_reachable

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert hub_reachable() is False
