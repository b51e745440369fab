#!/usr/bin/env bash
# Set up a Colab (or any pip) runtime for the series without breaking its torch.
#
#   bash colab_setup.sh                      # install, then verify and print the GPU
#   bash colab_setup.sh --dry-run            # print the commands only
#   bash colab_setup.sh --dry-run --torch-version 2.9.1+cu128
#   bash colab_setup.sh --dry-run --torch-version 2.10.0 --torch-cuda 12.6
#   bash colab_setup.sh --check              # only check torch-tensorrt's and TensorRT's CUDA
#
# torch-tensorrt X.Y requires torch X.Y exactly, and an unpinned install replaces the
# runtime's torch with another CUDA build. So we read the installed torch, pin it with a
# constraints file for every install, and take torch-tensorrt X.Y.* from the PyTorch index
# of torch's CUDA build (the cuXYZ tag, or torch.version.cuda for an untagged torch) as the
# only index: PyPI's torch-tensorrt is a single CUDA build (13.0 for 2.9 and later) and
# would otherwise be picked for a CUDA 12 torch. Its dependencies (TensorRT) follow in a
# second step that may use PyPI, with TensorRT's packages for torch's CUDA major only. The run
# fails (after installing the rest) unless torch-tensorrt installed, and its CUDA major and
# TensorRT's are torch's. Safe to run twice: pip skips what is satisfied.
set -euo pipefail

DRY_RUN=0
CHECK_ONLY=0
TORCH_VERSION=""
TORCH_CUDA_ARG=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=1 ;;
    --check) CHECK_ONLY=1 ;;
    --torch-version) TORCH_VERSION="${2:?--torch-version needs a value, e.g. 2.9.1+cu128}"; shift ;;
    --torch-cuda) TORCH_CUDA_ARG="${2:?--torch-cuda needs a value, e.g. 12.6}"; shift ;;
    -h|--help) sed -n '2,/^set /p' "$0" | grep '^#'; exit 0 ;;
    *) echo "colab_setup.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PIP="python3 -m pip install -q"

run() {
  echo "+ $*"
  if [ "$DRY_RUN" = 0 ]; then eval "$@"; fi
}

# Exit 0 if the installed torch-tensorrt (of release X.Y, if given) is built for torch's CUDA
# major and no TensorRT package of another CUDA major is installed; else one line on stderr
# saying what to do, and exit 1. Reads torch-tensorrt's CUDA
# without importing it: an import can fail precisely because the builds do not match.
check_cuda_match() {
  python3 - "${1:-}" <<'PY'
import re
import sys
from importlib import metadata


def built_for(dist):
    """'12.8' from _version.py's __cuda_version__ or a +cu128 tag; '12.x' from tensorrt-cu12."""
    try:
        text = dist.locate_file("torch_tensorrt/_version.py").read_text()
    except OSError:
        text = ""
    found = re.search(r"__cuda_version__\s*=\s*[\"'](\d+)\.(\d+)", text)
    found = found or re.search(r"\+cu(\d+)(\d)$", dist.version)
    if found and found[1] != "0":  # a source build without CUDA says "0.0"
        return f"{found[1]}.{found[2]}"
    for requirement in dist.requires or []:
        found = re.match(r"tensorrt[-_]cu(\d+)\b", requirement)
        if found:
            return f"{found[1]}.x"
    return None


def cuda_of(name):
    """'13' for tensorrt-cu13 and its -bindings and -libs; None for other packages."""
    found = re.fullmatch(r"tensorrt-cu(\d+)(-.*)?", name)
    return found and found[1]


def fail(message):
    print(f"colab_setup.sh: {message}", file=sys.stderr)
    sys.exit(1)


release = sys.argv[1]
try:
    import torch
except ImportError:
    fail("no torch in this runtime; install the torch build for your CUDA first")
try:
    dist = metadata.distribution("torch-tensorrt")
except metadata.PackageNotFoundError:
    fail("torch-tensorrt is not installed; run bash colab_setup.sh to install it")
if release and not dist.version.startswith(release + "."):
    fail(f"torch-tensorrt {dist.version} is installed, not {release}.*; run bash colab_setup.sh")
torch_cuda = torch.version.cuda
cuda = built_for(dist)
if not torch_cuda or cuda is None:  # a CPU torch has nothing to pair; an unknown build, say so
    print(f"torch-tensorrt {dist.version} (CUDA {cuda or 'unknown'}), torch {torch.__version__} "
          f"(CUDA {torch_cuda or 'none'}): not checked")
    sys.exit(0)
if cuda.split(".")[0] != torch_cuda.split(".")[0]:
    tag = "cu" + "".join(torch_cuda.split(".")[:2])
    release = ".".join(dist.version.split(".")[:2])
    index = f"https://download.pytorch.org/whl/{tag}"
    fail(f"torch-tensorrt {dist.version} is built for CUDA {cuda} but torch {torch.__version__} "
         f"for CUDA {torch_cuda}; reinstall it from torch's index: pip install --force-reinstall "
         f"--no-deps 'torch-tensorrt=={release}.*' --index-url {index}")
major = torch_cuda.split(".")[0]
installed = {}
for d in metadata.distributions():  # the first of a name is the one Python imports
    installed.setdefault((d.metadata["Name"] or "").lower().replace("_", "-"), d.version)
others = sorted(n for n in installed if cuda_of(n) not in (None, major))
if others:  # torch-tensorrt 2.9's bare `tensorrt` requirement pulls CUDA 13's into CUDA 12
    ours = " ".join(f"'{n}=={v}'" for n, v in sorted(installed.items()) if cuda_of(n) == major)
    fail(f"TensorRT for another CUDA ({', '.join(others)}) is installed beside torch "
         f"{torch.__version__} (CUDA {torch_cuda}); remove it: pip uninstall -y "
         f"{' '.join(others)} tensorrt" + (f" && pip install --force-reinstall --no-deps {ours}"
                                           if ours else "; then run bash colab_setup.sh again"))
print(f"torch-tensorrt {dist.version} is built for CUDA {cuda}, as torch {torch.__version__} "
      f"is for CUDA {torch_cuda}")
PY
}

# torch-tensorrt's requirements for CUDA major $1, shell-quoted on one line: TensorRT's packages
# of other CUDA majors are dropped, and so is the bare `tensorrt` package where one of $1's is
# listed. torch-tensorrt 2.9 lists `tensorrt` beside tensorrt-cu12, and `tensorrt` 10.13 pulls
# tensorrt_cu13 and CUDA 13 into a CUDA 12 runtime (2.10 changed its list for this reason).
trt_dependencies() {
  python3 - "$1" <<'PY'
import re
import shlex
import sys
from importlib import metadata

from packaging.requirements import Requirement

major = sys.argv[1]
def cuda_of(name):
    found = re.fullmatch(r"tensorrt-cu(\d+)(-.*)?", name.lower().replace("_", "-"))
    return found and found[1]
wanted = [Requirement(r) for r in metadata.distribution("torch-tensorrt").requires or []]
wanted = [r for r in wanted if r.marker is None or r.marker.evaluate({"extra": ""})]
ours = any(cuda_of(r.name) == major for r in wanted)
keep = [r for r in wanted if cuda_of(r.name) in (None, major)
        and not (ours and r.name.lower() == "tensorrt")]
print(" ".join(shlex.quote(str(r)) for r in keep))
PY
}

if [ "$CHECK_ONLY" = 1 ]; then
  check_cuda_match
  exit $?
fi

if [ -n "$TORCH_CUDA_ARG" ] && [ -z "$TORCH_VERSION" ]; then
  echo "colab_setup.sh: --torch-cuda describes --torch-version's build; pass both" \
    "(e.g. --torch-version 2.10.0 --torch-cuda 12.6)" >&2
  exit 2
fi
if [ -n "$TORCH_CUDA_ARG" ] && [[ ! "$TORCH_CUDA_ARG" =~ ^[0-9]+\.[0-9]+$ ]]; then
  echo "colab_setup.sh: --torch-cuda '$TORCH_CUDA_ARG' is not MAJOR.MINOR; use e.g. 12.6" >&2
  exit 2
fi

TORCH_CUDA="${TORCH_CUDA_ARG:-unknown}"  # torch.version.cuda when we look at the real runtime
if [ -z "$TORCH_VERSION" ]; then
  if ! read -r TORCH_VERSION TORCH_CUDA < <(python3 -c \
      "import torch; print(torch.__version__, torch.version.cuda or 'none')" 2>/dev/null); then
    echo "No torch in this runtime. Install the torch build for your CUDA first (Colab ships one)," >&2
    echo "e.g. pip install torch --index-url https://download.pytorch.org/whl/cu128" >&2
    exit 1
  fi
fi

if [[ ! "$TORCH_VERSION" =~ ^([0-9]+)\.([0-9]+)\.[0-9]+[^+]*(\+(.*))?$ ]]; then
  echo "colab_setup.sh: cannot read a torch version from '$TORCH_VERSION'" >&2
  exit 2
fi
MAJOR_MINOR="${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
BUILD="${BASH_REMATCH[4]:-}"
if [[ "$BUILD" =~ ^cu([0-9]+)([0-9])$ ]]; then  # cu128 is CUDA 12.8
  TAG_CUDA="${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
  if [ "$TORCH_CUDA" = "unknown" ]; then TORCH_CUDA="$TAG_CUDA"; fi
  if [ "$TORCH_CUDA" != "$TAG_CUDA" ]; then
    echo "colab_setup.sh: torch $TORCH_VERSION is a $BUILD build, not CUDA $TORCH_CUDA;" \
      "drop --torch-cuda or make the two agree" >&2
    exit 2
  fi
fi
echo "torch $TORCH_VERSION (build: ${BUILD:-unspecified}, CUDA $TORCH_CUDA)"

CONSTRAINTS="${TMPDIR:-/tmp}/series-torch-constraint.txt"
run "echo 'torch==$TORCH_VERSION' > '$CONSTRAINTS'"

if [ "$TORCH_CUDA" = "none" ] || { [ -n "$BUILD" ] && [[ ! "$BUILD" =~ ^cu[0-9]+$ ]]; }; then
  echo
  echo "This torch is not a CUDA build, so TensorRT cannot run here: TensorRT engines need an"
  echo "NVIDIA GPU. In Colab choose Runtime > Change runtime type > T4 GPU, then run this again."
  echo "Installing the rest: every notebook still runs, with TensorRT steps reported as skipped."
  run "$PIP -r '$HERE/requirements.txt' -c '$CONSTRAINTS'"
  run "$PIP -e '$HERE' -c '$CONSTRAINTS'"
  exit 0
fi

CUDA_TAG=""  # cuXYZ: the PyTorch index of torch's CUDA build (12.6 -> cu126)
if [[ "$TORCH_CUDA" =~ ^([0-9]+)\.([0-9]+) ]]; then
  CUDA_TAG="cu${BASH_REMATCH[1]}${BASH_REMATCH[2]}"
fi

PIN="torch-tensorrt==$MAJOR_MINOR.*"
TRT_PROBLEM=""  # why torch-tensorrt or TensorRT did not install, said at the end
if [ "$DRY_RUN" = 0 ] && python3 -c "import torch_tensorrt" 2>/dev/null \
    && check_cuda_match "$MAJOR_MINOR" >/dev/null 2>&1; then
  echo "torch-tensorrt $MAJOR_MINOR is already installed, imports and matches torch's CUDA."
elif [ -n "$CUDA_TAG" ]; then
  INDEX="https://download.pytorch.org/whl/$CUDA_TAG"
  echo "torch-tensorrt $MAJOR_MINOR.* from $INDEX only (torch pinned to $TORCH_VERSION)"
  # --force-reinstall replaces a build of another CUDA that pip would call satisfied.
  if ! run "$PIP --no-deps --force-reinstall --index-url '$INDEX' '$PIN' -c '$CONSTRAINTS'"; then
    echo "No torch-tensorrt $MAJOR_MINOR.* matches torch $TORCH_VERSION ($INDEX): this torch may be" \
      "newer than the latest torch-tensorrt release, or built for a CUDA it does not ship."
    TRT_PROBLEM="colab_setup.sh: no torch-tensorrt $MAJOR_MINOR.* for torch $TORCH_VERSION at $INDEX;"
    TRT_PROBLEM+=" use a runtime whose torch has a torch-tensorrt release (the series runs without"
    TRT_PROBLEM+=" TensorRT meanwhile, its TensorRT steps skipped)"
  elif [ "$DRY_RUN" = 1 ]; then  # its requirements are read from the installed package
    run "$PIP <the requirements of '$PIN' for CUDA ${TORCH_CUDA%%.*}>" \
      "--extra-index-url '$INDEX' -c '$CONSTRAINTS'"
  else
    DEPS="$(trt_dependencies "${TORCH_CUDA%%.*}" 2>/dev/null)" || true
    # where they cannot be read (no packaging), torch-tensorrt's own list, as pip would take it
    if ! run "$PIP ${DEPS:-"'$PIN'"} --extra-index-url '$INDEX' -c '$CONSTRAINTS'"; then
      TRT_PROBLEM="colab_setup.sh: TensorRT, torch-tensorrt's dependency, did not install (pip's"
      TRT_PROBLEM+=" message above); the series runs without TensorRT meanwhile"
    fi
  fi
else  # a dry run of an untagged torch without --torch-cuda: its CUDA is unknown here
  echo "torch-tensorrt $MAJOR_MINOR.* from PyPI: torch's CUDA is unknown (pass --torch-cuda," \
    "e.g. 12.6); a real run reads it from torch.version.cuda"
  run "$PIP '$PIN' -c '$CONSTRAINTS'"
fi
# A problem is said in one line at the end, after the rest is installed: the notebooks
# still run, with their TensorRT steps skipped.
CUDA_PROBLEM=""
if [ -n "$TRT_PROBLEM" ]; then
  CUDA_PROBLEM="$TRT_PROBLEM"
elif [ "$DRY_RUN" = 0 ]; then
  if CHECKED="$(check_cuda_match "$MAJOR_MINOR" 2>&1)"; then
    echo "$CHECKED"
  else
    CUDA_PROBLEM="$CHECKED"
  fi
else
  echo "+ check that torch-tensorrt's CUDA major, and TensorRT's, is torch's (${TORCH_CUDA%%.*}); exit 1 if not"
fi
# requirements.txt raises transformers to the release the series needs; torch stays pinned.
run "$PIP -r '$HERE/requirements.txt' nvidia-modelopt -c '$CONSTRAINTS'"
run "$PIP -e '$HERE' -c '$CONSTRAINTS'"
run "python3 -c 'import helpers as h; print(h.format_report(h.environment_report()))'"
if [ -n "$CUDA_PROBLEM" ]; then
  echo "$CUDA_PROBLEM" >&2
  exit 1
fi
echo
echo "Done. Run by hand in a live kernel that had already imported torch, numpy or transformers?"
echo "Then restart it (Colab: Runtime > Restart session). The notebooks' setup cell checks this."
