"""Notebook 06's task scores, on small tensors with known answers."""

import torch

from helpers import quant_scoring as qs


def hidden_for(embeddings: list[list[float]]) -> torch.Tensor:
    """One real token per sentence, then a padding token that must not count."""
    real = torch.tensor(embeddings).unsqueeze(1)
    return torch.cat([real, torch.full_like(real, 100.0)], dim=1)


MASK = torch.tensor([[1, 0]] * 4)
REFERENCE = hidden_for([[1, 0], [1, 0.1], [0, 1], [0.3, 1]])  # two similar pairs


def test_pair_cosines_pool_real_tokens_only():
    cosines = qs.pair_cosines(REFERENCE, MASK)
    assert cosines.shape == (2,) and torch.all(cosines > 0.95)


def test_a_path_identical_to_fp32_scores_perfectly():
    scores = qs.task_scores(REFERENCE, REFERENCE.clone(), MASK, human_scores=[5, 4])
    assert scores["max_abs"] == 0 and scores["neighbours_kept"] == 1.0
    assert scores["min_cosine"] > 0.9999


def test_a_path_that_swaps_neighbours_loses_them():
    swapped = hidden_for([[1, 0], [0, 1], [1, 0.1], [0.1, 1]])
    scores = qs.task_scores(REFERENCE, swapped, MASK, human_scores=[5, 4])
    assert scores["neighbours_kept"] == 0.0


def test_run_in_batches_joins_the_slices():
    ids = torch.arange(10).reshape(5, 2)
    out = qs.run_in_batches(lambda a, b: (a + b).unsqueeze(-1).half(), [ids, ids], batch=2)
    assert out.dtype == torch.float32 and out.squeeze(-1).tolist() == (2 * ids).tolist()


def test_engine_size_and_the_saving_of_8_bit_weights():
    engine = torch.nn.Module()
    engine.serialized_engine = bytes(2**20)
    assert qs.engine_mib(engine) == 1.0 and qs.engine_mib(torch.nn.Linear(2, 2)) is None

    class Quantizer(torch.nn.Module):
        is_enabled = True

    layer = torch.nn.Linear(1024, 1024, bias=False)
    layer.weight_quantizer = Quantizer()
    off = torch.nn.Linear(1024, 1024, bias=False)
    off.weight_quantizer = Quantizer()
    off.weight_quantizer.is_enabled = False
    assert qs.eight_bit_saving_mib(torch.nn.Sequential(layer, off)) == 1.0  # one byte a weight
