"""The slot decoder computes what the model computes, each slot at its own position."""

import pytest
import torch

from helpers.errors import ParameterError
from helpers.slots import SlotDecoder
from helpers.workload import load_causal_lm


@pytest.fixture(scope="module")
def model():
    return load_causal_lm("meta-llama/Llama-3.2-1B", tiny=True)[0]


def greedy(model, prompt: torch.Tensor, tokens: int) -> torch.Tensor:
    out = model.generate(
        prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=tokens,
        min_new_tokens=tokens, do_sample=False, pad_token_id=0,
    )  # fmt: skip
    return out[0, prompt.shape[1] :]


def test_prefill_logits_match_the_model(model):
    slots = SlotDecoder(model, slots=2, max_len=32)
    prompt = torch.randint(0, model.config.vocab_size, (1, 9))
    with torch.inference_mode():
        ours = slots.prefill(slots.row(1), prompt)
        theirs = model(prompt).logits[:, -1]
    assert torch.nn.functional.cosine_similarity(ours, theirs).item() > 0.9999


def test_slots_at_different_positions_decode_what_generate_decodes(model):
    torch.manual_seed(1)
    slots = SlotDecoder(model, slots=3, max_len=32)
    prompts = [torch.randint(0, model.config.vocab_size, (1, n)) for n in (5, 11)]
    with torch.inference_mode():
        expected = [greedy(model, p, 6) for p in prompts]
        tokens = torch.zeros(3, 1, dtype=torch.long)
        positions = torch.zeros(3, dtype=torch.long)
        for slot, prompt in zip((0, 2), prompts, strict=True):  # slot 1 stays empty
            tokens[slot] = slots.prefill(slots.row(slot), prompt).argmax(-1)
            positions[slot] = prompt.shape[1]
        produced = [tokens.clone()]
        for _ in range(5):
            tokens = slots.step(tokens, positions)
            positions[[0, 2]] += 1
            produced.append(tokens.clone())
    produced = torch.cat(produced, dim=1)
    assert torch.equal(produced[0], expected[0]) and torch.equal(produced[2], expected[1])


def test_a_model_of_another_family_is_refused_in_one_line(model):
    model.config.model_type = "gpt2"
    try:
        with pytest.raises(ParameterError, match="Llama-family"):
            SlotDecoder(model, slots=1, max_len=8)
    finally:
        model.config.model_type = "llama"


def test_one_compiled_prefill_serves_every_slot_and_prompt_length(model):
    """09 compiles the prefill once: the slot is a tensor, the length a dynamic size."""
    slots = SlotDecoder(model, slots=3, max_len=32)
    prefill = torch.compile(slots.prefill, dynamic=True, fullgraph=True)
    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    with torch.inference_mode():
        for slot, length in ((0, 9), (2, 5), (1, 12)):
            prompt = torch.randint(0, model.config.vocab_size, (1, length))
            ours = prefill(slots.row(slot), prompt)
            theirs = model(prompt).logits[:, -1]
            assert torch.nn.functional.cosine_similarity(ours, theirs).item() > 0.9999
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == graphs + 1


def test_the_step_takes_attention_output_in_any_memory_layout(model, monkeypatch):
    """CUDA's memory-efficient SDPA returns (slots, heads, rows, dim) with rows outermost in
    memory; the step must reshape, not view, what it gets back."""
    import helpers.slots as slots_module

    exact = slots_module.scaled_dot_product_attention

    def strided(*args, **kwargs):
        return exact(*args, **kwargs).transpose(1, 2).contiguous().transpose(1, 2)

    slots = SlotDecoder(model, slots=2, max_len=16)
    tokens, positions = torch.zeros(2, 1, dtype=torch.long), torch.tensor([3, 5])
    with torch.inference_mode():
        expected = slots.step(tokens, positions)
        monkeypatch.setattr(slots_module, "scaled_dot_product_attention", strided)
        assert torch.equal(slots.step(tokens, positions), expected)


def test_the_probe_finds_a_cpu_step_repeatable(model):
    """On a CPU the same call gives the same bits; a moved row may differ in its last bit
    (a CPU matmul can round a row by where it sits), which the probe counts, not assumes."""
    from helpers.slots import repeat_probe

    slots = SlotDecoder(model, slots=3, max_len=32)
    prompts = [torch.randint(0, model.config.vocab_size, (1, n)) for n in (5, 9, 7)]
    with torch.inference_mode():
        probe = repeat_probe(slots, slots.step, slots.prefill, prompts)
    assert probe["rows"] == 3 and probe["repeat"] == 3 and 0 <= probe["moved"] <= 3


def test_the_probe_counts_rows_that_change(model):
    """A step that adds noise to one row is caught by the repeat count; fewer prompts than
    slots leave the others empty."""
    from helpers.slots import repeat_probe

    slots = SlotDecoder(model, slots=2, max_len=16)

    def noisy(tokens, positions):
        out = slots.step(tokens, positions)
        slots.logits[0] += torch.rand(()) + 1e-3
        return out

    with torch.inference_mode():
        probe = repeat_probe(slots, noisy, slots.prefill, [torch.tensor([[1, 2, 3]])])
    assert probe["repeat"] == 1 and probe["moved"] <= 1  # the noisy row differs either way


def test_fifo_steps_count_the_slots_first_come_first_served():
    from helpers.slots import fifo_steps

    assert fifo_steps([5, 5, 5, 5], slots=2) == 8  # two rounds of 4 steps after each prefill
    assert fifo_steps([9, 2, 2, 2], slots=2) == 8  # the long one holds a slot throughout
