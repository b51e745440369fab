"""Every GPU choice the notebooks make, on a simulated T4, an H200, a CPU and an emulated T4."""

import io
import sys
import types

import pytest
import torch
from torch.nn.attention import SDPBackend

from helpers import gpu as gf
from helpers.errors import ParameterError


def simulate_gpu(monkeypatch, name: str, capability: tuple[int, int], memory_gib: float):
    """Make torch report one GPU of this kind; is_bf16_supported answers as the real one does."""
    props = types.SimpleNamespace(
        name=name, major=capability[0], minor=capability[1], total_memory=int(memory_gib * 2**30)
    )
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device=None: props)

    def is_bf16_supported(including_emulation: bool = True) -> bool:
        return capability >= (8, 0) or including_emulation  # a T4 emulates bf16

    monkeypatch.setattr(torch.cuda, "is_bf16_supported", is_bf16_supported)
    gf.gpu_features.cache_clear()
    limits = []
    monkeypatch.setattr(gf, "apply_limits", lambda *a, **k: limits.append((a, k)))
    return limits


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch):
    monkeypatch.delenv(gf.EMULATE_VARIABLE, raising=False)
    gf.gpu_features.cache_clear()
    yield
    gf.gpu_features.cache_clear()


def test_a_t4_gets_fp16_and_none_of_the_ampere_features(monkeypatch):
    simulate_gpu(monkeypatch, "Tesla T4", (7, 5), 14.7)
    assert torch.cuda.is_bf16_supported()  # the trap: emulation counts by default
    t4 = gf.gpu_features("cuda")
    assert t4.decoder_dtype == torch.float16 and t4.half_dtype == torch.float16
    assert not (t4.bf16 or t4.fp8 or t4.tf32 or t4.flash_attention or t4.cudnn_attention)
    assert not t4.async_copy  # 08's GEMV keeps only one-stage configs: the rest compile alike
    assert not t4.pdl  # 08d skips its PDL step
    assert t4.small and t4.emulating is None
    assert t4.small_reason == "to keep the lesson's time on a small GPU (15 GiB)"
    assert t4.sdpa_backends() == [SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
    assert t4.summary().endswith("16-bit work in fp16; lacks bf16, cudnn, flash, fp8, tf32")


def test_an_h200_gets_bf16_fp8_tf32_and_fast_attention(monkeypatch):
    simulate_gpu(monkeypatch, "NVIDIA H200", (9, 0), 139.8)
    h200 = gf.gpu_features("cuda")
    assert h200.decoder_dtype == torch.bfloat16
    assert h200.bf16 and h200.fp8 and h200.tf32 and h200.pdl and not h200.small
    assert h200.sdpa_backends()[:2] == [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION]


def test_an_a100_has_bf16_but_no_fp8(monkeypatch):
    simulate_gpu(monkeypatch, "NVIDIA A100", (8, 0), 40.0)
    a100 = gf.gpu_features("cuda")
    assert a100.bf16 and a100.tf32 and not a100.fp8


def test_a_cpu_runs_float32_with_plain_attention():
    cpu = gf.gpu_features("cpu")
    assert cpu.decoder_dtype == torch.float32 and not cpu.gpu and not cpu.small
    assert cpu.sdpa_backends() == [SDPBackend.MATH]


def test_emulating_a_t4_on_an_h200_describes_a_t4_and_applies_its_limits(monkeypatch):
    limits = simulate_gpu(monkeypatch, "NVIDIA H200", (9, 0), 139.8)
    monkeypatch.setenv(gf.EMULATE_VARIABLE, "t4")
    t4 = gf.gpu_features("cuda")
    assert t4.emulating == "t4" and t4.capability == (7, 5) and t4.memory_gib == 15.0
    assert t4.decoder_dtype == torch.float16 and not (t4.fp8 or t4.pdl) and t4.small  # on an H200
    assert t4.small_reason == "to keep the lesson's time on a T4 (emulated)"  # an H200
    assert len(limits) == 1 and limits[0][1]["total_gib"] == pytest.approx(139.8)
    assert t4.summary().startswith("EMULATED T4: NVIDIA H200 as a T4")
    caveat = gf.emulation_caveat(t4)
    assert "EMULATED" in caveat and "NVIDIA H200" in caveat and "not a T4's" in caveat
    assert "TensorRT is not emulated" in caveat
    assert gf.emulation_caveat(gf.gpu_features("cpu")) is None


def test_an_unknown_emulation_is_refused_in_one_line(monkeypatch):
    simulate_gpu(monkeypatch, "NVIDIA H200", (9, 0), 139.8)
    monkeypatch.setenv(gf.EMULATE_VARIABLE, "a100")
    with pytest.raises(ParameterError, match="emulates only 't4'"):
        gf.gpu_features("cuda")


def test_apply_limits_caps_memory_and_turns_off_what_a_t4_lacks(monkeypatch):
    calls = {}

    def set_fraction(fraction, device):
        assert isinstance(device, int), "torch wants an index, not a bare 'cuda'"
        calls.update(fraction=fraction)

    monkeypatch.setattr(torch.cuda, "set_per_process_memory_fraction", set_fraction)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.backends.cuda, "enable_flash_sdp", lambda on: calls.update(f=on))
    monkeypatch.setattr(torch.backends.cuda, "enable_cudnn_sdp", lambda on: calls.update(c=on))
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True  # cuBLAS' module cannot be monkeypatched
    try:
        gf.apply_limits(gf.t4_features("NVIDIA H200"), torch.device("cuda"), total_gib=150.0)
        assert torch.backends.cuda.matmul.allow_tf32 is False
        assert torch.backends.cudnn.allow_tf32 is False
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn
    assert calls == {"fraction": pytest.approx(0.1), "f": False, "c": False}


def test_labels_name_the_dtype_that_ran():
    assert [gf.dtype_label(d) for d in (torch.bfloat16, torch.float16, torch.float32)] == [
        "bf16",
        "fp16",
        "fp32",
    ]


def test_a_title_beside_a_device_name_carries_the_emulation(monkeypatch):
    monkeypatch.delenv(gf.EMULATE_VARIABLE, raising=False)
    assert gf.emulation_tag() == ""
    monkeypatch.setenv(gf.EMULATE_VARIABLE, "t4")
    assert gf.emulation_tag() == " (EMULATED T4 limits)"


def test_an_emulated_run_titles_its_figures_once(monkeypatch):
    from helpers.plots import plot_latency, titled

    monkeypatch.delenv(gf.EMULATE_VARIABLE, raising=False)
    assert titled("roberta-base, H100") == "roberta-base, H100"
    monkeypatch.setenv(gf.EMULATE_VARIABLE, "t4")
    assert titled("roberta-base, H100") == "roberta-base, H100 (EMULATED T4 limits)"
    assert titled("H100 (EMULATED T4 limits), fp16") == "H100 (EMULATED T4 limits), fp16"
    figure = plot_latency([], "roberta-base, H100")
    assert "EMULATED T4" in figure.axes[0].get_title()


def test_an_emulated_run_tags_each_printed_time_speed_or_ratio(monkeypatch):
    out = io.StringIO()
    tagged = gf.TaggedLines(out, " [emulated T4 limits]")
    tagged.write("median 5.403 ms, p90 8.6 ms\nbuilt in 15")  # a line may come in pieces
    tagged.write(".7 s\nparts: 3 engines\n1064 output tokens/s\n1.36x the rate\n")
    tagged.write("4232 GB/s\n51.4 % of the roof\nmodel: roberta-base\n")
    assert out.getvalue().splitlines() == [
        "median 5.403 ms, p90 8.6 ms [emulated T4 limits]",
        "built in 15.7 s [emulated T4 limits]",
        "parts: 3 engines",
        "1064 output tokens/s [emulated T4 limits]",
        "1.36x the rate [emulated T4 limits]",
        "4232 GB/s [emulated T4 limits]",
        "51.4 % of the roof [emulated T4 limits]",
        "model: roberta-base",
    ]
    tagged.write("partial")
    tagged.flush()  # a flush sends the cut line as it is
    assert out.getvalue().endswith("model: roberta-base\npartial")
    assert tagged.getvalue() == out.getvalue()  # everything else is the stream's own


def test_only_an_emulated_lesson_tags_its_output_and_only_once(monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    gf.tag_emulated_output(gf.gpu_features("cpu"))
    assert not isinstance(sys.stdout, gf.TaggedLines)  # not emulating: stdout untouched
    simulate_gpu(monkeypatch, "NVIDIA H200", (9, 0), 139.8)
    monkeypatch.setenv(gf.EMULATE_VARIABLE, "t4")
    t4 = gf.gpu_features("cuda")
    gf.tag_emulated_output(t4)
    gf.tag_emulated_output(t4)
    assert isinstance(sys.stdout, gf.TaggedLines)
    assert not isinstance(sys.stdout.stream, gf.TaggedLines)
    print("eager fp16 2.4 ms")
    assert sys.stdout.stream.getvalue() == "eager fp16 2.4 ms  [emulated T4 limits]\n"


def test_no_notebook_or_script_checks_the_gpu_itself():
    """Every capability choice reads helpers.gpu, so that an emulated T4 is a T4 everywhere."""
    import json
    from pathlib import Path

    root = Path(__file__).parents[1] / "notebooks"
    checks = ("get_device_capability", "is_bf16_supported", "get_device_properties")
    for path in [*root.rglob("*.ipynb"), *root.rglob("*.py")]:
        if path.suffix == ".ipynb":
            cells = json.loads(path.read_text())["cells"]
            code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        else:
            code = path.read_text()
        assert not [c for c in checks if c in code], path
