"""Tensor-parallel greedy decoding with PyTorch's own distributed engine (notebook 10).

    torchrun --nproc-per-node N tp_decode.py MODEL --out result.json [--tiny] [--batches 1,8]
        [--prompt 128] [--new-tokens 64] [--allreduce-mib 256] [--compile-mode auto|none|MODE]

Every process builds the same model (same seed), then ``parallelize_module`` splits each
layer across the processes with the plan below. The split model decodes two ways, the
second measured twice:

- "eager generate": ``model.generate``, where every operation on a split weight (a DTensor)
  goes through DTensor's dispatcher on the host, every step;
- "compiled step": notebook 08's loop over a static KV cache, its decode step compiled with
  ``torch.compile`` (and recorded as a CUDA graph on a GPU): DTensor's layout decisions are
  made once, while tracing; each call still checks the compiled code's guards and unwraps
  the split weights into the local tensors the kernels read;
- "compiled step, guards skipped": the same, once every shape is compiled, checking only the
  guards that pick between compiled versions, not those on every split weight.

Rank 0 writes one JSON file: per batch size and path the decode time, the generated tokens,
the GPU time of a decode step in compute kernels (NCCL's left out) and the agreement of
each compiled path with the eager model; per batch size the time of one step's all-reduces
alone; the memory per GPU, and an all-reduce bandwidth measured on the same processes.
The first step's logits go beside it, one ``.pt`` file per batch size. Every process
prints a ``[rank R, S s] stage`` line as it reaches each stage, so that a run stopped from
outside shows where each process was; ``done`` comes after the results are written.
"""

import argparse
import faulthandler
import inspect
import json
import os
import signal
import statistics
import time
from collections import Counter
from collections.abc import Callable
from functools import partial

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
from torch.profiler import ProfilerActivity, profile
from transformers import StaticCache

from helpers.compiled import expect_compiled
from helpers.gpu import gpu_features
from helpers.timing import synchronize, time_cold_call
from helpers.workload import causal_lm_weights, load_causal_lm

STARTED = time.perf_counter()
REPEATS = 3  # timed calls per measurement


def progress(rank: int, stage: str) -> None:
    """One line per stage and process: where a stopped run had got to."""
    # one write per line: torchrun's workers are unbuffered and share the launcher's pipe
    print(f"[rank {rank}, {time.perf_counter() - STARTED:.0f} s] {stage}\n", end="", flush=True)


#: Megatron-style plan for one Llama layer: the attention heads and the MLP's inner width are
#: split across processes; each layer then needs two all-reduces (after o_proj and down_proj).
LAYER_PLAN = {
    "self_attn.q_proj": ColwiseParallel(),
    "self_attn.k_proj": ColwiseParallel(),
    "self_attn.v_proj": ColwiseParallel(),
    "self_attn.o_proj": RowwiseParallel(),
    "mlp.gate_proj": ColwiseParallel(),
    "mlp.up_proj": ColwiseParallel(),
    "mlp.down_proj": RowwiseParallel(),
}


def allreduce_gb_s(device: torch.device, mib: int, world: int) -> float | None:
    """Bus bandwidth of an all-reduce (the NCCL-tests convention: 2(n-1)/n x bytes / time)."""
    if world == 1:
        return None
    data = torch.ones(mib * 2**20 // 2, dtype=torch.float16, device=device)  # 2-byte values

    def ten_calls() -> None:
        for _ in range(10):
            dist.all_reduce(data)

    for _ in range(3):
        dist.all_reduce(data)
    seconds = time_cold_call(ten_calls, device) / 10
    return 2 * (world - 1) / world * data.numel() * 2 / seconds / 1e9


def greedy(tokens: int) -> dict:
    """generate's arguments for exactly `tokens` greedy tokens, so that runs compare."""
    return dict(max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False, pad_token_id=0)


def generate_eager(model: torch.nn.Module, prompt: torch.Tensor, tokens: int) -> torch.Tensor:
    """The prompt and `tokens` greedy tokens from Hugging Face's generate."""
    return model.generate(prompt, attention_mask=torch.ones_like(prompt), **greedy(tokens))


class CompiledDecoder:
    """Greedy decoding over a static KV cache with a compiled decode step (notebook 08's loop)."""

    def __init__(self, model: torch.nn.Module, max_len: int, mode: str) -> None:
        self.model, self.max_len = model, max_len
        params = inspect.signature(model.forward).parameters
        # transformers renamed the cache argument between releases
        self.cache_arg = "cache" if "cache" in params else "past_key_values"
        self.pass_positions = "cache_position" in params
        self.caches: dict[int, StaticCache] = {}
        self.step = torch.compile(self.forward, mode=mode, fullgraph=True)
        self.calls: Counter = Counter()

    def call_step(self, loop: str, ids: torch.Tensor, positions: torch.Tensor, cache: StaticCache):
        """The compiled step, with every process lined up before its first calls per shape.

        Those calls compile, warm up and record the CUDA graph, all-reduces included, and a
        process that compiles for a minute leaves the other waiting inside an all-reduce. So
        each process first finishes its queued work and meets the others at a barrier: they
        compile and record side by side, a precaution that costs three barriers per shape.
        """
        key = (loop, ids.shape[0])
        if self.calls[key] < 3 and dist.get_world_size() > 1:
            synchronize(ids.device)
            dist.barrier()
            synchronize(ids.device)
        self.calls[key] += 1
        return self.step(ids, positions, cache)

    def cache_for(self, batch: int) -> StaticCache:
        """One cache per batch size, allocated once (a CUDA graph keeps its addresses), emptied."""
        if batch not in self.caches:  # sized on first use: each process holds its share of heads
            self.caches[batch] = StaticCache(config=self.model.config, max_cache_len=self.max_len)
        self.caches[batch].reset()
        return self.caches[batch]

    def forward(self, ids: torch.Tensor, positions: torch.Tensor, cache: StaticCache):
        """Logits of the last position, writing this step's keys and values into `cache`."""
        extra = {"cache_position": positions} if self.pass_positions else {}
        out = self.model(
            input_ids=ids,
            position_ids=positions.unsqueeze(0),
            use_cache=True,
            logits_to_keep=1,
            **{self.cache_arg: cache},
            **extra,
        )
        return out.logits[:, -1]

    def generate(self, prompt: torch.Tensor, tokens: int) -> torch.Tensor:
        """The prompt and `tokens` greedy tokens: an eager prefill, then compiled steps."""
        cache, length = self.cache_for(prompt.shape[0]), prompt.shape[1]
        positions = torch.arange(length, device=prompt.device)
        token = self.forward(prompt, positions, cache).argmax(-1, keepdim=True)
        generated = [prompt, token]
        # kept on the device and advanced in place: a position built from a Python int each
        # step is a copy from host memory that makes the host wait for the GPU
        position = torch.tensor([length], device=prompt.device)
        for _ in range(tokens - 1):
            token = self.call_step("generate", token, position, cache).argmax(-1, keepdim=True)
            position += 1
            generated.append(token)
        return torch.cat(generated, dim=1)

    def forced_cosine(self, sequence: torch.Tensor, prompt_len: int) -> float:
        """Min cosine between the compiled steps fed `sequence` and one eager pass over it."""
        cache = self.cache_for(sequence.shape[0])
        positions = torch.arange(prompt_len, device=sequence.device)
        self.forward(sequence[:, :prompt_len], positions, cache)
        # laid out as generate's tokens are: the compiler guards on strides, and a slice of
        # `sequence` would compile the step once more
        fed = sequence.new_empty(sequence.shape[0], 1)
        steps, position = [], torch.tensor([prompt_len], device=sequence.device)
        for at in range(prompt_len, sequence.shape[1]):
            fed.copy_(sequence[:, at : at + 1])
            steps.append(self.call_step("forced", fed, position, cache).clone())
            position += 1
        compiled = torch.stack(steps, dim=1).float()
        eager = self.model(sequence).logits[:, prompt_len:].float()  # the same positions at once
        return torch.nn.functional.cosine_similarity(compiled, eager, dim=-1).min().item()


def compute_ms(run: Callable[[int], object], device: torch.device) -> float:
    """GPU time per decode step in kernels other than NCCL's: 5 tokens minus 1, over 4.

    NCCL kernels are left out: an all-reduce kernel starts when its own process gets there
    and spins until the other does, so its time is mostly waiting for the other process's
    host, which the profiler itself slows down. allreduce_step_ms times the communication.
    """
    totals = []
    for tokens in (5, 1):  # the 1-token run is the prefill alone
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            run(tokens)
            synchronize(device)
        totals.append(
            sum(
                e.time_range.elapsed_us()
                for e in prof.events()
                if e.device_type.name == "CUDA"
                and not getattr(e, "is_user_annotation", False)
                and "nccl" not in e.name.lower()
            )
        )
    return (totals[0] - totals[1]) / 4 / 1e3


def allreduce_step_ms(
    device: torch.device, *, batch: int, hidden: int, count: int, dtype: torch.dtype
) -> tuple[float, str]:
    """One decode step's all-reduces alone: `count` of them, each of one hidden vector per
    sequence, with no computation between them and the processes lined up first.

    On a GPU they are recorded in a CUDA graph and replayed, as the compiled step runs them
    in mode "reduce-overhead", so that launching them costs nothing; on a CPU (gloo), or if
    recording fails, they run one by one. Returns the milliseconds and how they ran.
    """
    data = torch.zeros(batch, hidden, dtype=dtype, device=device)

    def one_step() -> None:
        for _ in range(count):
            dist.all_reduce(data)

    one_step()  # warm-up, outside any capture
    synchronize(device)
    replay, how = one_step, "one by one"
    if device.type == "cuda":
        try:  # thread_local, as torch.compile records: NCCL's watchdog thread may query events
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, capture_error_mode="thread_local"):
                one_step()
            # dropped on return: no graph holds NCCL calls at teardown
            replay, how = graph.replay, "replayed from a CUDA graph"
        except RuntimeError as error:
            how = f"one by one (recording a CUDA graph failed: {str(error)[:100]})"
            synchronize(device)

    def ten_replays() -> None:
        for _ in range(10):
            replay()

    times = []
    for _ in range(REPEATS):
        synchronize(device)
        dist.barrier()  # the processes start together
        times.append(time_cold_call(ten_replays, device) / 10)
    return 1e3 * statistics.median(times), how


def measure(run: Callable[[int], torch.Tensor], tokens: int, device: torch.device) -> dict:
    """One path's first call (compiling, if any), median prefill and decode times, its tokens."""
    outputs = []  # the first call's tokens: no extra generation just to keep them
    first_s = time_cold_call(lambda: outputs.append(run(tokens)), device)
    generated = outputs[0]
    # medians of a fixed number of calls: every process must make the same calls, since
    # each all-reduce waits for all of them
    prefill_s = statistics.median(  # generating 1 token is the prefill
        time_cold_call(partial(run, 1), device) for _ in range(REPEATS)
    )
    total_s = statistics.median(
        time_cold_call(partial(run, tokens), device) for _ in range(REPEATS)
    )
    gpu_compute_ms = compute_ms(run, device) if device.type == "cuda" else None
    return {
        "first_call_s": first_s,
        "prefill_ms": 1e3 * prefill_s,
        "ms_per_step": 1e3 * (total_s - prefill_s) / (tokens - 1),
        "tokens_per_s": generated.shape[0] * tokens / total_s,
        "gpu_compute_ms_per_step": gpu_compute_ms,
        "generated": generated,
    }


def measure_compiled(
    compiled: CompiledDecoder,
    *,
    prompt: torch.Tensor,
    reference: torch.Tensor,
    tokens: int,
    device: torch.device,
) -> dict:
    """measure() of the compiled path, and its agreement with the eager model on `reference`."""
    row = measure(partial(compiled.generate, prompt), tokens, device)
    # fed generate's tokens, does the compiled step compute what the eager model does?
    row["forced_cosine"] = compiled.forced_cosine(reference, prompt.shape[1])
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--out", required=True)
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--batches", default="1")
    parser.add_argument("--prompt", type=int, default=128)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--allreduce-mib", type=int, default=256)
    parser.add_argument(
        "--compile-mode",
        default="auto",
        help='"auto": "reduce-overhead" on a GPU, else "default"; "none": eager generate only',
    )
    args = parser.parse_args()
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # kill -USR1: where is it stuck?
    cuda = torch.cuda.is_available()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"])) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    mesh = init_device_mesh(device.type, (world,))
    dtype = gpu_features(device).decoder_dtype  # bf16 where native, fp16 on a T4, fp32 on CPUs
    with device:  # initialised where it runs: seconds on a GPU, minutes on a CPU for 8B weights
        model, note = load_causal_lm(args.model, tiny=args.tiny)  # same seed, same weights
    model = model.to(dtype=dtype)
    if world > 1:
        for layer in model.model.layers:
            parallelize_module(layer, mesh, LAYER_PLAN)
    if cuda:  # from here on, count only what this process keeps: its share of the model
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    model_gib = torch.cuda.memory_allocated(device) / 2**30 if cuda else None
    progress(rank, f"model built and split over {world} process(es)")
    auto = "reduce-overhead" if cuda else "default"  # CUDA graphs need a GPU
    mode = auto if args.compile_mode == "auto" else args.compile_mode
    compiled = (
        None if mode == "none" else CompiledDecoder(model, args.prompt + args.new_tokens, mode)
    )
    rows, batches = [], [int(b) for b in args.batches.split(",")]
    # no_grad, generate's own default: under inference_mode, aten.linear reaches DTensor
    # undecomposed and takes a slower path, every call
    with torch.no_grad():
        for batch in batches:
            torch.manual_seed(0)
            prompt = torch.randint(0, model.config.vocab_size, (batch, args.prompt), device=device)
            first_logits = model(prompt).logits[:, -1].float()
            logits_file = f"{args.out}.logits-b{batch}.pt"
            torch.save(first_logits.cpu().clone(), logits_file)  # a copy: a view saves its storage
            measured = {
                "eager generate": measure(
                    partial(generate_eager, model, prompt), args.new_tokens, device
                )
            }
            progress(rank, f"batch {batch}: eager generate measured")
            if compiled is not None:
                progress(
                    rank,
                    f"batch {batch}: compiling (mode {mode!r}) and measuring the compiled step",
                )
                reference = measured["eager generate"]["generated"]
                checked = partial(
                    measure_compiled,
                    compiled,
                    prompt=prompt,
                    reference=reference,
                    tokens=args.new_tokens,
                    device=device,
                )
                # the first batch compiles; later ones may reuse a dynamic-shape graph
                with expect_compiled("the compiled step", when=cuda and batch == batches[0]):
                    measured["compiled step"] = checked()
                # every shape is compiled by now: only the guards that pick between the
                # compiled versions (the batch size) are needed, not those on every weight
                with torch.compiler.set_stance("default", skip_guard_eval_unsafe=True):
                    measured["compiled step, guards skipped"] = checked()
                progress(rank, f"batch {batch}: compiled step measured")
            for path, row in measured.items():
                tokens = row.pop("generated")[:, args.prompt :].tolist()
                rows.append({"batch": batch, "path": path, **row, "tokens": tokens})
    all_reduces = 2 * model.config.num_hidden_layers  # per decode step
    alone = partial(
        allreduce_step_ms, device, hidden=model.config.hidden_size, count=all_reduces, dtype=dtype
    )
    timed = {b: alone(batch=b) for b in batches} if world > 1 else {}
    result = {
        "world": world,
        "backend": "nccl" if cuda else "gloo",
        "note": note,
        "weights": causal_lm_weights(args.model, tiny=args.tiny),
        "device": torch.cuda.get_device_name(device) if cuda else "cpu",
        "compile_mode": mode,
        "model_gib_per_gpu": model_gib,
        "peak_gib_per_gpu": torch.cuda.max_memory_allocated(device) / 2**30 if cuda else None,
        "allreduce_bus_gb_s": allreduce_gb_s(device, args.allreduce_mib if cuda else 16, world),
        "allreduce_step_ms": {b: ms for b, (ms, _) in timed.items()},
        "allreduce_step_how": sorted({how for _, how in timed.values()}),
        "rows": rows,
    }
    if rank == 0:
        with open(args.out, "w") as file:
            json.dump(result, file)
    progress(rank, "done")
    leave_group(rank)


def leave_group(rank: int, patience_s: float = 30) -> None:
    """Leave the process group; if that hangs, dump the stacks and exit with status 1.

    Destroying an NCCL group after its collectives were recorded in CUDA graphs can hang
    (pytorch/pytorch#115388, open); dropping the graphs first is a workaround reported there,
    not a fix. The watchdog runs without Python's lock, so it fires even inside a hung C++ call.
    """
    progress(rank, "leaving the process group")
    torch._dynamo.reset()  # drops the compiled steps and their CUDA graphs
    faulthandler.dump_traceback_later(patience_s, exit=True)
    dist.destroy_process_group()
    faulthandler.cancel_dump_traceback_later()


if __name__ == "__main__":
    main()
