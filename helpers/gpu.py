"""One description of the GPU's features: every notebook takes its GPU choices from it.

Colab's free T4 (compute capability 7.5, about 15 GiB) has no bf16 tensor cores, no FP8, no
TF32 and neither flash nor cuDNN attention, yet ``torch.cuda.is_bf16_supported()`` says
True there (emulation counts by default), and Inductor then declines bf16 graphs. So no
notebook asks torch about the GPU directly: each reads ``gpu_features(device)``.

``SERIES_EMULATE=t4`` makes a larger GPU describe itself as a T4 and applies a T4's limits
(fp16, no FP8, TF32, flash or cuDNN attention, PyTorch's allocator capped at 15 GiB), so
that the paths a T4 takes run; speeds stay the larger GPU's, and every report says so.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from dataclasses import dataclass

import torch

from helpers.errors import ParameterError

EMULATE_VARIABLE = "SERIES_EMULATE"
#: What a free Colab T4 offers the series: its usable memory, in GiB.
T4_MEMORY_GIB = 15.0
#: Below this much GPU memory the notebooks choose smaller defaults (a T4, an L4 at 22 GiB).
SMALL_GPU_GIB = 24.0


@dataclass(frozen=True)
class GPUFeatures:
    """What the GPU (or the CPU) can do, as far as the series' choices go."""

    name: str
    capability: tuple[int, int] | None  # None on a CPU
    memory_gib: float | None  # what the series may use: the card's, or the emulated cap
    bf16: bool  # native bfloat16 tensor cores (compute capability 8.0+)
    fp8: bool  # FP8 tensor cores (8.9+)
    tf32: bool  # TF32 tensor cores (8.0+)
    flash_attention: bool  # PyTorch's flash SDPA kernels (8.0+)
    cudnn_attention: bool  # cuDNN's SDPA kernels (8.0+)
    async_copy: bool  # cp.async, which pipelined Triton loads need (8.0+): fewer kernel configs
    emulating: str | None = None  # "t4" when a larger GPU plays a T4
    # programmatic dependent launch, a kernel starting in the last one's tail (9.0+)
    pdl: bool = False

    @property
    def gpu(self) -> bool:
        return self.capability is not None

    @property
    def half_dtype(self) -> torch.dtype:
        """The 16-bit dtype for 16-bit work on this GPU: bfloat16 where native, else float16."""
        return torch.bfloat16 if self.bf16 else torch.float16

    @property
    def decoder_dtype(self) -> torch.dtype:
        """What the decoders (08-10) run in: 16-bit on a GPU, float32 on a CPU."""
        return self.half_dtype if self.gpu else torch.float32

    @property
    def small(self) -> bool:
        """A GPU whose memory and speed call for smaller default workloads (a T4)."""
        return self.gpu and (self.memory_gib or 0) < SMALL_GPU_GIB

    @property
    def small_reason(self) -> str:
        """Why a notebook chose a smaller workload, for the line it prints: the lesson's time
        on a slow GPU, not its memory (a learner must not read it as "does not fit")."""
        if self.emulating:
            return f"to keep the lesson's time on a {self.emulating.upper()} (emulated)"
        return f"to keep the lesson's time on a small GPU ({self.memory_gib:.0f} GiB)"

    def sdpa_backends(self) -> list:
        """The scaled-dot-product attention kernels this GPU has, fastest first."""
        from torch.nn.attention import SDPBackend

        if not self.gpu:
            return [SDPBackend.MATH]
        backends = [SDPBackend.CUDNN_ATTENTION] if self.cudnn_attention else []
        backends += [SDPBackend.FLASH_ATTENTION] if self.flash_attention else []
        return [*backends, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]

    def summary(self) -> str:
        """One line for a notebook's setup output."""
        if not self.gpu:
            return f"{self.name}: CPU, float32"
        has = [n for n in ("bf16", "fp8", "tf32") if getattr(self, n)]
        has += [n for n in ("flash", "cudnn") if getattr(self, f"{n}_attention")]
        lacks = sorted({"bf16", "fp8", "tf32", "flash", "cudnn"} - set(has))
        line = (
            f"{self.name}: compute capability {self.capability[0]}.{self.capability[1]}, "
            f"{self.memory_gib:.1f} GiB usable, 16-bit work in {dtype_label(self.half_dtype)}; "
            + "; ".join(
                [f"has {', '.join(has)}"] * bool(has) + [f"lacks {', '.join(lacks)}"] * bool(lacks)
            )
        )
        return f"EMULATED {self.emulating.upper()}: {line}" if self.emulating else line


def emulated_speeds() -> str:
    """ "this GPU's speeds under emulated T4 limits" on an emulated run, else '': what a line
    or table of timings holds when this GPU plays another."""
    return f"this GPU's speeds under emulated {emulation().upper()} limits" if emulation() else ""


def emulation_tag(kind: str | None = None) -> str:
    """' (EMULATED T4 limits)' on an emulated run (or for ``kind``, a record's), else '': for
    a title beside a device name."""
    kind = kind or emulation()
    return f" (EMULATED {kind.upper()} limits)" if kind else ""


#: A printed time ("5.4 ms", "6.1 µs", "15.7 s"), ratio ("1.36x"), rate ("tokens/s", "per
#: second") or share of the roof or of busy time; not a shape ("16 x 32") or a count.
SPEED_OR_TIME = re.compile(
    r"(?<![\w.])\d[\d.,]*\s*(?:ms|µs|s)(?![\w/])|\dx(?![\w/])|\d\D*/s\b|(?:_|\b)(?:ms|s)\s+\d"
    r"|\bms\b|\d\s*% (?:of the (?:roof|time)|busy)|roof_%|per second"
)


class TaggedLines:
    """A stdout that ends each printed line holding a time, speed or ratio with ``tag``.

    An emulated run prints its numbers from the lessons' own f-strings; tagging them here keeps
    the lesson code a learner copies free of emulation plumbing.
    """

    def __init__(self, stream, tag: str):
        self.stream, self.tag, self.pending = stream, tag, ""

    def write(self, text: str) -> int:
        *lines, self.pending = (self.pending + text).split("\n")
        for line in lines:
            quoted = line.lstrip().startswith("Source")  # a source's numbers are not this run's
            timed = SPEED_OR_TIME.search(line) and not quoted
            self.stream.write(line + (self.tag if timed else "") + "\n")
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.stream.write(self.pending)  # a line cut by a flush goes out untagged
        self.pending = ""
        self.stream.flush()

    def __getattr__(self, name: str):
        return getattr(self.stream, name)  # encoding, isatty, the kernel's own attributes


def tag_emulated_output(features: GPUFeatures) -> None:
    """On an emulated run, tag the lesson's printed timings from here on (once per process)."""
    if features.emulating and not isinstance(sys.stdout, TaggedLines):
        sys.stdout = TaggedLines(sys.stdout, f"  [emulated {features.emulating.upper()} limits]")


def dtype_label(dtype: torch.dtype) -> str:
    """'bf16', 'fp16', 'fp32': the label a table or verdict prints for what ran."""
    return {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32"}.get(
        dtype, str(dtype).removeprefix("torch.")
    )


def features_for(capability: tuple[int, int] | None, memory_gib: float | None, name: str):
    """The features a GPU of this compute capability has (None: a CPU)."""
    if capability is None:
        return GPUFeatures(name, None, None, False, False, False, False, False, False)
    ampere = capability >= (8, 0)
    return GPUFeatures(
        name=name,
        capability=capability,
        memory_gib=memory_gib,
        bf16=ampere,
        fp8=capability >= (8, 9),
        tf32=ampere,
        flash_attention=ampere,
        cudnn_attention=ampere,
        async_copy=ampere,
        pdl=capability >= (9, 0),
    )


def t4_features(host_name: str) -> GPUFeatures:
    """A T4's features, named after the GPU that plays it."""
    t4 = features_for((7, 5), T4_MEMORY_GIB, f"{host_name} as a T4")
    return GPUFeatures(**{**t4.__dict__, "emulating": "t4"})


def emulation() -> str | None:
    """The GPU ``SERIES_EMULATE`` asks for ('t4'), None when unset; anything else is refused."""
    value = os.environ.get(EMULATE_VARIABLE, "").strip().lower()
    if value in ("", "0", "none", "off"):
        return None
    if value != "t4":
        raise ParameterError(f"{EMULATE_VARIABLE}={value!r}: the series emulates only 't4'")
    return value


@functools.lru_cache(maxsize=8)
def gpu_features(device: torch.device | str = "cuda") -> GPUFeatures:
    """This device's features; with SERIES_EMULATE=t4, a T4's, with its limits applied."""
    device = torch.device(device)
    if device.type != "cuda":
        return features_for(None, None, "cpu")
    props = torch.cuda.get_device_properties(device)
    capability = (props.major, props.minor)
    if emulation() == "t4":
        features = t4_features(props.name)
        apply_limits(features, device, total_gib=props.total_memory / 2**30)
        return features
    features = features_for(capability, round(props.total_memory / 2**30, 1), props.name)
    # a GPU of 8.0+ whose build lacks bf16 (rare) is told so by torch itself
    native_bf16 = torch.cuda.is_bf16_supported(including_emulation=False)
    return GPUFeatures(**{**features.__dict__, "bf16": features.bf16 and native_bf16})


def apply_limits(features: GPUFeatures, device: torch.device, *, total_gib: float) -> None:
    """Make this process keep to an emulated GPU's limits where PyTorch can enforce them.

    TensorRT's own allocations bypass PyTorch's allocator: the series runner measures the
    whole process's peak from the driver instead.
    """
    if features.memory_gib and features.memory_gib < total_gib:
        index = device.index if device.index is not None else torch.cuda.current_device()
        torch.cuda.set_per_process_memory_fraction(features.memory_gib / total_gib, index)
    if not features.tf32:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    if not features.flash_attention:
        torch.backends.cuda.enable_flash_sdp(False)
    if not features.cudnn_attention:
        torch.backends.cuda.enable_cudnn_sdp(False)


def emulation_caveat(features: GPUFeatures) -> str | None:
    """The sentence every emulated run prints beside its numbers."""
    if not features.emulating:
        return None
    return (
        f"EMULATED: this run keeps to a {features.emulating.upper()}'s limits (fp16, no FP8, "
        f"TF32, flash or cuDNN attention, {features.memory_gib:.0f} GiB for PyTorch) on "
        f"{features.name.removesuffix(' as a T4')}; its speeds are that GPU's, not a T4's. "
        "TensorRT is not emulated: its engines may still use TF32 and this GPU's kernels."
    )
