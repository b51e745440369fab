"""Tensor-parallel greedy decoding with PyTorch's own distributed engine (notebook 10).

    torchrun --nproc-per-node N tp_decode.py MODEL --out result.json [--tiny] [--batches 1,8]
        [--prompt 128] [--new-tokens 64] [--allreduce-mib 256]

Every process builds the same model (same seed), then ``parallelize_module`` splits each
layer across the processes with the plan below. Rank 0 writes one JSON file: per batch size
the decode time, the generated tokens, the GPU kernel time of a decode step and the part of
it in NCCL kernels, the memory per GPU, and an all-reduce bandwidth measured on the same
processes. The first step's logits go beside it, one ``.pt`` file per batch size.
"""

import argparse
import json
import os
import time
from functools import partial

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
from torch.profiler import ProfilerActivity, profile

from helpers.timing import synchronize, time_cold_call
from helpers.workload import load_causal_lm

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
    data = torch.ones(mib * 2**20 // 2, dtype=torch.bfloat16, device=device)
    for _ in range(3):
        dist.all_reduce(data)
    synchronize(device)
    start = time.perf_counter()
    for _ in range(10):
        dist.all_reduce(data)
    synchronize(device)
    seconds = (time.perf_counter() - start) / 10
    return 2 * (world - 1) / world * data.numel() * 2 / seconds / 1e9


def greedy(tokens: int) -> dict:
    """generate's arguments for exactly `tokens` greedy tokens, so that runs compare."""
    return dict(max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False, pad_token_id=0)


def profiled_ms(model, prompt, mask, tokens: int, device) -> tuple[float, float]:
    """GPU kernel ms, and the part in NCCL kernels, of one greedy generation of `tokens`."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        model.generate(prompt, attention_mask=mask, **greedy(tokens))
        synchronize(device)
    kernels = [
        e
        for e in prof.events()
        if e.device_type.name == "CUDA" and not getattr(e, "is_user_annotation", False)
    ]
    total_us = sum(e.time_range.elapsed_us() for e in kernels)
    comm_us = sum(e.time_range.elapsed_us() for e in kernels if "nccl" in e.name.lower())
    return total_us / 1e3, comm_us / 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--out", required=True)
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--batches", default="1")
    parser.add_argument("--prompt", type=int, default=128)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--allreduce-mib", type=int, default=256)
    args = parser.parse_args()
    cuda = torch.cuda.is_available()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"])) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    mesh = init_device_mesh(device.type, (world,))
    dtype = torch.bfloat16 if cuda else torch.float32
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
    generation = greedy(args.new_tokens)
    rows = []
    for batch in (int(b) for b in args.batches.split(",")):
        torch.manual_seed(0)
        prompt = torch.randint(0, model.config.vocab_size, (batch, args.prompt), device=device)
        mask = torch.ones_like(prompt)
        with torch.inference_mode():
            first_logits = model(prompt).logits[:, -1].float()
            tokens = model.generate(prompt, attention_mask=mask, **generation)  # also a warm-up
            prefill_s = time_cold_call(partial(model, prompt, logits_to_keep=1), device)
            total_s = time_cold_call(
                partial(model.generate, prompt, attention_mask=mask, **generation), device
            )
            decode_kernel_ms = decode_comm_ms = None
            if cuda:  # decode steps only: a 5-token generation minus a 1-token one (the prefill)
                (kernel_5, comm_5), (kernel_1, comm_1) = (
                    profiled_ms(model, prompt, mask, tokens, device) for tokens in (5, 1)
                )
                decode_kernel_ms, decode_comm_ms = (kernel_5 - kernel_1) / 4, (comm_5 - comm_1) / 4
        logits_file = f"{args.out}.logits-b{batch}.pt"
        torch.save(first_logits.cpu().clone(), logits_file)  # a copy: a view saves all its storage
        rows.append(
            {
                "batch": batch,
                "prefill_ms": 1e3 * prefill_s,
                "ms_per_step": 1e3 * (total_s - prefill_s) / (args.new_tokens - 1),
                "tokens_per_s": batch * args.new_tokens / total_s,
                "decode_kernel_ms_per_step": decode_kernel_ms,
                "decode_nccl_ms_per_step": decode_comm_ms,
                "tokens": tokens[:, args.prompt :].tolist(),
            }
        )
    result = {
        "world": world,
        "backend": "nccl" if cuda else "gloo",
        "note": note,
        "device": torch.cuda.get_device_name(device) if cuda else "cpu",
        "model_gib_per_gpu": model_gib,
        "peak_gib_per_gpu": torch.cuda.max_memory_allocated(device) / 2**30 if cuda else None,
        "allreduce_bus_gb_s": allreduce_gb_s(device, args.allreduce_mib if cuda else 16, world),
        "rows": rows,
    }
    if rank == 0:
        with open(args.out, "w") as file:
            json.dump(result, file)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
