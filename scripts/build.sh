#!/usr/bin/env bash
# Configures and builds skilldb. Usage: scripts/build.sh [--sanitize] [TARGET...]
#   --sanitize   AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/
#                (without the libtorch parts: models' decoder and encoder, the
#                trainer's learner and loop, skilldb-ml; see .ci/run)
#   TARGET...    build only these targets (default: everything)
# Release, warnings as errors (a plain `cmake` build keeps them warnings).
# Prints the build directory on the last line of stdout.
#
# Compiler cache: ccache (scripts/setup.sh installs it) is used when present.
# Its keys are taken relative to the checkout (CCACHE_BASEDIR, and the
# working directory left out of the hash), so a clone in another folder
# reuses what this one compiled. SKILLDB_CCACHE=0 builds without it; the
# cache is ccache's own (CCACHE_DIR, default ~/.cache/ccache), bounded at
# CCACHE_MAXSIZE (default 5G); `ccache -s` shows what it saved.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
flags=(-DCMAKE_BUILD_TYPE=Release -DSKILLDB_WERROR=ON)
# The Python module (python/) builds in the same tree when nanobind is there
# (scripts/setup.sh installs it into build/pydeps); the sanitized build never
# builds it (the interpreter would need the sanitizer runtime preloaded).
if [[ -d "$root/build/pydeps/nanobind" ]]; then
  flags+=(-DSKILLDB_BUILD_PYTHON=ON)
fi
if [[ "${1:-}" == "--sanitize" ]]; then
  shift
  build="$root/build-asan"
  # Line tables only (-g1): the sanitizers' reports still name file and
  # line, and the build is faster than with full -g.
  flags=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1
         -DSKILLDB_SANITIZE=ON -DSKILLDB_WERROR=ON -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON
         -DSKILLDB_BUILD_PYTHON=OFF)
fi
mapfile -t launchers < <(bash "$root/scripts/ccache_flags.sh" "$root")
flags+=("${launchers[@]}")
jobs="${SKILLDB_JOBS:-$(nproc)}"
cmake -S "$root" -B "$build" -G Ninja "${flags[@]}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" -j "$jobs" "${targets[@]}" >&2
echo "$build"
