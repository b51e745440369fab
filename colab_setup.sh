#!/usr/bin/env bash
# Set up a Colab (or any pip) runtime for the series without breaking its torch.
#
#   bash colab_setup.sh                      # install, then verify and print the GPU
#   bash colab_setup.sh --dry-run            # print the commands only
#   bash colab_setup.sh --dry-run --torch-version 2.9.1+cu128
#
# torch-tensorrt X.Y requires torch X.Y exactly, and an unpinned install replaces the
# runtime's torch with another CUDA build. So we read the installed torch, pin it with a
# constraints file for every install, and take torch-tensorrt X.Y.* from the PyTorch index
# of the same CUDA build. Safe to run twice: pip skips what is already satisfied.
set -euo pipefail

DRY_RUN=0
TORCH_VERSION=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=1 ;;
    --torch-version) TORCH_VERSION="${2:?--torch-version needs a value, e.g. 2.9.1+cu128}"; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
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

TORCH_CUDA="unknown"  # from torch.version.cuda when we look at the real runtime
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
echo "torch $TORCH_VERSION (build: ${BUILD:-unspecified})"

CONSTRAINTS="${TMPDIR:-/tmp}/series-torch-constraint.txt"
run "echo 'torch==$TORCH_VERSION' > '$CONSTRAINTS'"

if [ "$BUILD" = "cpu" ] || [ "$TORCH_CUDA" = "none" ]; then
  echo
  echo "This torch is not a CUDA build, so TensorRT cannot run here: TensorRT engines need an"
  echo "NVIDIA GPU. In Colab choose Runtime > Change runtime type > T4 GPU, then run this again."
  echo "Installing the rest: every notebook still runs, with TensorRT steps reported as skipped."
  run "$PIP -r '$HERE/requirements.txt' -c '$CONSTRAINTS'"
  run "$PIP -e '$HERE' -c '$CONSTRAINTS'"
  exit 0
fi

if [[ "$BUILD" =~ ^cu[0-9]+$ ]]; then
  INDEX="https://download.pytorch.org/whl/$BUILD"
  EXTRA="--extra-index-url '$INDEX'"
else  # no local tag: PyPI's default (CUDA) build, matched by PyPI's torch-tensorrt
  INDEX="PyPI"
  EXTRA=""
fi
echo "torch-tensorrt $MAJOR_MINOR.* from $INDEX (torch pinned to $TORCH_VERSION)"
if [ "$DRY_RUN" = 0 ] && python3 - "$MAJOR_MINOR" <<'PY'
import sys
try:
    import torch_tensorrt
except Exception:
    sys.exit(1)
sys.exit(0 if torch_tensorrt.__version__.startswith(sys.argv[1] + ".") else 1)
PY
then
  echo "torch-tensorrt $MAJOR_MINOR is already installed and imports."
elif ! run "$PIP 'torch-tensorrt==$MAJOR_MINOR.*' $EXTRA -c '$CONSTRAINTS'"; then
  echo
  echo "No torch-tensorrt $MAJOR_MINOR.* matches torch $TORCH_VERSION ($INDEX)." >&2
  echo "Either this torch is newer than the latest torch-tensorrt release, or it was built for a" >&2
  echo "CUDA version torch-tensorrt does not ship. Options: use a runtime whose torch has a" >&2
  echo "matching torch-tensorrt release, or run the series without TensorRT (it still runs)." >&2
  exit 1
fi
run "$PIP -r '$HERE/requirements.txt' nvidia-modelopt -c '$CONSTRAINTS'"
run "$PIP -e '$HERE' -c '$CONSTRAINTS'"
run "python3 -c 'import helpers as h; print(h.format_report(h.environment_report()))'"
echo
echo "Done. Run by hand in a live kernel that had already imported torch, numpy or transformers?"
echo "Then restart it (Colab: Runtime > Restart session). The notebooks' setup cell checks this."
