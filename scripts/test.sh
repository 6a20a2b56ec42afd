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
# ctest runs one test per core: OpenBLAS's own threads would only spin
# against the other tests (the co-evolution test: 107 CPU-s with them, 63
# without). Only when unset.
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
cd "$build"
start=$SECONDS
rc=0
ctest --output-on-failure -j "${SKILLDB_JOBS:-$(nproc)}" --timeout 900 || rc=$?
echo "test.sh: $(basename "$build"): build $built s, ctest $((SECONDS - start)) s" >&2
# The Python suite (python/tests) against the module of the plain build: the
# module, the server process and the web page in headless Chromium.
if [[ "${1:-}" != "--sanitize" ]]; then
  start=$SECONDS
  cd "$root"
  PYTHONPATH="$build/python:$root/build/pydeps" SKILLDB_BUILD_DIR="$build" \
    SKILLDB_REQUIRE_CHROMIUM=1 /usr/bin/python3 -m pytest -q -p no:cacheprovider \
    python/tests verify/kernelbench/runner/test_kb_split.py \
    verify/kernelbench/runner/test_kb_caller.py \
    verify/kernelbench/runner/test_kb_runner_state.py \
    verify/kernelbench/bench/test_timeline.py || rc=$?
  echo "test.sh: pytest $((SECONDS - start)) s" >&2
fi
exit $rc
