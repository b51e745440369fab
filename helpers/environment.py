"""What ran the numbers: device, versions, TensorRT build.

Every speed figure in the series is printed next to this report, because a latency
without its GPU, driver and TensorRT build is not reproducible.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib import metadata

import torch

from helpers.tensorrt import tensorrt_status

#: Compute capabilities TensorRT-RTX lists as supported (Turing to Blackwell RTX GPUs).
RTX_SUPPORTED = ("7.5", "8.6", "8.9", "12.0")


class DeviceUnavailableError(RuntimeError):
    """The requested device does not exist on this machine."""


def in_colab() -> bool:
    """True inside a Google Colab runtime."""
    return "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ


def resolve_device(device: str = "auto") -> torch.device:
    """'auto' -> the GPU when there is one, else the CPU; 'cuda' without a GPU is an error."""
    choice = str(device).lower()
    if choice == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if choice.startswith("cuda"):
        if not torch.cuda.is_available():
            cuda = torch.version.cuda
            build = "a CPU-only build" if cuda is None else f"CUDA {cuda}"
            raise DeviceUnavailableError(
                f"device={device!r} was requested but no CUDA GPU is visible (torch "
                f"{torch.__version__}, {build}). In Colab choose Runtime > Change runtime type "
                "> GPU; elsewhere use device='auto' or 'cpu'."
            )
        return torch.device(choice)
    if choice == "cpu":
        return torch.device("cpu")
    raise DeviceUnavailableError(f"device={device!r} is not one of 'auto', 'cpu', 'cuda'")


def _package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _nvidia_driver() -> str | None:
    try:
        result = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip().splitlines()[0] if result.returncode == 0 else None


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment_report(device: torch.device | str = "auto") -> dict:
    """A flat dict of everything that shapes a measurement, for printing and records."""
    device = resolve_device(str(device))
    trt = tensorrt_status()
    report = {
        "device": str(device),
        "device_name": _cpu_name(),
        "compute_capability": None,
        "driver": None,
        "cpu_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "transformers": _package_version("transformers"),
        "torch_tensorrt": trt.version,
        "tensorrt": trt.tensorrt_version,
        "tensorrt_build": trt.build,
        "tensorrt_available": trt.available,
        "tensorrt_reason": trt.reason,
        "colab": in_colab(),
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        report.update(
            device_name=props.name,
            compute_capability=f"{props.major}.{props.minor}",
            driver=_nvidia_driver(),
            gpu_memory_gib=round(props.total_memory / 2**30, 1),
        )
        if trt.build == "RTX" and report["compute_capability"] not in RTX_SUPPORTED:
            report["caveat"] = (
                f"TensorRT-RTX does not officially support compute capability "
                f"{report['compute_capability']} (it lists {', '.join(RTX_SUPPORTED)}): its "
                "timings here are not what regular TensorRT would give"
            )
    return report


def format_report(report: dict) -> str:
    """Aligned 'key: value' lines for a notebook's setup output."""
    width = max(len(key) for key in report)
    return "\n".join(f"{key:<{width}} : {value}" for key, value in report.items())
