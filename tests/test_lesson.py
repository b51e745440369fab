"""The two bookkeeping calls of a lesson, and the numbers that name lessons and deep dives."""

import json

import pytest

import helpers as h
from helpers.claims import Verdict
from helpers.errors import ParameterError
from helpers.records import number_of
from helpers.tools import series


@pytest.mark.parametrize(
    "name, number",
    [
        ("02_fp16_compile.ipynb", "02"),
        ("02d_fp16_profiles.ipynb", "02d"),
        ("08d-decoding-kernels", "08d"),
        ("02-latency_roberta-base_b16_s32.png", "02"),
        ("10_tensor_parallel_Llama-3.2-1B_b1_s256", "10"),
    ],
)
def test_number_of_names_core_lessons_and_deep_dives(name, number):
    assert number_of(name) == number


def test_number_of_refuses_a_name_without_a_number():
    with pytest.raises(ValueError, match="notebook number"):
        number_of("README.md")


@pytest.fixture
def project(tmp_path):
    for name in ("01_a.ipynb", "02_b.ipynb", "deep-dives/02d_c.ipynb", "deep-dives/08d_e.ipynb"):
        (tmp_path / "notebooks" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "notebooks" / name).write_text("{}")
    (tmp_path / "notebooks" / "02_b.failed.ipynb").write_text("{}")
    return tmp_path


@pytest.mark.parametrize(
    "only, expected",
    [
        (None, ["01", "02", "02d", "08d"]),
        ("core", ["01", "02"]),
        ("deep-dives", ["02d", "08d"]),
        ("2,2d", ["02", "02d"]),
        ("core,08d", ["01", "02", "08d"]),
    ],
)
def test_the_runner_finds_core_lessons_first_then_deep_dives(project, only, expected):
    assert [number_of(p) for p in series.notebooks(project, only)] == expected


def test_the_runner_refuses_an_unknown_number_in_one_line(project, capsys):
    with pytest.raises(SystemExit):
        series.notebooks(project, "03d")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "03d" in err and "core or deep-dives" in err


def test_a_lesson_checks_before_it_starts(tmp_path):
    values = dict(model_name="roberta-base", batch_size=0, seq_len=32, device="cpu")
    with pytest.raises(ParameterError, match="batch_size"):
        h.start_lesson("01-baseline", values | {"output_dir": str(tmp_path)})


def test_a_lesson_ends_with_its_verdicts_and_its_record(tmp_path, capsys):
    values = dict(model_name="roberta-base", batch_size=2, seq_len=8, device="cpu", warmup=1)
    lesson = h.start_lesson("02d-profiles", values | {"output_dir": str(tmp_path), "other": 3})
    assert lesson.device.type == "cpu" and lesson.parameters["warmup"] == 1
    verdict = Verdict(claim="4x faster", measured="1.5x", verdict="does not hold")
    path = lesson.finish(verdicts=[verdict], parameters={"precision": "fp16"}, extra=7)
    out = capsys.readouterr().out
    assert "Source: “4x faster”" in out and "verdict: does not hold" in out
    record = json.loads(path.read_text())
    assert path.name == "02d-profiles_roberta-base_b2_s8.json"
    assert record["parameters"]["precision"] == "fp16" and "other" not in record["parameters"]
    assert record["claims"] == [verdict.record()] and record["extra"] == 7


def test_a_noisy_lesson_says_so_and_its_record_keeps_why(tmp_path, capsys):
    values = dict(model_name="roberta-base", batch_size=2, seq_len=8, device="cpu")
    lesson = h.start_lesson("02d-stub", values | {"output_dir": str(tmp_path)})
    on_cpu = lesson.finish(verdicts=[], noisy=["batches ran 50.0-14.2 ms per step"])
    assert json.loads(on_cpu.read_text())["noisy"] == []  # a CPU's timings are not the lesson
    assert "NOISY" not in capsys.readouterr().out
    lesson.environment["device"] = "cuda:0"  # as a GPU's run reports it
    path = lesson.finish(verdicts=[], noisy=["batches ran 50.0-14.2 ms per step"])
    assert "NOISY: batches ran 50.0-14.2 ms per step; rerun it: the series does not publish" in (
        capsys.readouterr().out
    )
    assert json.loads(path.read_text())["noisy"] == ["batches ran 50.0-14.2 ms per step"]
    quiet = lesson.finish(verdicts=[])
    assert json.loads(quiet.read_text())["noisy"] == []


def test_an_emulated_lesson_tags_its_printed_timings_and_a_plain_one_does_not(
    tmp_path, monkeypatch
):
    import io
    import sys

    from helpers import gpu, lesson

    values = dict(model_name="roberta-base", batch_size=2, seq_len=8, device="cpu")
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    h.start_lesson("02d-stub", values | {"output_dir": str(tmp_path)})
    assert not isinstance(sys.stdout, gpu.TaggedLines)  # a plain run prints as it is
    t4 = gpu.t4_features("NVIDIA H200")  # what gpu_features gives under SERIES_EMULATE=t4
    monkeypatch.setattr(lesson, "gpu_features", lambda device: t4)
    h.start_lesson("02d-stub", values | {"output_dir": str(tmp_path)})
    print("eager fp16 2.4 ms")
    assert sys.stdout.stream.getvalue().endswith("eager fp16 2.4 ms  [emulated T4 limits]\n")
