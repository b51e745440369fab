"""The solutions that are code, run at tiny sizes on a CPU."""

import pytest
import torch
from torch.export import Dim
from transformers import RobertaConfig, RobertaModel


@pytest.fixture(scope="module")
def encoder():
    config = RobertaConfig(
        hidden_size=64, num_hidden_layers=1, num_attention_heads=2, intermediate_size=128,
        max_position_embeddings=514, type_vocab_size=1, vocab_size=1000,
    )  # fmt: skip
    torch.manual_seed(0)
    return RobertaModel(config, add_pooling_layer=False).eval()


def test_05_1_a_plain_shared_dim_exports_on_this_torch(encoder):
    ids = torch.randint(5, 1000, (2, 32))
    seq = Dim("seq", min=8, max=128)
    shapes = {"input_ids": {1: seq}, "attention_mask": {1: seq}}
    torch.export.export(encoder, (ids, torch.ones_like(ids)), dynamic_shapes=shapes)


def test_05_3_length_12_is_refused_by_the_shared_length_profile(encoder):
    ids = torch.randint(5, 1000, (2, 32))
    seq = 8 * Dim("seq_div_8", min=2, max=16)  # 05's profile: 16, 24, ..., 128
    shapes = {"input_ids": {1: seq}, "attention_mask": {1: seq}}
    program = torch.export.export(encoder, (ids, torch.ones_like(ids)), dynamic_shapes=shapes)
    program.module()(ids[:, :16], torch.ones_like(ids[:, :16]))  # in the profile: runs
    with pytest.raises(AssertionError, match=r"size\(\)\[1\] >= 16"):  # below the minimum
        program.module()(ids[:, :12], torch.ones_like(ids[:, :12]))


def test_04_2_a_padding_query_still_attends_to_the_real_tokens(encoder):
    ids = torch.randint(5, 1000, (1, 8))
    mask = torch.tensor([[1, 1, 1, 1, 1, 1, 0, 0]])
    changed_real, changed_pad = ids.clone(), ids.clone()
    changed_real[0, 2] = (ids[0, 2] + 1) % 1000
    changed_pad[0, 7] = (ids[0, 7] + 1) % 1000
    with torch.no_grad():
        out = {
            name: encoder(x, attention_mask=mask).last_hidden_state
            for name, x in (("base", ids), ("real", changed_real), ("pad", changed_pad))
        }
    padding_row = 6
    assert not torch.allclose(out["base"][0, padding_row], out["real"][0, padding_row])
    assert torch.allclose(out["base"][0, :6], out["pad"][0, :6], atol=1e-6)  # keys are masked
