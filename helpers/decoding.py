"""Notebook 08's decode loop, as its core lesson writes it, for the deep dive to reuse.

The core lesson (``08_llm_decoding.ipynb``) writes ``StaticDecoder`` in a cell of its own;
this module holds the same loop, the version shims around transformers' ``StaticCache`` and
the checks and timings both notebooks share, so that the deep dive starts where the core ends.
"""

from __future__ import annotations

import inspect
import statistics
import time
from collections.abc import Callable

import torch

from helpers.timing import time_cold_call


def static_cache_extras(batch: int, device: torch.device, dtype: torch.dtype) -> dict:
    """What this transformers' ``StaticCache`` takes beside ``config`` and ``max_cache_len``.

    transformers 4 asks for the batch, device and dtype; 5 reads them from the first write.
    """
    from transformers import StaticCache

    takes = inspect.signature(StaticCache.__init__).parameters
    wanted = {"max_batch_size": batch, "device": device, "dtype": dtype}
    return {name: value for name, value in wanted.items() if name in takes}


def step_arguments(model: torch.nn.Module) -> Callable[[object, torch.Tensor], dict]:
    """A function of (cache, positions): the keywords this transformers' forward takes for them.

    Releases renamed the cache's argument (``past_key_values``, ``cache``); some need the
    cache position; ``logits_to_keep`` (where taken) computes the last position's logits only.
    """
    takes = inspect.signature(model.forward).parameters
    name = "cache" if "cache" in takes else "past_key_values"
    last = {"logits_to_keep": 1} if "logits_to_keep" in takes else {}
    with_position = "cache_position" in takes

    def arguments(cache, positions: torch.Tensor) -> dict:
        extra = {"cache_position": positions} if with_position else {}
        return {name: cache, **extra, **last}

    return arguments


class StaticDecoder:
    """Greedy decoding over a static cache: the prompt's prefill, then a compiled step a token."""

    def __init__(
        self,
        model: torch.nn.Module,
        prompt: torch.Tensor,
        cache_len: int,
        compiled: bool = True,
        options: dict | None = None,
    ):
        self.model, self.prompt, self.cache_len = model, prompt, cache_len
        self.arguments, self.caches = step_arguments(model), {}
        self.step = self.forward
        if compiled and options:  # Inductor settings for this compile only (mode= excludes them)
            cudagraphs = {"triton.cudagraphs": True}  # what mode="reduce-overhead" sets
            options = {**cudagraphs, **options}
            self.step = torch.compile(self.forward, fullgraph=True, options=options)
        elif compiled:
            self.step = torch.compile(self.forward, mode="reduce-overhead", fullgraph=True)

    def forward(self, ids: torch.Tensor, positions: torch.Tensor, cache) -> torch.Tensor:
        """The logits at the last position, writing this step's keys and values into the cache."""
        out = self.model(
            input_ids=ids,
            position_ids=positions.unsqueeze(0),
            use_cache=True,
            **self.arguments(cache, positions),
        )
        return out.logits[:, -1]

    def cache(self, batch: int):
        """One cache per batch, allocated once (the recorded graphs keep its addresses)."""
        from transformers import StaticCache

        if batch not in self.caches:
            device, dtype = self.prompt.device, next(self.model.parameters()).dtype
            extras = static_cache_extras(batch, device, dtype)
            config = self.model.config
            self.caches[batch] = StaticCache(config=config, max_cache_len=self.cache_len, **extras)
        return self.caches[batch]

    def prefill(self, batch: int) -> torch.Tensor:
        """The prompt into an emptied cache, eagerly."""
        cache = self.cache(batch)
        cache.reset()
        positions = torch.arange(self.prompt.shape[1], device=self.prompt.device)
        return self.forward(self.prompt[:batch], positions, cache)

    def generate(self, batch: int, tokens: int) -> torch.Tensor:
        token = self.prefill(batch).argmax(-1, keepdim=True)
        position = torch.tensor([self.prompt.shape[1]], device=self.prompt.device)  # copied once
        generated = [token]
        for _ in range(tokens - 1):
            token = self.step(token, position, self.caches[batch]).argmax(-1, keepdim=True)
            position += 1  # in place on the GPU: the host never waits for it
            generated.append(token)
        return torch.cat(generated, dim=1)


def forced_logits(decoder, tokens: torch.Tensor) -> torch.Tensor:
    """The decoder's logits at each step when fed ``tokens`` (batch, steps) instead of its own."""
    batch = tokens.shape[0]
    steps = [decoder.prefill(batch).clone()]  # a replayed graph's output is overwritten next
    position = torch.tensor([decoder.prompt.shape[1]], device=tokens.device)
    fed = torch.empty((batch, 1), dtype=tokens.dtype, device=tokens.device)  # a slice recompiles
    for i in range(tokens.shape[1] - 1):
        fed.copy_(tokens[:, i : i + 1])
        steps.append(decoder.step(fed, position, decoder.caches[batch]).clone())
        position += 1
    return torch.stack(steps, dim=1).float()


def agreement(logits: torch.Tensor, expected: torch.Tensor, clear: torch.Tensor) -> dict:
    """Greedy choices and logit directions against ``expected``, the model's own pass.

    ``clear`` marks the steps whose top two expected logits are more than 0.5 apart.
    """
    agrees = logits.argmax(-1) == expected.argmax(-1)
    cosines = torch.nn.functional.cosine_similarity(logits, expected, dim=-1)
    return {
        "agree_clear": agrees[clear].float().mean().item(),
        "agree_all": agrees.float().mean().item(),
        "min_cosine": cosines.min().item(),
        "first_cosine": cosines[:, 0].min().item(),
    }


def measure(generate, prefill, batch: int, tokens: int, *, device, warmup: int,
            iterations: int, max_seconds: float) -> dict:  # fmt: skip
    """Median prefill and generation time over ``iterations`` runs after ``warmup`` runs."""
    with torch.inference_mode():
        for _ in range(warmup):
            generate(batch, tokens)
        prefills, totals = [], []
        deadline = time.perf_counter() + max_seconds
        while len(totals) < iterations and (not totals or time.perf_counter() < deadline):
            prefills.append(time_cold_call(lambda: prefill(batch), device))
            totals.append(time_cold_call(lambda: generate(batch, tokens), device))
    gap_s = statistics.median(totals) - statistics.median(prefills)
    # a prefill timed as long as the whole run leaves no readable step time: NaN, never negative
    per_token_s = gap_s / (tokens - 1) if gap_s > 0 else float("nan")
    return {
        "batch": batch,
        "n": len(totals),
        "prefill_ms": 1e3 * statistics.median(prefills),
        "ms_per_token": 1e3 * per_token_s,
        "tokens_per_s": batch * tokens / statistics.median(totals),  # prefill included
        "decode_tokens_per_s": batch / per_token_s,
    }


def decode_runner(decoder, batch: int, host_position: bool = False) -> Callable[[int], None]:
    """run(n): n more decode steps after the prompt, for the profiler (warmed up: 3 steps).

    ``host_position`` builds the position from a Python int each step, as a usual loop does:
    a copy from host memory that the host waits for.
    """
    start = decoder.prompt.shape[1]
    with torch.inference_mode():  # tensors made outside it would recompile the step
        state = {"token": decoder.prefill(batch).argmax(-1, keepdim=True), "at": start}
        on_device = torch.tensor([start], device=decoder.prompt.device)

    def run(n: int) -> None:
        with torch.inference_mode():
            for _ in range(n):
                if host_position:  # a copy from host memory, which the host waits for
                    position = torch.tensor([state["at"]], device=on_device.device)
                else:
                    position = on_device
                logits = decoder.step(state["token"], position, decoder.caches[batch])
                state["token"] = logits.argmax(-1, keepdim=True)
                state["at"] += 1
                on_device.add_(1)

    run(3)  # the graphs record
    return run


def stacked_linear(linears: list[torch.nn.Linear]) -> torch.nn.Linear:
    """One Linear whose output is the given Linears' outputs side by side."""
    weight = torch.cat([linear.weight for linear in linears]).detach()
    stacked = torch.nn.Linear(*weight.shape[::-1], bias=False, device="meta")
    stacked.weight = torch.nn.Parameter(weight, requires_grad=False)
    if linears[0].bias is not None:
        bias = torch.cat([linear.bias for linear in linears]).detach()
        stacked.bias = torch.nn.Parameter(bias, requires_grad=False)
    return stacked


class GateUpMLP(torch.nn.Module):
    """A Llama MLP whose gate and up projections are one matrix: one read, one kernel."""

    def __init__(self, mlp: torch.nn.Module):
        super().__init__()
        self.gate_up = stacked_linear([mlp.gate_proj, mlp.up_proj])
        self.down_proj, self.act_fn = mlp.down_proj, mlp.act_fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return self.down_proj(self.act_fn(gate) * up)


class Columns(torch.nn.Module):
    """Stands in for q_proj, k_proj or v_proj: its own columns of the stacked product."""

    def __init__(self, start: int, end: int):
        super().__init__()
        self.start, self.end = start, end

    def forward(self, qkv: torch.Tensor) -> torch.Tensor:
        return qkv[..., self.start : self.end]


class StackedQKVAttention(torch.nn.Module):
    """An attention whose q, k and v come from one matrix product; its own code does the rest."""

    def __init__(self, attention: torch.nn.Module):
        super().__init__()
        projections = [attention.q_proj, attention.k_proj, attention.v_proj]
        self.qkv = stacked_linear(projections)
        ends = torch.tensor([p.out_features for p in projections]).cumsum(0).tolist()
        attention.q_proj, attention.k_proj, attention.v_proj = map(Columns, [0, *ends[:-1]], ends)
        self.attention = attention

    def forward(self, hidden_states: torch.Tensor, *args, **kwargs):
        return self.attention(self.qkv(hidden_states), *args, **kwargs)


def _stackable(module: torch.nn.Module, names: tuple[str, ...], allow_bias: bool) -> bool:
    """Linears that all have a bias, or none (and none at all unless allow_bias)."""
    projections = [getattr(module, name, None) for name in names]
    if not all(isinstance(p, torch.nn.Linear) for p in projections):
        return False
    biases = {p.bias is not None for p in projections}
    return len(biases) == 1 and (allow_bias or biases == {False})


def stack_projections(model: torch.nn.Module) -> dict[str, bool]:
    """In place: each layer's gate and up projections, and its q, k and v, as one matrix each.

    Returns what was stacked; a model without such Linears keeps them apart.
    """
    layers = model.model.layers
    mlp = all(_stackable(layer.mlp, ("gate_proj", "up_proj"), False) for layer in layers)
    qkv = all(_stackable(layer.self_attn, ("q_proj", "k_proj", "v_proj"), True) for layer in layers)
    for layer in layers:
        if mlp:
            layer.mlp = GateUpMLP(layer.mlp)
        if qkv:
            layer.self_attn = StackedQKVAttention(layer.self_attn)
    return {"gate and up": mlp, "q, k and v": qkv}
