"""colab_setup.sh --dry-run picks the torch-tensorrt that matches the runtime's torch."""

import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "colab_setup.sh"


def dry_run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), "--dry-run", *args], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    "torch_version,pin,index",
    [
        ("2.8.0+cu126", "torch-tensorrt==2.8.*", "https://download.pytorch.org/whl/cu126"),
        ("2.9.1+cu128", "torch-tensorrt==2.9.*", "https://download.pytorch.org/whl/cu128"),
        ("2.11.0+cu130", "torch-tensorrt==2.11.*", "https://download.pytorch.org/whl/cu130"),
    ],
)
def test_cuda_builds_get_the_matching_release_from_the_matching_index(torch_version, pin, index):
    result = dry_run("--torch-version", torch_version)
    assert result.returncode == 0, result.stderr
    install = next(line for line in result.stdout.splitlines() if pin in line)
    assert f"--extra-index-url '{index}'" in install
    assert f"torch=={torch_version}" in result.stdout  # the constraint that keeps torch
    installs = [line for line in result.stdout.splitlines() if "pip install" in line]
    assert installs and all("-c " in line for line in installs)  # every install constrained


def test_untagged_version_is_pypis_cuda_build():
    result = dry_run("--torch-version", "2.10.0")
    assert result.returncode == 0
    assert "torch-tensorrt==2.10.*" in result.stdout and "extra-index-url" not in result.stdout


def test_cpu_build_explains_and_skips_tensorrt():
    result = dry_run("--torch-version", "2.13.0+cpu")
    assert result.returncode == 0
    assert "not a CUDA build" in result.stdout and "Change runtime type" in result.stdout
    assert "torch-tensorrt" not in result.stdout
    assert "requirements.txt" in result.stdout


@pytest.mark.parametrize("args", [["--torch-version", "latest"], ["--frobnicate"]])
def test_bad_input_is_a_clear_error(args):
    result = dry_run(*args)
    assert result.returncode == 2 and "colab_setup.sh:" in result.stderr
