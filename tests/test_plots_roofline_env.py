import pytest
import torch

from helpers.benchmark import PathResult
from helpers.compile import CompiledModel, capture_cuda_graph
from helpers.environment import environment_report, format_report, in_colab
from helpers.errors import SkipPath
from helpers.paths_catalog import add_roofline, with_cuda_graph
from helpers.plots import plot_abs_diff_kde, plot_latency
from helpers.roofline import (
    Ceilings,
    achieved_tflops,
    count_flops,
    measure_ceilings,
    parameter_bytes,
    roofline_ms,
)
from helpers.timing import LatencyStats


def roberta_flops(batch: int, seq: int, layers: int = 12, h: int = 768, inner: int = 3072):
    """Analytic count: linear layers, attention (scores + weighted sum), pooler."""
    tokens = batch * seq
    linear = 2 * tokens * (4 * h * h + 2 * h * inner) * layers
    attention = 2 * 2 * batch * seq * seq * h * layers
    pooler = 2 * batch * h * h
    return linear, attention, pooler


def test_flop_count_matches_the_analytic_count(roberta, small_batch):
    linear, attention, pooler = roberta_flops(4, 16)
    counted = count_flops(roberta.model, small_batch)
    # PyTorch counts attention only for the SDPA kernels it knows (CUDA yes, some CPU no).
    assert linear + pooler <= counted <= linear + attention + pooler


def test_roofline_takes_the_larger_floor():
    ceilings = Ceilings(
        matmul_tflops=100.0, matmul_dtype="bf16", bandwidth_gbs=1000.0, device_name="x"
    )
    assert roofline_ms(10**12, 10**6, ceilings) == pytest.approx(10.0)  # compute-bound
    assert roofline_ms(10**6, 10**11, ceilings) == pytest.approx(100.0)  # memory-bound
    assert achieved_tflops(10**12, 10.0) == pytest.approx(100.0)
    assert parameter_bytes(torch.nn.Linear(10, 10), 2) == 220


def test_measured_cpu_ceilings_are_positive():
    ceilings = measure_ceilings(torch.device("cpu"))
    assert ceilings.matmul_tflops > 0 and ceilings.bandwidth_gbs > 0
    assert ceilings.device_name == "cpu"


def test_add_roofline_annotates_measured_rows_only():
    model = torch.nn.Linear(10, 10)
    ok = PathResult("a", "fp16", "ok", latency=LatencyStats.from_samples([1.0, 1.0], "t"))
    skipped = PathResult("b", "fp16", "skipped", reason="x")
    ceilings = Ceilings(1.0, "bf16", 1.0, "x")
    add_roofline([ok, skipped], 10**9, model, ceilings)
    assert ok.extra["achieved_tflops"] == pytest.approx(1.0)
    assert ok.extra["pct_of_peak"] == pytest.approx(100.0)
    assert skipped.extra == {}


def test_plots_write_their_files(tmp_path):
    results = [
        PathResult("eager", "fp32", "ok", latency=LatencyStats.from_samples([2.0, 3.0], "t")),
        PathResult("trt", "fp16", "skipped", reason="no GPU"),
    ]
    plot_latency(results, "a long title " * 8, tmp_path / "lat.png")
    torch.manual_seed(0)
    plot_abs_diff_kde({"fp16": torch.randn(1000) * 1e-3}, "kde", 0.01, tmp_path / "kde.png")
    assert (tmp_path / "lat.png").stat().st_size > 1000
    assert (tmp_path / "kde.png").stat().st_size > 1000


def test_environment_report_names_what_shapes_a_measurement():
    report = environment_report("cpu")
    for key in (
        "device_name",
        "torch",
        "transformers",
        "torch_tensorrt",
        "tensorrt_build",
        "colab",
    ):
        assert key in report
    assert report["device"] == "cpu" and report["colab"] is in_colab()
    lines = format_report(report).splitlines()
    assert len(lines) == len(report)
    assert any(line.split(":")[0].strip() == "torch" and report["torch"] in line for line in lines)


def test_cuda_graphs_skip_on_cpu():
    x = torch.zeros(2, 2)
    with pytest.raises(SkipPath, match="CUDA"):
        capture_cuda_graph(lambda t: t, [x])
    build = with_cuda_graph(lambda: CompiledModel(torch.nn.Identity(), 0.0, "id"), [x])
    with pytest.raises(SkipPath, match="CUDA"):
        build()
