#!/usr/bin/env bash
# Builds the whole tree in one build type with warnings as errors, to check
# that it is warning-free (CI builds Release, the sanitized Debug -O1 and
# clang 14's fuzz targets; this covers the other types).
# Usage: scripts/check_warnings.sh TYPE [gcc|clang]
#   TYPE   Release | RelWithDebInfo | Debug
# Builds in build-warn-TYPE-COMPILER/ (through ccache, as scripts/build.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
type="${1:?usage: check_warnings.sh Release|RelWithDebInfo|Debug [gcc|clang]}"
compiler="${2:-gcc}"
case "$type" in Release|RelWithDebInfo|Debug) ;; *)
  echo "check_warnings.sh: TYPE must be Release, RelWithDebInfo or Debug, not '$type'" >&2; exit 1;;
esac
env=()
extra=()
case "$compiler" in
  gcc) ;;
  # nvcc's host compiler stays GCC: the CUDA parts are left to the gcc runs.
  # Debian's libtorch 1.13 headers do not compile with clang 14 in C++20
  # (c10::IValue incomplete where torch/csrc/autograd/function.h builds a
  # std::vector of it): the libtorch parts are left to the gcc runs too, as
  # the sanitized, TSan and fuzz builds leave them.
  clang) env=(CC=clang-14 CXX=clang++-14)
         extra=(-DSKILLDB_BUILD_CUDA=OFF -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON) ;;
  *) echo "check_warnings.sh: COMPILER must be gcc or clang, not '$compiler'" >&2; exit 1;;
esac
build="$root/build-warn-$type-$compiler"
mapfile -t launchers < <(bash "$root/scripts/ccache_flags.sh" "$root")
env "${env[@]}" cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="$type" \
  -DSKILLDB_WERROR=ON -DSKILLDB_BUILD_BENCHMARKS=ON "${extra[@]}" "${launchers[@]}" >/dev/null
cmake --build "$build" -j "${SKILLDB_JOBS:-$(nproc)}" >&2
echo "check_warnings.sh: $type with $compiler builds warning-free" >&2
