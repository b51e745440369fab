"""The CUDA-graph recipe notebook 02 writes out, for the notebooks after it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch


def capture_cuda_graph(
    fn: Callable[..., torch.Tensor], example_inputs: Sequence[torch.Tensor]
) -> Callable[..., torch.Tensor]:
    """Record fn(*example_inputs) once; return a function that replays it on new inputs.

    Warm-up runs on a side stream first (allocations, algorithm choices stay out of the
    graph). The returned output tensor is overwritten by the next replay: clone to keep it.
    """
    static_inputs = [t.clone() for t in example_inputs]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.inference_mode():
        for _ in range(3):
            fn(*static_inputs)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.inference_mode():
        static_output = fn(*static_inputs)

    def replay(*new_inputs: torch.Tensor) -> torch.Tensor:
        for static, new in zip(static_inputs, new_inputs, strict=True):
            static.copy_(new)
        graph.replay()
        return static_output

    return replay
