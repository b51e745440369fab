"""Notebook 10's script on a CPU: two processes over gloo, eager generate only."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_two_gloo_processes_report_each_stage_and_skip_compiling_when_asked(tmp_path):
    out = tmp_path / "tp.json"
    command = [
        sys.executable, "-m", "torch.distributed.run", "--nproc-per-node=2",
        str(ROOT / "notebooks" / "scripts" / "tp_decode.py"), "meta-llama/Llama-3.1-8B", "--tiny",
        "--out", str(out), "--batches", "1", "--prompt", "8", "--new-tokens", "3",
        "--compile-mode", "none",
    ]  # fmt: skip
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=True)
    result = json.loads(out.read_text())
    assert (result["world"], result["backend"]) == (2, "gloo")
    assert [row["path"] for row in result["rows"]] == ["eager generate"]
    assert len(result["rows"][0]["tokens"][0]) == 3
    assert result["allreduce_step_ms"]["1"] > 0  # one step's all-reduces, timed alone
    assert result["allreduce_step_how"] == ["one by one"]  # gloo: no CUDA graph
    assert result["rows"][0]["gpu_compute_ms_per_step"] is None  # profiled on GPUs only
    for rank in (0, 1):
        assert f"[rank {rank}," in done.stdout and "done" in done.stdout
    assert "compiling" not in done.stdout


def test_the_decode_loop_keeps_one_position_on_the_device_and_computes_the_models_answers(
    monkeypatch,
):
    """No host copy per step: every step gets the same position tensor, advanced in place."""
    import torch
    import torch.distributed as dist

    monkeypatch.syspath_prepend(str(ROOT / "notebooks" / "scripts"))
    import tp_decode

    from helpers.workload import load_causal_lm

    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        model, _ = load_causal_lm("meta-llama/Llama-3.1-8B", tiny=True)
        decoder = tp_decode.CompiledDecoder(model, max_len=16, mode="default")
        seen = []

        def step(ids, positions, cache):  # the eager step, recording what it was given
            seen.append((id(positions), int(positions)))
            return decoder.forward(ids, positions, cache)

        decoder.step = step
        prompt = torch.randint(0, model.config.vocab_size, (1, 8))
        with torch.no_grad():
            tokens = decoder.generate(prompt, 4)
            cosine = decoder.forced_cosine(tokens, prompt_len=8)
            expected = tp_decode.generate_eager(model, prompt, 4)
    finally:
        dist.destroy_process_group()
    generated = seen[:3]
    assert len({identity for identity, _ in generated}) == 1
    assert [position for _, position in generated] == [8, 9, 10]
    assert [position for _, position in seen[3:]] == [8, 9, 10, 11]  # forced: every fed token
    assert cosine > 0.999
    assert torch.equal(tokens, expected)  # generate's own greedy tokens
