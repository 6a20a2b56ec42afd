#!/usr/bin/env bash
# ThreadSanitizer over what runs concurrently: the engine's readers and
# writers in threads and processes (tests/concurrency_test.cc,
# tests/proposal_process_test.cc, the usage counters), the rollout pool
# (policy/), the verifier's worker pool (two host workers) and the
# KernelBench verifier's shared reference runners and device gate. Builds only
# those tests, in build-tsan/ (Debug -O1, no libtorch, no CUDA), and runs them.
# Usage: scripts/tsan.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build-tsan"
jobs="${SKILLDB_JOBS:-$(nproc)}"
mapfile -t launchers < <(bash "$root/scripts/ccache_flags.sh" "$root")
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 -DSKILLDB_TSAN=ON \
  -DSKILLDB_WERROR=ON -DSKILLDB_BUILD_SHARED=OFF -DSKILLDB_BUILD_CUDA=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON "${launchers[@]}" >/dev/null
start=$SECONDS
cmake --build "$build" -j "$jobs" --target concurrency_test library_worker \
  proposal_process_test libskilldb_test policy_test skilldb_verify_host_test \
  skilldb_verify_kb_test >&2
built=$((SECONDS - start))
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp}"
cd "$build"
start=$SECONDS
rc=0
ctest --output-on-failure -j "$jobs" --timeout 900 -R \
  'consistent versions|whole states|proposers|usage counters are exact|the pool runs|two host workers|reference pool|gate: checks side by side' || rc=$?
echo "tsan.sh: build $built s, ctest $((SECONDS - start)) s" >&2
exit $rc
