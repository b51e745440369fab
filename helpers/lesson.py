"""A lesson's bookkeeping in two calls: one to start it, one to end it.

``lesson = h.start_lesson("02-fp16-compile", globals())`` checks every parameter (one clear
line on a bad value, before any work) and prints the machine; ``lesson.finish(...)`` prints
the verdicts and writes the record. What lies between is the lesson.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch

from helpers.claims import Verdict, print_verdicts
from helpers.environment import caveats, environment_report, format_report
from helpers.gpu import GPUFeatures, gpu_features, tag_emulated_output
from helpers.notebook_checks import check_notebook
from helpers.records import number_of, save_record

#: Parameters every record lists when the notebook has them (the workload and its timing;
#: each is one that check_notebook has just checked).
RECORDED = ("model_name", "batch_size", "seq_len", "warmup", "iterations", "max_seconds")


@dataclass
class Lesson:
    """What a lesson's cells share: its device, the machine's report, the GPU's features."""

    name: str  # the record's name: "02-fp16-compile", "02d-profiles"
    device: torch.device
    environment: dict
    features: GPUFeatures
    parameters: dict = field(default_factory=dict)
    output_dir: str = "runs/latest"

    def caveats(self, weights: str | None = None, tensorrt: bool = True) -> list[str]:
        """What a reader must know before trusting this run's numbers."""
        return caveats(self.environment, weights, tensorrt)

    def finish(
        self,
        *,
        verdicts: Sequence[Verdict],
        results: Sequence = (),
        run: str = "",
        caveats: Sequence[str] = (),
        parameters: Mapping | None = None,
        noisy: Sequence[str] = (),
        **extra,
    ) -> Path:
        """Print the verdicts, then write the record (``extra``: what else it keeps).

        ``noisy``: why the lesson's own noise rules call this run unreadable. The record keeps
        the reasons and the series runner does not publish such a run: it is rerun. Only a
        GPU's run is held to them: a CPU's timings are not the lesson (nor retimed).
        """
        on_gpu = self.environment.get("device", "").startswith("cuda")
        noisy = list(noisy) if on_gpu else []
        print_verdicts(verdicts, run=run, caveats=caveats, on_gpu=on_gpu)
        for reason in noisy:
            print(f"NOISY: {reason}; rerun it: the series does not publish a noisy run")
        path = save_record(
            self.name,
            parameters={**self.parameters, **(parameters or {})},
            environment=self.environment,
            results=results,
            output_dir=self.output_dir,
            claims=[v.record() for v in verdicts],
            noisy=noisy,
            **extra,
        )
        print("record:", path.name)
        return path


def start_lesson(name: str, values: Mapping, tensorrt: bool = True) -> Lesson:
    """Check the notebook's parameters (``values``: its ``globals()``), print the machine.

    A bad value stops here with one line that says what to change, before any work.
    ``tensorrt=False``: the lesson runs no engine and does not import torch_tensorrt.
    """
    number = number_of(name)
    device = check_notebook(number, values)
    environment = environment_report(device, tensorrt=tensorrt)
    print(format_report(environment))
    features = gpu_features(device)
    tag_emulated_output(features)
    parameters = {k: values[k] for k in RECORDED if k in values}
    return Lesson(
        name=name,
        device=device,
        environment=environment,
        features=features,
        parameters=parameters,
        output_dir=values.get("output_dir", "runs/latest"),
    )
