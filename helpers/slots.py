"""Fixed decoding slots: one KV cache whose rows are requests, each at its own position.

Transformers' ``StaticCache`` writes every row of a batch at one shared position, which
suits one batch decoded together. An in-flight batcher puts a new request into a row as
soon as the previous one finishes, so each row needs its own position, its own cache
writes and its own attention mask. ``SlotDecoder`` runs a Llama-style model's own modules
(embedding, norms, projections, rotary embedding, MLP) over such a cache, so that one
compiled step serves whatever mix of requests the slots hold.
"""

from __future__ import annotations

import heapq
import time

import torch
from torch import nn
from torch.nn.functional import scaled_dot_product_attention

from helpers.errors import ParameterError

#: Decoder families whose layers are Llama's: q/k/v/o projections, rotary embedding, an MLP.
SUPPORTED = ("llama", "mistral", "qwen2")


class SlotDecoder:
    """A decoder over a KV cache of ``slots`` rows of ``max_len`` tokens.

    ``prefill`` runs one prompt into one slot; ``step`` decodes one token for every slot,
    each at its own position, and returns the greedy next tokens. The cache tensors keep
    their addresses, so a CUDA graph of ``step`` stays valid as requests come and go.
    """

    def __init__(self, model: nn.Module, slots: int, max_len: int) -> None:
        kind = getattr(model.config, "model_type", "?")
        if kind not in SUPPORTED:
            raise ParameterError(
                f"the slot decoder runs {', '.join(SUPPORTED)} models, not {kind!r}: "
                "use a Llama-family decoder"
            )
        self.model, self.body = model, model.model
        first = self.body.layers[0].self_attn
        weight = first.q_proj.weight
        shape = (slots, model.config.num_key_value_heads, max_len, first.head_dim)
        self.keys = [weight.new_zeros(shape) for _ in self.body.layers]
        self.values = [weight.new_zeros(shape) for _ in self.body.layers]
        #: The last step's logits (slots, vocab), kept so that a probe can compare them bit for bit.
        self.logits = weight.new_zeros(slots, model.config.vocab_size)
        for tensor in [*self.keys, *self.values, self.logits]:  # updated in place inside a step
            torch._dynamo.mark_static_address(tensor)
        self.rows = torch.arange(slots, device=weight.device)
        self.span = torch.arange(max_len, device=weight.device)

    def _layers(self, x: torch.Tensor, positions: torch.Tensor, attend) -> torch.Tensor:
        """The decoder layers over hidden states x; logits of each row's last position."""
        from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

        cos, sin = self.body.rotary_emb(x, positions)
        for index, layer in enumerate(self.body.layers):
            attention = layer.self_attn
            h = layer.input_layernorm(x)
            q, k, v = (
                project(h).view(*h.shape[:2], -1, attention.head_dim).transpose(1, 2)
                for project in (attention.q_proj, attention.k_proj, attention.v_proj)
            )
            q, k = apply_rotary_pos_emb(q, k, cos, sin)
            mixed = attend(index, q, k, v).transpose(1, 2).reshape(*x.shape[:2], -1)
            x = x + attention.o_proj(mixed)
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        return self.model.lm_head(self.body.norm(x[:, -1]))

    def row(self, slot: int) -> torch.Tensor:
        """Slot ``slot`` as a one-element tensor, so that one compiled prefill serves every slot."""
        return self.rows[slot : slot + 1].clone()

    def prefill(self, row: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """Run a prompt (1, length) into slot ``row`` (``self.row(slot)``); its last logits."""
        length = ids.shape[1]

        def attend(index: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
            self.keys[index][row, :, :length] = k
            self.values[index][row, :, :length] = v
            return scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)

        x = self.body.embed_tokens(ids)
        return self._layers(x, self.span[:length][None], attend)

    def step(self, tokens: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """One token per slot (slots, 1) at its own position (slots,); the next greedy tokens."""
        visible = (self.span[None, :] <= positions[:, None])[:, None, None, :]

        def attend(index: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
            keys, values = self.keys[index], self.values[index]
            keys[self.rows, :, positions] = k[:, :, 0]
            values[self.rows, :, positions] = v[:, :, 0]
            # enable_gqa: measured faster on an H200 (1.61 ms a step) than the query heads
            # grouped as rows of their key-value head's attention (1.78 ms)
            return scaled_dot_product_attention(q, keys, values, attn_mask=visible, enable_gqa=True)

        x = self.body.embed_tokens(tokens)
        self.logits.copy_(self._layers(x, positions[:, None], attend))
        return self.logits.argmax(-1, keepdim=True)

    def move(self, order: torch.Tensor) -> None:
        """Put the request of slot ``order[i]`` into slot ``i``: its cache rows move with it."""
        for cache in [*self.keys, *self.values]:
            cache.copy_(cache[order])


def repeat_probe(slots: SlotDecoder, step, prefill, prompts: list[torch.Tensor]) -> dict:
    """Rows of ``step``'s logits that came out bit for bit the same: for the same call made
    twice, and for every request moved to the next slot (other neighbours, another row).

    ``prompts`` (each (1, length)) are prefilled into the first slots; the step runs there.
    """
    count = len(slots.rows)
    tokens = torch.zeros(count, 1, dtype=torch.long, device=slots.rows.device)
    positions = torch.zeros_like(slots.rows)
    for slot, prompt in enumerate(prompts[:count]):
        tokens[slot] = prefill(slots.row(slot), prompt).argmax(-1)
        positions[slot] = prompt.shape[1]
    order = torch.roll(torch.arange(count, device=tokens.device), 1)
    runs = []
    for _ in range(2):
        step(tokens, positions)
        runs.append(slots.logits.clone())
    slots.move(order)
    step(tokens[order], positions[order])
    moved = slots.logits.clone()[torch.argsort(order)]  # back in the first call's row order
    same = {"repeat": (runs[0] == runs[1]).all(-1), "moved": (runs[0] == moved).all(-1)}
    return {"rows": count, **{name: int(rows.sum()) for name, rows in same.items()}}


class Clock:
    """Points on the GPU's timeline (CUDA events), or the host's on a CPU, read only at the
    end, so that marking a step never waits for the GPU. It starts once queued work is done."""

    def __init__(self, device: torch.device) -> None:
        self.gpu = device.type == "cuda"
        if self.gpu:
            torch.cuda.synchronize(device)
        self.start = time.perf_counter()
        self.origin = self.mark()

    def mark(self):
        if not self.gpu:
            return time.perf_counter()
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def seconds(self, point) -> float:
        """Seconds from the clock's start to ``point`` (a mark)."""
        return self.origin.elapsed_time(point) / 1e3 if self.gpu else point - self.origin

    def stop(self) -> float:
        """Wait for the GPU; the wall seconds since the start."""
        if self.gpu:
            torch.cuda.synchronize()
        return time.perf_counter() - self.start


def read_back(done: list, history: list, log: list, clock: Clock):
    """Each finished request's latencies (a DataFrame) and tokens, the log of every step (its
    seconds, requests in flight, prefills just before it), and the pass's wall seconds.

    ``done``: (slot, entry): the request, its arrival, its first token and that token's mark,
    and ``end``, the step after its last token; ``history``: every step's tokens for every
    slot; ``log``: (mark, in flight, prefills) per step.
    """
    import pandas as pd

    seconds = clock.stop()  # the GPU done: every mark can be read
    decoded = torch.cat(history, dim=1).tolist() if history else []
    rows, outputs = [], {}
    for slot, entry in done:
        r, first_s = entry["request"], clock.seconds(entry["mark"])
        last_s = clock.seconds(log[entry["end"] - 1][0])  # its own last token
        start = entry["end"] - r.new_tokens + 1  # the step that decoded its second token
        outputs[r.request_id] = [int(entry["first"])] + decoded[slot][start : entry["end"]]
        rows.append(
            {
                "request": r.request_id,
                "ttft_s": first_s - entry["arrival"],
                "tpot_ms": 1e3 * (last_s - first_s) / (r.new_tokens - 1),
                "done_s": last_s - entry["arrival"],
            }
        )
    steps = pd.DataFrame(log, columns=["s", "in flight", "prefills"])
    steps["s"] = steps["s"].map(clock.seconds)
    return pd.DataFrame(rows).set_index("request"), outputs, steps, seconds


def teacher_forced(model: nn.Module, prompt: list[int], tokens: list[int]) -> dict:
    """The model fed ``prompt`` and ``tokens``: steps where its greedy choice is clear (top two
    logits more than 0.5 apart), those of them where it is not ``tokens``' token, and the gaps."""
    device = model.device
    with torch.inference_mode():
        logits = model(torch.tensor([prompt + tokens[:-1]], device=device)).logits
    logits = logits[0, len(prompt) - 1 :].float()
    top2 = logits.topk(2, dim=-1).values
    gap = (top2[:, 0] - top2[:, 1]).cpu()
    picked = logits.argmax(-1).cpu() == torch.tensor(tokens)
    return {"clear": int((gap > 0.5).sum()), "off": int(((gap > 0.5) & ~picked).sum()), "gap": gap}


def fifo_steps(new_tokens: list[int], slots: int) -> int:
    """Fewest steps first-come-first-served slots need: a request holds one slot for its
    tokens after the first (its prefill gives the first)."""
    free_at = [0] * slots  # the step at which each slot is next free, as a heap
    for n in new_tokens:
        heapq.heapreplace(free_at, free_at[0] + n - 1)  # the next request takes the first free slot
    return max(free_at)
