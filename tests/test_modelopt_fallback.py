"""06 skips modelopt's nvcc build by caching its CUDA extension as absent.

These tests check, on the installed modelopt, the three things that skip relies on: a cached
None builds nothing, the quantize op then fails with the AttributeError that modelopt's
``FakeTensorQuantFunction.forward`` catches, and the PyTorch fallback rounds to INT8 steps.
A modelopt release that changes any of them fails here, not silently on a GPU.
"""

import inspect
import json
from pathlib import Path

import pytest
import torch

extensions = pytest.importorskip("modelopt.torch.quantization.extensions")
tensor_quant = pytest.importorskip("modelopt.torch.quantization.tensor_quant")

NOTEBOOK = Path(__file__).parents[1] / "notebooks" / "06_quantization.ipynb"
SKIP_LINE = "extensions.get_cuda_ext.extension = None"


@pytest.fixture
def extension_cached_absent(monkeypatch):
    """Cache None as 06 does, and make any build attempt fail the test."""

    def no_build(*args, **kwargs):
        raise AssertionError("modelopt tried to build its CUDA extension")

    monkeypatch.setattr(extensions, "load_cpp_extension", no_build)
    monkeypatch.setattr(extensions.get_cuda_ext, "extension", None, raising=False)


def test_notebook_06_caches_the_extension_as_absent_before_calibrating():
    cells = [
        "".join(c["source"])
        for c in json.loads(NOTEBOOK.read_text())["cells"]
        if c["cell_type"] == "code"
    ]
    code = "\n".join(cells)  # in order: the skip must come before the first calibration
    assert SKIP_LINE in code and code.index(SKIP_LINE) < code.index("mtq.quantize(")
    assert "get_cuda_ext()" not in code  # nothing calls the builder


def test_a_cached_none_builds_nothing(extension_cached_absent):
    assert extensions.get_cuda_ext() is None


def test_the_quantize_op_raises_what_forward_catches(extension_cached_absent):
    inputs, amax = torch.randn(4, 8), torch.tensor(2.0)
    with pytest.raises(AttributeError):
        tensor_quant.quantize_op(inputs, amax, 8, 0, False, True)
    forward = inspect.getsource(tensor_quant.FakeTensorQuantFunction.forward)
    assert "except (AttributeError" in forward and "legacy_quant_func()" in forward


def test_the_pytorch_fallback_rounds_to_int8_steps(extension_cached_absent):
    inputs, amax = torch.randn(64, 32), torch.tensor(1.5)
    outputs = tensor_quant.fake_tensor_quant(inputs, amax)  # a CPU tensor: the fallback path
    steps = outputs * 127 / amax
    assert torch.allclose(steps, steps.round(), atol=1e-4)
    assert steps.abs().max() <= 127
    assert (outputs - inputs.clamp(-1.5, 1.5)).abs().max() <= amax / 127 / 2 + 1e-6


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the GPU path needs CUDA")
def test_a_cuda_tensor_takes_the_pytorch_fallback(extension_cached_absent):
    inputs, amax = torch.randn(64, 32, device="cuda"), torch.tensor(1.5, device="cuda")
    outputs = tensor_quant.fake_tensor_quant(inputs, amax)  # forward catches the AttributeError
    expected = tensor_quant._tensor_quant(inputs, amax)
    assert torch.equal(outputs, expected)
