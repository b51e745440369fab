"""colab_setup.sh --dry-run picks the torch-tensorrt that matches the runtime's torch."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import packaging
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "colab_setup.sh"


def dry_run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), "--dry-run", *args], capture_output=True, text=True, timeout=60
    )


def pin_installs(stdout: str, pin: str) -> list[str]:
    """The pip install lines that name ``pin``: torch-tensorrt itself, then its dependencies."""
    return [line for line in stdout.splitlines() if "pip install" in line and pin in line]


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
    install, dependencies = pin_installs(result.stdout, pin)
    assert f"--index-url '{index}'" in install  # the only index torch-tensorrt comes from
    assert f"--extra-index-url '{index}'" in dependencies  # TensorRT's wheels may use PyPI too
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


CUDA_BUILDS = {"12.6": "cu126", "12.8": "cu128", "13.0": "cu130"}


@pytest.mark.parametrize("release", ["2.8", "2.9", "2.10", "2.11"])
@pytest.mark.parametrize("cuda", list(CUDA_BUILDS))
@pytest.mark.parametrize("tagged", [True, False], ids=["tagged", "untagged"])
def test_torch_tensorrt_comes_only_from_the_index_of_torch_s_cuda(release, cuda, tagged):
    tag = CUDA_BUILDS[cuda]
    if tagged:
        result = dry_run("--torch-version", f"{release}.0+{tag}")
    else:  # PyPI's build of torch: no tag, its CUDA read from torch.version.cuda
        result = dry_run("--torch-version", f"{release}.0", "--torch-cuda", cuda)
    assert result.returncode == 0, result.stderr
    index = f"https://download.pytorch.org/whl/{tag}"
    install, dependencies = pin_installs(result.stdout, f"'torch-tensorrt=={release}.*'")
    assert f"--index-url '{index}'" in install and "--extra-index-url" not in install
    assert "--no-deps" in install and "--force-reinstall" in install  # replaces another build
    assert f"--extra-index-url '{index}'" in dependencies and "--no-deps" not in dependencies
    assert f"CUDA {cuda}" in result.stdout and "check that torch-tensorrt's CUDA" in result.stdout
    installs = [line for line in result.stdout.splitlines() if "pip install" in line]
    assert all("-c " in line for line in installs)  # torch stays pinned
    assert "download.pytorch.org" not in result.stdout.replace(index, "")  # no other build


@pytest.mark.parametrize(
    "args",
    [
        ["--torch-version", "2.9.1+cu128", "--torch-cuda", "12.6"],  # tag and CUDA disagree
        ["--torch-cuda", "12.6"],  # describes no --torch-version
        ["--torch-version", "2.10.0", "--torch-cuda", "12"],
    ],
)
def test_a_torch_cuda_that_cannot_describe_the_build_is_a_clear_error(args):
    result = dry_run(*args)
    assert result.returncode == 2 and result.stderr.startswith("colab_setup.sh: ")
    assert "pip install" not in result.stdout


def test_help_prints_the_usage_lines():
    result = subprocess.run(
        ["bash", str(SCRIPT), "--help"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0
    for usage in (
        "bash colab_setup.sh --dry-run --torch-version 2.9.1+cu128",
        "bash colab_setup.sh --dry-run --torch-version 2.10.0 --torch-cuda 12.6",
        "bash colab_setup.sh --check",
    ):
        assert usage in result.stdout


def test_transformers_is_raised_to_the_series_floor_in_every_install():
    root = SCRIPT.parent
    assert "transformers>=5.17" in (root / "requirements.txt").read_text().splitlines()
    assert '"transformers>=5.17",' in (root / "pyproject.toml").read_text()
    for args in (["--torch-version", "2.10.0+cu126"], ["--torch-version", "2.13.0+cpu"]):
        assert "-r '" in dry_run(*args).stdout  # requirements.txt upgrades an older one


def fake_runtime(
    tmp_path: Path,
    *,
    torch_cuda: str,
    version: str = "2.10.0",
    version_py: str | None = None,
    requires: str | list[str] | None = None,
    also_installed: dict[str, str] | None = None,
    pip_fails_on: str | None = None,
) -> dict[str, str]:
    """An environment whose python3 sees a fake torch and a fake installed torch-tensorrt
    (and ``also_installed`` distributions), and whose pip installs nothing: what the script
    reads and decides, without installing. A pip command naming ``pip_fails_on`` fails."""
    site, bin_dir = tmp_path / "site", tmp_path / "bin"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text(
        "import types\n__version__ = '2.10.0'\n"
        f"version = types.SimpleNamespace(cuda={torch_cuda!r})\n"
    )
    info = site / f"torch_tensorrt-{version}.dist-info"
    info.mkdir()
    metadata = f"Metadata-Version: 2.1\nName: torch-tensorrt\nVersion: {version}\n"
    requires = [requires] if isinstance(requires, str) else requires or []
    (info / "METADATA").write_text(metadata + "".join(f"Requires-Dist: {r}\n" for r in requires))
    for name, other_version in (also_installed or {}).items():
        other = site / f"{name.replace('-', '_')}-{other_version}.dist-info"
        other.mkdir()
        (other / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {other_version}\n"
        )
    (site / "torch_tensorrt").mkdir()
    if version_py:
        (site / "torch_tensorrt" / "_version.py").write_text(f'__cuda_version__ = "{version_py}"\n')
    bin_dir.mkdir()
    python3 = bin_dir / "python3"
    failing = (
        f'"-m pip "*"{pip_fails_on}"*) echo "pip: no match" >&2; exit 1 ;; ' if pip_fails_on else ""
    )
    shutil.copytree(Path(packaging.__file__).parent, site / "packaging")  # the script reads it
    python3.write_text(  # pip and the closing report (helpers on a real torch) do nothing;
        # -S: only the fake site, never a TensorRT this machine may have installed
        f'#!/bin/sh\ncase "$*" in {failing}"-m pip "*|*"import helpers"*) exit 0 ;; esac\n'
        f'exec "{sys.executable}" -S "$@"\n'
    )
    python3.chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(site),
        "TMPDIR": str(tmp_path),
    }


def run_script(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=120, env=env
    )


@pytest.mark.parametrize(
    "installed",
    [
        dict(version_py="13.0"),  # torch_tensorrt/_version.py's __cuda_version__
        dict(version="2.10.0+cu130"),  # the PyTorch index's local tag
        dict(requires="tensorrt-cu13<10.15.0,>=10.14.1"),  # the TensorRT it depends on
    ],
)
def test_check_fails_in_one_line_when_torch_tensorrt_s_cuda_is_not_torch_s(tmp_path, installed):
    result = run_script(fake_runtime(tmp_path, torch_cuda="12.6", **installed), "--check")
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert "CUDA 13" in line and "CUDA 12.6" in line
    assert "--index-url https://download.pytorch.org/whl/cu126" in line  # what to do


@pytest.mark.parametrize(
    "installed",
    [dict(version_py="12.6"), dict(version="2.10.0+cu128"), dict(requires="tensorrt-cu12>=10.14")],
)
def test_check_passes_when_the_cuda_majors_agree(tmp_path, installed):
    result = run_script(fake_runtime(tmp_path, torch_cuda="12.6", **installed), "--check")
    assert result.returncode == 0, result.stderr
    assert "is built for CUDA 12" in result.stdout


def test_check_says_when_torch_tensorrt_is_missing(tmp_path):
    env = fake_runtime(tmp_path, torch_cuda="12.6", version_py="12.6")
    for path in (tmp_path / "site").glob("torch_tensorrt*"):
        shutil.rmtree(path)
    result = run_script(env, "--check")
    assert result.returncode == 1 and "torch-tensorrt is not installed" in result.stderr


def test_an_install_that_leaves_another_cuda_build_fails_the_setup(tmp_path):
    env = fake_runtime(tmp_path, torch_cuda="12.6", version_py="13.0")  # pip here changes nothing
    result = run_script(env)
    assert "--index-url 'https://download.pytorch.org/whl/cu126'" in result.stdout
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith("colab_setup.sh: torch-tensorrt 2.10.0 is built for CUDA 13.0")
    assert "requirements.txt" in result.stdout  # the rest installed: notebooks skip TensorRT
    assert "Done." not in result.stdout


def test_a_matching_install_completes(tmp_path):
    result = run_script(fake_runtime(tmp_path, torch_cuda="12.6", version_py="12.6"))
    assert result.returncode == 0, result.stderr
    assert "already installed, imports and matches torch's CUDA" in result.stdout
    assert "Done." in result.stdout


def test_a_torch_tensorrt_that_cannot_install_leaves_the_rest_installed(tmp_path):
    env = fake_runtime(tmp_path, torch_cuda="12.6", version_py="13.0", pip_fails_on="--index-url")
    result = run_script(env)
    assert result.returncode == 1
    assert "requirements.txt" in result.stdout and "-e '" in result.stdout  # the rest installed
    (line,) = result.stderr.strip().splitlines()[-1:]
    assert line.startswith("colab_setup.sh: no torch-tensorrt 2.10.* for torch")
    assert "Done." not in result.stdout


TORCH_TENSORRT_2_9 = [  # its Requires-Dist for a CUDA 12 build, as v2.9.0's setup.py writes them
    "torch<2.10.0,>=2.9.0",
    "tensorrt<10.14.0,>=10.13.0",
    "tensorrt-cu12<10.14.0,>=10.13.0",
    "tensorrt-cu12-bindings<10.14.0,>=10.13.0",
    "tensorrt-cu12-libs<10.14.0,>=10.13.0",
    "packaging>=23",
]


def test_tensorrt_s_packages_follow_torch_s_cuda_major_not_the_bare_tensorrt(tmp_path):
    """torch-tensorrt 2.9 also lists `tensorrt`, whose 10.13 pulls tensorrt_cu13 and CUDA 13."""
    env = fake_runtime(tmp_path, torch_cuda="12.6", version_py="13.0", requires=TORCH_TENSORRT_2_9)
    result = run_script(env)
    (dependencies,) = [
        line for line in result.stdout.splitlines() if "pip install" in line and "--extra" in line
    ]
    assert "'tensorrt-cu12<10.14.0,>=10.13.0'" in dependencies and "packaging" in dependencies
    assert "'tensorrt<" not in dependencies and "torch-tensorrt" not in dependencies


def test_check_fails_when_tensorrt_of_another_cuda_is_installed(tmp_path):
    others = {"tensorrt-cu13": "10.13.3.9", "tensorrt-cu12": "10.13.3.9"}
    env = fake_runtime(tmp_path, torch_cuda="12.6", version_py="12.6", also_installed=others)
    result = run_script(env, "--check")
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert "TensorRT for another CUDA (tensorrt-cu13)" in line and "CUDA 12.6" in line
    assert "pip uninstall -y tensorrt-cu13 tensorrt" in line
    assert "--force-reinstall --no-deps 'tensorrt-cu12==10.13.3.9'" in line
