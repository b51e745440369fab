"""What ran the numbers: device, versions, TensorRT build, and the caveats they imply.

Every speed figure in the series is printed next to this report, because a latency
without its GPU, driver and TensorRT build cannot be reproduced.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib import metadata

import torch

from helpers.errors import DeviceUnavailableError
from helpers.gpu import emulation_caveat, gpu_features
from helpers.trt_compat import tensorrt_installed, tensorrt_status

#: Compute capabilities TensorRT-RTX lists as supported (Turing to Blackwell RTX GPUs).
RTX_SUPPORTED = ("7.5", "8.6", "8.9", "12.0")


def resolve_device(device: str = "auto") -> torch.device:
    """'auto' -> the GPU when there is one, else the CPU; 'cuda' without a GPU is an error."""
    choice = str(device).lower()
    if choice == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if choice == "cpu":
        return torch.device("cpu")
    if choice == "cuda" or choice.startswith("cuda:"):
        if not torch.cuda.is_available():
            build = (
                "a CPU-only build" if torch.version.cuda is None else f"CUDA {torch.version.cuda}"
            )
            raise DeviceUnavailableError(
                f"device={device!r} but no CUDA GPU is visible (torch {torch.__version__}, "
                f"{build}); in Colab choose Runtime > Change runtime type > GPU, elsewhere use "
                "device='auto' or 'cpu'"
            )
        return torch.device(choice)
    raise DeviceUnavailableError(f"device={device!r} is not one of 'auto', 'cpu', 'cuda'")


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


def caveats(report: dict, weights: str | None = None, tensorrt: bool = True) -> list[str]:
    """What a reader must know before trusting this run's numbers (``tensorrt``: it runs any)."""
    notes = [report["emulated"]] if report.get("emulated") else []
    capability = report.get("compute_capability") if tensorrt else None
    if report.get("tensorrt_build") == "RTX" and capability not in (None, *RTX_SUPPORTED):
        notes.append(
            f"TensorRT here is the RTX build, which does not officially support compute "
            f"capability {capability} (it lists {', '.join(RTX_SUPPORTED)}): its timings may "
            "differ from regular TensorRT's on this GPU, which this run does not measure."
        )
    if weights and weights.startswith("random"):
        notes.append(
            "The weights are random (hub unreachable): latencies are the real architecture's, "
            "accuracy statistics compare random-weight models."
        )
    if report.get("device") == "cpu":
        notes.append("No GPU: TensorRT and CUDA-graph steps are skipped, each with its reason.")
    return notes


def environment_report(device: torch.device | str = "auto", tensorrt: bool = True) -> dict:
    """A flat dict of everything that shapes a measurement, for printing and records.

    ``tensorrt=False``: the lesson runs no engine, so torch_tensorrt's version is read from
    its package metadata instead of importing it (seconds saved per notebook).
    """
    device = resolve_device(str(device))
    trt = tensorrt_status() if tensorrt else tensorrt_installed()
    report = {
        "device": str(device),
        "device_name": _cpu_name(),
        "compute_capability": None,
        "driver": None,
        "cpu_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "transformers": metadata.version("transformers"),
        "torch_tensorrt": trt.version,
        "tensorrt": trt.tensorrt_version,
        "tensorrt_build": trt.build,
        "tensorrt_available": trt.available,
        "tensorrt_reason": trt.reason,
        "colab": "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ,
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        report.update(
            device_name=props.name,
            compute_capability=f"{props.major}.{props.minor}",
            driver=_nvidia_driver(),
            gpu_memory_gib=round(props.total_memory / 2**30, 1),
        )
    features = gpu_features(device)
    report["gpu_features"] = features.summary()
    report["emulated"] = emulation_caveat(features)
    return report


def device_free_mib(device: torch.device | str) -> float | None:
    """Free GPU memory in MiB, after returning torch's cached blocks; None on a CPU.

    The drop across a build counts what TensorRT allocates by itself (its engines and
    contexts), which the torch allocator's statistics never see.
    """
    if torch.device(device).type != "cuda":
        return None
    torch.cuda.synchronize(device)
    torch.cuda.empty_cache()
    return torch.cuda.mem_get_info(device)[0] / 2**20


def format_report(report: dict) -> str:
    """Aligned 'key: value' lines for a notebook's setup output."""
    width = max(len(key) for key in report)
    return "\n".join(f"{key:<{width}} : {value}" for key, value in report.items())
