#!/usr/bin/env bash
# Configures and builds skilldb. Usage: scripts/build.sh [--sanitize]
#   --sanitize   AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/
# Prints the build directory on the last line of stdout.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
if [[ "${1:-}" == "--sanitize" ]]; then
  build="$root/build-asan"
  # Line tables only (-g1): the sanitizers' reports still name file and
  # line, and the build is faster than with full -g.
  flags=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1
         -DSKILLDB_SANITIZE=ON -DSKILLDB_BUILD_BENCHMARKS=OFF)
fi
jobs="${SKILLDB_JOBS:-$(nproc)}"
cmake -S "$root" -B "$build" -G Ninja "${flags[@]}" >/dev/null
cmake --build "$build" -j "$jobs" >&2
echo "$build"
