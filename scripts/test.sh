#!/usr/bin/env bash
# README command 2: install what is missing, build, and run the whole test
# suite through ctest. Usage: scripts/test.sh [--sanitize]
#   --sanitize   the same suite built with AddressSanitizer + UBSan
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
start=$SECONDS
build="$(bash "$root/scripts/build.sh" "$@" | tail -n 1)"
built=$((SECONDS - start))
# OpenBLAS kernels for CPUs Debian's OpenBLAS does not know (libtorch's matmuls).
source "$root/scripts/blas_env.sh"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
cd "$build"
start=$SECONDS
rc=0
ctest --output-on-failure -j "${SKILLDB_JOBS:-$(nproc)}" --timeout 900 || rc=$?
echo "test.sh: $(basename "$build"): build $built s, ctest $((SECONDS - start)) s" >&2
exit $rc
