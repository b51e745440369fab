"""Timing, the accuracy gate, and gate_and_time on CPU."""

import time

import pytest
import torch

from helpers import claims
from helpers.accuracy import check_accuracy, compare_outputs
from helpers.errors import AccuracyError, SkipStep
from helpers.records import load_records, output_path, project_root, save_record
from helpers.results import PathResult, gate_and_time, results_table
from helpers.timing import LatencyStats, benchmark_latency
from helpers.tools.report import path_result


def test_latency_stats_percentiles():
    stats = LatencyStats.from_samples([float(v) for v in range(1, 101)], "test")
    assert stats.median_ms == pytest.approx(50.5)
    assert stats.p90_ms == pytest.approx(90.1)
    assert stats.count == 100
    with pytest.raises(ValueError):
        LatencyStats.from_samples([], "test")


def test_max_seconds_caps_warm_up_and_timing():
    start = time.perf_counter()
    stats = benchmark_latency(
        lambda: time.sleep(0.02), "cpu", warmup=100, iterations=100, max_seconds=0.1
    )
    assert time.perf_counter() - start < 1.0
    assert 1 <= stats.count < 100
    assert stats.median_ms >= 20


def test_padding_is_left_out_when_a_mask_is_given():
    reference = torch.zeros(1, 3, 4)
    candidate = reference.clone()
    candidate[0, 2] = 5.0  # garbage at a padding position
    mask = torch.tensor([[1, 1, 0]])
    assert compare_outputs(reference, candidate, attention_mask=mask).max_abs == 0
    assert compare_outputs(reference, candidate).max_abs == 5.0


def test_gate_tells_rounding_from_wrong():
    reference = torch.randn(2, 4, 8)
    rounded = compare_outputs(reference, reference.half())
    check_accuracy(rounded, torch.float16)  # FP16 rounding passes the FP16 gate
    with pytest.raises(AccuracyError, match="WRONG"):
        check_accuracy(compare_outputs(reference, reference * 2), torch.float32)
    with pytest.raises(AccuracyError, match="NaN"):
        check_accuracy(compare_outputs(reference, reference * float("nan")), torch.float32)


def test_gate_and_time_times_only_correct_paths():
    x = torch.randn(4, 8)
    identity = torch.nn.Identity()

    def broken(_):
        raise RuntimeError("capture failed")

    results = gate_and_time(
        {
            "eager fp32": identity,
            "double": lambda t: 2 * t,
            "needs gpu": SkipStep("needs a GPU"),
            "broken": broken,
        },
        [x],
        reference=x,
        warmup=1,
        iterations=7,
        rounds=3,
    )
    by_name = {r.name: r for r in results}
    assert by_name["eager fp32"].status == "ok" and by_name["eager fp32"].latency.count == 7
    assert len(by_name["eager fp32"].round_medians_ms) == 3
    assert by_name["double"].status == "wrong" and by_name["double"].latency is None
    assert by_name["needs gpu"].status == "skipped" and "needs a GPU" in by_name["needs gpu"].reason
    assert by_name["broken"].status == "failed" and "capture failed" in by_name["broken"].reason
    table = results_table(results)
    assert table.loc["eager fp32", "speedup"] == pytest.approx(1.0)
    assert table.loc["double", "status"] == "wrong" and table.index.name == "path"


def test_an_emulated_runs_timing_table_says_whose_speeds_it_holds(monkeypatch):
    monkeypatch.setenv("SERIES_EMULATE", "t4")
    result = PathResult("eager fp32", "ok")
    table = results_table([result])
    assert table.index.name == "path (this GPU's speeds under emulated T4 limits)"
    assert table.loc["eager fp32", "status"] == "ok"


class Specialising:
    """Right on its first call, then wrong from the ``wrong_from``-th call on: a build that
    switches kernels once it has specialised."""

    def __init__(self, wrong_from: int):
        self.calls, self.wrong_from = 0, wrong_from

    def __call__(self, t):
        self.calls += 1
        return t if self.calls < self.wrong_from else t + 1.0


@pytest.mark.parametrize("wrong_from, when", [(2, "after warm-up"), (6, "after timing")])
def test_a_path_wrong_once_settled_fails_the_gate_and_keeps_no_timing(wrong_from, when, capsys):
    x = torch.randn(4, 8)
    # calls: 1 first, 2 warm-up, 3 settled after warm-up, 4-5 timed, 6 settled after timing
    (result,) = gate_and_time(
        {"engine": Specialising(wrong_from)}, [x], reference=x, warmup=1, iterations=2, rounds=1
    )
    assert result.status == "wrong" and result.latency is None
    assert result.diff.max_abs == 0 and result.settled_diff.max_abs == pytest.approx(1.0)
    assert when in capsys.readouterr().out


def test_a_settled_path_records_its_settled_output():
    x = torch.randn(4, 8)
    (result,) = gate_and_time({"eager fp32": torch.nn.Identity()}, [x], reference=x, iterations=2)
    assert result.status == "ok" and result.settled_diff.max_abs == 0
    assert results_table([result]).loc["eager fp32", "settled_max_abs_diff"] == 0


def test_records_round_trip(tmp_path):
    result = PathResult("eager fp32", "ok", latency=LatencyStats.from_samples([1.0, 2.0], "t"))
    path = save_record(
        "99-test",
        parameters=dict(model_name="org/roberta-base", batch_size=2, seq_len=8),
        environment={"device": "cpu"},
        results=[result],
        output_dir=tmp_path,
    )
    assert path == tmp_path / "results" / "records" / "99-test_roberta-base_b2_s8.json"
    (record,) = load_records(path.parent)
    assert path_result(record["results"][0]).latency == result.latency
    assert path_result(record["results"][0]).settled_diff is None


def test_relative_output_folders_start_at_the_project_root():
    assert output_path("runs/x", "a.json") == project_root() / "runs" / "x" / "a.json"


def test_a_candidate_can_have_its_own_reference_and_gate():
    x = torch.randn(4, 8)
    coarse = (x * 64).round() / 64  # a "quantized" model's output

    def gate(candidates):
        return gate_and_time(
            candidates,
            [x],
            reference=x,
            references={"engine": coarse},
            tolerances={"engine": (0.01, 0.99)},
            warmup=1,
            iterations=3,
        )

    results = gate({"eager fp32": torch.nn.Identity(), "engine": lambda t: coarse + 1e-3})
    engine = {r.name: r for r in results}["engine"]
    assert engine.status == "ok" and engine.diff.max_abs == pytest.approx(1e-3, abs=1e-6)
    # far from its own reference is "outside" its gate, which says nothing of FP32
    assert gate({"engine": lambda t: coarse + 0.5})[0].status == "outside"


def test_a_path_with_its_own_reference_that_changes_once_settled_is_outside_its_gate():
    x = torch.randn(4, 8)
    (result,) = gate_and_time(
        {"engine": Specialising(2)},
        [x],
        reference=x + 5.0,  # the shared reference would call it wrong at once
        references={"engine": x},
        warmup=1,
        iterations=2,
        rounds=1,
    )
    assert result.status == "outside" and result.latency is None
    assert result.diff.max_abs == 0 and result.settled_diff.max_abs == pytest.approx(1.0)


def test_the_gate_follows_the_precision_asked_for_not_the_output_dtype():
    x = torch.linspace(1.0, 2.0, 32).reshape(4, 8)

    def fp16_engine_with_fp32_outputs(t):  # a weakly typed build given an FP32 model
        return t + 0.05  # FP16-sized error, FP32 tensors

    def gate(precisions=None):
        (result,) = gate_and_time(
            {"engine": fp16_engine_with_fp32_outputs},
            [x],
            reference=x,
            precisions=precisions,
            warmup=1,
            iterations=2,
        )
        return result

    assert gate().status == "wrong" and "WRONG" in gate().reason  # FP32's gate: 0.01
    asked_fp16 = gate({"engine": torch.float16})
    assert asked_fp16.status == "ok" and asked_fp16.latency is not None  # settled calls too
    assert asked_fp16.output_dtype == "float32"
    assert gate({"other": torch.float16}).status == "wrong"  # only the named candidate


def test_an_engine_asked_for_fp32_is_held_to_fp32_whatever_it_returns():
    x = torch.linspace(1.0, 2.0, 32).reshape(4, 8)
    (result,) = gate_and_time(
        {"engine": lambda t: (t + 0.05).half()},
        [x],
        reference=x,
        precisions={"engine": torch.float32},
        warmup=1,
        iterations=2,
    )
    assert result.status == "wrong" and "0.01" in result.reason


def test_settings_name_the_dtype_their_engine_is_gated_at():
    from helpers.trt_compat import settings_for

    for version, rtx in (("2.9.0", False), ("2.12.0", False), ("2.11.0", True)):
        for precision, dtype in (("fp16", torch.float16), ("fp32", torch.float32)):
            settings = settings_for(precision, version=version, rtx=rtx, names=frozenset())
            assert settings.dtype == dtype


def test_the_rtx_caveat_is_only_for_notebooks_that_run_engines_on_an_unlisted_gpu():
    from helpers.environment import caveats

    hopper = {"tensorrt_build": "RTX", "compute_capability": "9.0", "device": "cuda"}
    assert any("RTX build" in note for note in caveats(hopper))
    assert not caveats(hopper, tensorrt=False)
    assert not caveats({**hopper, "compute_capability": "8.9"})


def test_copy_bandwidth_counts_bytes_read_and_written():
    from helpers.roofline import copy_bandwidth

    rate = copy_bandwidth(torch.device("cpu"))
    assert 0.1 < rate < 10_000  # GB/s: any CPU's memory copy falls in this range


@pytest.mark.parametrize("retime", [True, False])
def test_rounds_that_drift_are_timed_again_once(monkeypatch, capsys, retime):
    """A busy host after a build: the first rounds drift, so every path is timed again."""
    from helpers import results as results_module

    medians = iter([9.0] + [1.0, 2.0, 1.0] + [1.0, 1.05, 1.0])  # the warm-up, then per round
    monkeypatch.setattr(
        results_module, "time_calls", lambda fn, device, iterations, max_seconds: [next(medians)]
    )
    x = torch.ones(2, 2)
    (result,) = gate_and_time(
        {"eager fp32": torch.nn.Identity()}, [x], reference=x, warmup=0, retime=retime
    )
    drifted = "timed again" in capsys.readouterr().out
    assert drifted == retime
    assert result.round_medians_ms == ([1.0, 1.05, 1.0] if retime else [1.0, 2.0, 1.0])


def test_rounds_that_still_drift_after_the_retime_say_so(monkeypatch, capsys):
    from helpers import results as results_module

    medians = iter([9.0] + [1.0, 2.0, 1.0] + [1.5, 1.0, 1.0])  # 07d's eager FP32: 1.51x again
    monkeypatch.setattr(
        results_module, "time_calls", lambda fn, device, iterations, max_seconds: [next(medians)]
    )
    x = torch.ones(2, 2)
    (result,) = gate_and_time(
        {"eager fp32": torch.nn.Identity()}, [x], reference=x, warmup=0, retime=True
    )
    assert "rounds still apart after the retime: eager fp32" in capsys.readouterr().out
    assert claims.unsteady_paths({result.name: result.round_medians_ms}) == ["eager fp32"]


def test_a_prefill_timed_longer_than_the_run_gives_no_step_time_rather_than_a_negative_one():
    import math

    from helpers import decoding

    row = decoding.measure(
        lambda batch, tokens: None,  # the whole run, timed shorter than its own prefill
        lambda batch: time.sleep(0.01),
        batch=1,
        tokens=8,
        device=torch.device("cpu"),
        warmup=0,
        iterations=3,
        max_seconds=1.0,
    )
    assert math.isnan(row["ms_per_token"]) and math.isnan(row["decode_tokens_per_s"])
    assert row["prefill_ms"] > 0 and row["n"] == 3
