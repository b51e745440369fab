"""Every bad parameter gets one clear line, before any model loads."""

import pytest
import torch

from helpers import workload
from helpers.errors import (
    DeviceUnavailableError,
    ModelNotAvailableError,
    ParameterError,
    SeriesError,
)
from helpers.parameters import check_parameters

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
