"""What 07d and 08d leave out on a small GPU (a T4, or one emulated), run from the notebooks'
own cells with stand-ins for the model and the GPU: a CPU never takes these branches, and a
name error there would first show in Colab."""

import json
from types import SimpleNamespace

import pytest

import helpers as h
from helpers.records import project_root

DEEP_DIVES = project_root() / "notebooks" / "deep-dives"


def cell_with(notebook: str, marker: str) -> str:
    """The one code cell of ``notebook`` whose source contains ``marker``."""
    cells = json.loads((DEEP_DIVES / notebook).read_text())["cells"]
    found = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    found = [source for source in found if marker in source]
    assert len(found) == 1, f"{notebook}: {len(found)} cells contain {marker!r}"
    return found[0]


def gpu(small: bool) -> SimpleNamespace:
    reason = "to keep the lesson's time on a T4 (emulated)"
    return SimpleNamespace(gpu=True, small=small, fp8=True, small_reason=reason, summary=str)


@pytest.mark.parametrize("small", [True, False])
def test_08d_runs_its_triton_paths_only_on_a_larger_gpu(small, capsys):
    import torch

    space = dict(
        gpu=True, features=gpu(small), triton_gemv=lambda *a: None, torch=torch,
        quantize_weights=lambda m, storage, kernel: (storage, kernel), model=None,
        decode_weight_bytes=lambda m: 1.0, weight_bytes=2.0, dtype_name="fp16",
    )  # fmt: skip
    exec(cell_with("08d_weight_only.ipynb", 'variants = {f"int8 weight-only'), space)
    triton = [label for label in space["variants"] if "Triton" in label]
    kernels = [kernel for _, kernel in space["variants"].values()]
    out = capsys.readouterr().out
    if small:
        assert triton == [] and kernels == [None, None]  # int8 and fp8 through F.linear
        assert "Triton GEMV paths: SKIPPED to keep the lesson's time on a T4" in out
    else:
        assert len(triton) == 2 and "SKIPPED" not in out  # int8 and fp8 through the kernel


def test_08d_skips_its_sweep_with_a_line_when_no_batch_is_left(capsys):
    space = dict(
        sweep=[], cublas_name="cuBLAS", static_name="reductions", steps16={"reductions": None},
        lesson=SimpleNamespace(environment={"device_name": "a T4"}),
    )  # fmt: skip
    exec(cell_with("08d_weight_only.ipynb", "sweep_rows = ["), space)
    assert space["sweep_rows"] == [] and space["sweep_said"] == ""
    assert "SKIPPED the batch sweep" in capsys.readouterr().out


@pytest.mark.parametrize("small", [True, False])
def test_07d_starts_its_four_extra_processes_only_on_a_larger_gpu(small, capsys):
    started = []

    def no_tensorrt():
        raise h.SkipStep("no Torch-TensorRT here")

    space = dict(
        engine=object(), lesson=SimpleNamespace(features=gpu(small)), starts=[],
        workload=("roberta-base", 16, 32), display=lambda *a: None,
        cold_starts=SimpleNamespace(
            start_row=lambda label, *a, **k: started.append(label) or {"path": label},
            starts_table=lambda s: None, phase_lines=lambda s: "",
        ),
    )  # fmt: skip
    space["h"] = SimpleNamespace(import_torch_tensorrt=no_tensorrt, SkipStep=h.SkipStep)
    exec("import tempfile\nfrom helpers import trt_features\n", space)
    exec(cell_with("07d_onnx_engine.ipynb", "cache_env, no_cache = {}"), space)
    out = capsys.readouterr().out
    if small:
        assert started == [] and "a larger GPU runs them" in space["no_cache"]
        assert "SKIPPED the other starts and the engine cache" in out
    else:  # the engine cache needs Torch-TensorRT: the two torch.compile starts run
        assert started == ["torch.compile", "torch.compile, warm cache"]
