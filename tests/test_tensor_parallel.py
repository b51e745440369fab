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
    for rank in (0, 1):
        assert f"[rank {rank}," in done.stdout and "done" in done.stdout
    assert "compiling" not in done.stdout


def test_kernel_time_counts_from_the_end_of_the_barrier_on():
    sys.path.insert(0, str(ROOT / "notebooks" / "scripts"))
    from types import SimpleNamespace

    from tp_decode import after_first_collective

    def kernel(name: str, start: int, end: int) -> SimpleNamespace:
        return SimpleNamespace(name=name, time_range=SimpleNamespace(start=start, end=end))

    waited = kernel("ncclDevKernel_AllReduce_Sum_u8", 0, 170_000)  # the barrier, lag included
    before = kernel("elementwise", -5, -1)
    step = [
        kernel("gemv", 170_010, 170_050),
        kernel("ncclDevKernel_AllReduce_Sum_bf16", 170_060, 170_070),
    ]
    assert after_first_collective([step[1], waited, step[0], before]) == step
    assert after_first_collective(step[:1]) == step[:1]  # no collective: nothing dropped
