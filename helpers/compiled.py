"""Make sure a step said to be compiled really was: a declined frame runs eagerly, quietly.

Below compute capability 8.0, Inductor declines a bfloat16 graph with one warning and
Dynamo runs the frame eagerly, even with ``fullgraph=True`` on the torch releases Colab
ships; every "compiled" number would then be an eager one. Dynamo counts each graph it
hands to a backend that accepts it, so a first call that adds none compiled nothing.
"""

from __future__ import annotations

import contextlib

from helpers.errors import SeriesError


class NotCompiledError(SeriesError):
    """torch.compile ran the step eagerly: its numbers would be eager ones."""


def compiled_graphs() -> int:
    """How many graphs Dynamo has handed to a backend that accepted them, in this process."""
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


@contextlib.contextmanager
def expect_compiled(what: str, *, when: bool = True):
    """Around a compiled callable's first call: raise NotCompiledError if nothing compiled.

    ``when`` False checks nothing (a CPU path that runs its step eagerly on purpose).
    """
    before = compiled_graphs()
    yield
    if when and compiled_graphs() == before:
        raise NotCompiledError(
            f"{what} ran eagerly: torch.compile compiled no graph (the warning above says why; "
            "on a GPU below compute capability 8.0 use float16, not bfloat16)"
        )
