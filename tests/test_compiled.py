"""The check that a compiled step compiled, against a backend that declines the frame."""

import pytest
import torch
from torch._dynamo.exc import SkipFrame

from helpers.compiled import NotCompiledError, expect_compiled


def test_a_compiled_step_passes():
    torch._dynamo.reset()
    step = torch.compile(lambda x: x.sin() + 1, backend="eager")
    with expect_compiled("the step"):
        step(torch.ones(3))


def test_a_declined_frame_is_an_error_not_an_eager_number():
    """What Inductor does with bfloat16 below compute capability 8.0: SkipFrame, then eager."""

    def declining_backend(graph, example_inputs):
        raise SkipFrame("BF16 is not supported")

    torch._dynamo.reset()
    step = torch.compile(lambda x: x.cos() * 2, backend=declining_backend)
    with pytest.raises(NotCompiledError, match="the decode step ran eagerly"):
        with expect_compiled("the decode step"):
            assert torch.equal(step(torch.zeros(2)), torch.full((2,), 2.0))
