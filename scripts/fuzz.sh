#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan) in
# build-fuzz/ and runs each for a bounded time, SKILLDB_JOBS (default: the
# cores) at once. Usage: scripts/fuzz.sh [SECONDS]
#   SECONDS  per target (default 60)
# Each target starts from its seed corpus (tests/fuzz/corpus/NAME) and from
# what it found before (build-fuzz/corpus/NAME, kept between runs, where new
# inputs go). A crash, a failed invariant, a leak, a timeout (10 s an input)
# or more than 2 GB of memory fails the run and leaves the input in
# build-fuzz/artifacts/ (rerun it: build-fuzz/tests/fuzz/NAME_fuzz FILE).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz.sh: SECONDS must be a positive integer, not '$seconds'" >&2
  exit 1
fi
bash "$root/scripts/setup.sh" --fuzz
build="$root/build-fuzz"
jobs="${SKILLDB_JOBS:-$(nproc)}"
# Only what the targets need: no tests, CUDA, shared libraries or libtorch.
# Warnings are errors here too: this is the build CI makes with clang 14, a
# compiler its test passes (GCC 12) do not cover.
mapfile -t launchers < <(bash "$root/scripts/ccache_flags.sh" "$root")
CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Debug -DSKILLDB_FUZZ=ON -DSKILLDB_BUILD_TESTS=OFF \
  -DSKILLDB_BUILD_CUDA=OFF -DSKILLDB_BUILD_SHARED=OFF -DSKILLDB_WERROR=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON "${launchers[@]}" >/dev/null
start=$SECONDS
cmake --build "$build" -j "$jobs" --target fuzz_targets >&2
echo "fuzz.sh: build $((SECONDS - start)) s" >&2
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
mkdir -p "$build/artifacts"
# The seeds are a few KB each (the tokenizer.json ones are the fixtures of
# models/testdata cut to 288 tokens), so one input bound serves every target.
targets="skill_jsonl analyzer query safetensors tokenizer model_config
         llm_answer rerank_answer extract skill_extract"
max_len=8192
# Targets run side by side, one per core (libFuzzer runs on one thread), each
# for SECONDS; each one's output goes to build-fuzz/logs/NAME.log, and a
# failure prints the end of its log.
mkdir -p "$build/logs"
fuzz_one() {  # fuzz_one NAME: runs it, its output in its log
  local name="$1"
  mkdir -p "$build/corpus/$name"
  "$build/tests/fuzz/${name}_fuzz" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len="$max_len" -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$name-" \
    "$build/corpus/$name" "$root/tests/fuzz/corpus/$name" >"$build/logs/$name.log" 2>&1
}
report() {  # report NAME RC: one line when it passed, the log's end otherwise
  local name="$1" rc="$2" log="$build/logs/$1.log"
  if [[ "$rc" == 0 ]]; then
    echo "fuzz.sh: ${name}_fuzz passed: $(grep -m1 '^Done' "$log" || echo 'no summary')" \
         "($(grep -m1 'new_units_added' "$log" | tr -s ' ' || true))" >&2
  else
    echo "fuzz.sh: ${name}_fuzz FAILED (exit $rc); the end of $log:" >&2
    tail -n 60 "$log" >&2
    failed=$((failed + 1))
  fi
}
declare -A running=()  # pid -> target
failed=0
count=$(wc -w <<<"$targets")
echo "fuzz.sh: $count targets for ${seconds} s each, $jobs at a time" >&2
for name in $targets; do
  while (( ${#running[@]} >= jobs )); do
    rc=0; wait -n -p done_pid || rc=$?
    report "${running[$done_pid]}" "$rc"
    unset "running[$done_pid]"
  done
  fuzz_one "$name" &
  running[$!]="$name"
done
for pid in "${!running[@]}"; do
  rc=0; wait "$pid" || rc=$?
  report "${running[$pid]}" "$rc"
done
if (( failed > 0 )); then
  echo "fuzz.sh: $failed target(s) failed; inputs in $build/artifacts/" >&2
  exit 1
fi
echo "fuzz.sh: no failures" >&2
