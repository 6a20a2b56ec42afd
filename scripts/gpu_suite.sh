#!/usr/bin/env bash
# The verifier's GPU suite. On a GPU machine it builds verify/ on its own (the
# GPU machine has no RocksDB/SQLite/ICU), runs the GPU tests, and measures the
# figures of the GPU-verifier issue: false-positive rate, power, per-task
# timing noise, throughput with a cold and a warm compile cache against
# KernelBench's protocol, and every hack candidate rejected with its reason.
#
#   scripts/gpu_suite.sh [--quick] [--prebuilt DIR] [--phases LIST]
#
# Phases, in the order they run (LIST is comma separated; default: all):
#   build        configure and build verify/ standalone into $BUILD
#   describe     the device and its measured ceilings
#   precompile   every candidate of every task into the compile cache
#   containment  the attack candidates (verify/tasks/_attacks) on both
#                backends: each must be contained (attack.sh checks how)
#   candidates   every shipped candidate (team + hacks), static screen on
#   fp           reference vs identical copy, >= 200 trials, tau 1.05
#   power        a true ~1.3x speedup (reference vs a 1.3x-work baseline)
#   throughput   team candidates with a cold, then a warm compile cache
#   confinement  the cost of confinement: throughput (cold and warm cache)
#                with the sandbox and compiler namespaces on, then off
#   kb           KernelBench's protocol (load_inline + 100 trials) on them
#   test         the GPU tests (ctest -L gpu, or the test binary directly)
#   noscreen     the hacks again with the static symbol screen off
#   cputest      the CPU tests on this machine
#   buildcheck   a fresh standalone build (after measuring with --prebuilt)
#
# --prebuilt DIR uses binaries built elsewhere (skilldb_verify_bench,
# skilldb_verify_worker_cuda, skilldb_verify_gpu_test in DIR) and skips the
# build phase; --quick shrinks trial counts for a smoke run.
#
# Results: logs and JSON go to $RUN (default /tmp/skilldb-gpu-suite-run);
# after every phase $OUT (default /tmp/skilldb-gpu-suite) is refreshed with
# summary.md, summary.json (verify/bench/suite_summary.py) and suite.tgz
# (all of $RUN), so a run cut short still leaves what it measured. The
# compact table of figures is printed last.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-/tmp/skilldb-gpu-suite}"
RUN="${RUN:-/tmp/skilldb-gpu-suite-run}"
BUILD="${BUILD:-$ROOT/build-verify-gpu}"
JOBS="${JOBS:-$(nproc)}"
QUICK=0
PREBUILT=""
PHASES="build,describe,containment,precompile,candidates,fp,power,throughput,confinement,kb,test,noscreen,cputest"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --prebuilt) PREBUILT="$(cd "$2" && pwd)"; shift ;;
    --phases) PHASES="$2"; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$OUT" "$RUN"
has() { [[ ",$PHASES," == *",$1,"* ]]; }
stamp() { echo "[$(date +%H:%M:%S) +$SECONDS s] $*"; }
PY="$(command -v python3)"
BIN="$BUILD"
if [ -n "$PREBUILT" ]; then
  BIN="$PREBUILT"
  export SKILLDB_VERIFY_SOURCE_DIR="$ROOT/verify"
  export SKILLDB_VERIFY_CUDA_WORKER="$BIN/skilldb_verify_worker_cuda"
  export SKILLDB_VERIFY_HOST_WORKER="$BIN/skilldb_verify_worker_host"
fi
BENCH="$BIN/skilldb_verify_bench"
export SKILLDB_VERIFY_CACHE="${SKILLDB_VERIFY_CACHE:-$RUN/compile-cache}"

# Sizes; each can be overridden from the environment.
if [ "$QUICK" = 1 ]; then
  FP_TRIALS="${FP_TRIALS:-32}"; POWER_TRIALS="${POWER_TRIALS:-20}"
  TASKS="--tasks softmax_rows_fp32,matmul_fp32,attention_fp32"
  TP_TASKS="${TP_TASKS:-softmax_rows_fp32,layernorm_fp32}"; KB_TASKS="${KB_TASKS:-softmax_rows_fp32}"
  CONF_TASKS="${CONF_TASKS:-softmax_rows_fp32}"
else
  FP_TRIALS="${FP_TRIALS:-208}"; POWER_TRIALS="${POWER_TRIALS:-200}"; TASKS=""
  TP_TASKS="${TP_TASKS:-softmax_rows_fp32,layernorm_fp32,matmul_fp32,attention_fp32}"
  KB_TASKS="${KB_TASKS:-softmax_rows_fp32,layernorm_fp32}"
  CONF_TASKS="${CONF_TASKS:-softmax_rows_fp32,layernorm_fp32}"
fi

# Refreshes $OUT from $RUN: summary and archive.
checkpoint() {
  "$PY" "$ROOT/verify/bench/suite_summary.py" "$RUN" > "$RUN/table.txt" 2>&1
  cp "$RUN/summary.md" "$RUN/summary.json" "$OUT/" 2>/dev/null
  tar czf "$OUT/suite.tgz" -C "$RUN" --exclude compile-cache --exclude throughput-cache \
    --exclude 'confinement-cache-*' \
    --exclude torch-ext . 2>/dev/null
}

# The GPU machine's compiler is not the one the project is developed with, and
# a newer compiler warns where the older one did not: warnings stay warnings
# here (SKILLDB_WERROR=OFF) and are counted, not fatal.
build() {  # build DIR: standalone configure + build, log in $RUN/build.log
  local gen=() rc
  command -v ninja > /dev/null && gen=(-G Ninja)
  cmake -S "$ROOT/verify" -B "$1" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DSKILLDB_WERROR=OFF \
      -DSKILLDB_DEPS_DIR="$ROOT/.verify-deps" > "$RUN/build.log" 2>&1 &&
    cmake --build "$1" -j "$JOBS" >> "$RUN/build.log" 2>&1
  rc=$?
  echo "compiler warnings: $(grep -c 'warning:' "$RUN/build.log")"
  return $rc
}

stamp "environment"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  /usr/local/cuda/bin/nvcc --version | tail -2; cmake --version | head -1; g++ --version | head -1
  "$PY" -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available())'
  ls /usr/include/nlohmann/json.hpp /usr/include/doctest/doctest.h 2>&1 || true; } \
  > "$RUN/environment.log" 2>&1
head -12 "$RUN/environment.log"

if has build && [ -z "$PREBUILT" ]; then
  stamp "build (standalone verify/)"
  if ! build "$BUILD"; then
    echo "BUILD FAILED"; tail -40 "$RUN/build.log"; checkpoint; exit 1
  fi
  tail -1 "$RUN/build.log"
fi

if has describe; then
  stamp "device and ceilings"
  "$BENCH" describe --backend cuda --json "$RUN/describe.json" 2>&1 | tee "$RUN/describe.log"
  checkpoint
fi

if has containment; then
  stamp "containment: the attack candidates on the cuda and host backends"
  for backend in cuda host; do
    "$ROOT/verify/tasks/_attacks/attack.sh" "$BENCH" "$backend" "$RUN/containment-$backend" \
      2>&1 | tee "$RUN/containment-$backend.log"
  done
  checkpoint
fi

if has precompile; then
  stamp "precompile every candidate into the cache ($JOBS threads)"
  "$BENCH" precompile --backend cuda --threads "$JOBS" $TASKS 2>&1 | tail -1
fi

if has candidates; then
  stamp "every shipped candidate, static screen on"
  "$BENCH" candidates --backend cuda $TASKS --json "$RUN/candidates.json" \
    > "$RUN/candidates.log" 2>&1
  grep -E "UNEXPECTED|ERROR|meeting" "$RUN/candidates.log" | tail -20
  checkpoint
fi

if has fp; then
  stamp "false positives: reference vs identical copy, $FP_TRIALS trials, tau 1.05"
  "$BENCH" fp --backend cuda --trials "$FP_TRIALS" --tau 1.05 $TASKS --json "$RUN/fp.json" \
    > "$RUN/fp.log" 2>&1
  tail -3 "$RUN/fp.log"
  checkpoint
fi

if has power; then
  stamp "power: a true ~1.3x speedup, $POWER_TRIALS trials"
  "$BENCH" power --backend cuda --trials "$POWER_TRIALS" --tau 1.05 --slowdown 0.3 \
    --tasks softmax_rows_fp32,layernorm_fp32 --json "$RUN/power.json" > "$RUN/power.log" 2>&1
  tail -3 "$RUN/power.log"
  checkpoint
fi

if has throughput; then
  stamp "throughput: team candidates, cold then warm compile cache"
  "$BENCH" throughput --backend cuda --tasks "$TP_TASKS" --cache "$RUN/throughput-cache" \
    --json "$RUN/throughput.json" > "$RUN/throughput.log" 2>&1
  tail -2 "$RUN/throughput.log"
  checkpoint
fi

if has confinement; then
  stamp "confinement cost: throughput with confinement on, then off ($CONF_TASKS)"
  for mode in on off; do
    flag=""; [ "$mode" = off ] && flag="--no-confine"
    "$BENCH" throughput --backend cuda --tasks "$CONF_TASKS" $flag \
      --cache "$RUN/confinement-cache-$mode" --json "$RUN/confinement_$mode.json" \
      > "$RUN/confinement_$mode.log" 2>&1
    echo "confinement $mode:"; tail -2 "$RUN/confinement_$mode.log"
  done
  rm -rf "$RUN/confinement-cache-on" "$RUN/confinement-cache-off"
  checkpoint
fi

if has kb; then
  stamp "KernelBench protocol on the same candidates ($KB_TASKS)"
  PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR="$RUN/torch-ext" MAX_JOBS="$JOBS" \
    "$PY" "$ROOT/verify/bench/kernelbench_protocol.py" --tasks "$KB_TASKS" \
    --out "$RUN/kb.json" > "$RUN/kb.log" 2>&1
  tail -2 "$RUN/kb.log"
  checkpoint
fi

if has test; then
  stamp "GPU tests (sequential: they time kernels)"
  if [ -f "$BIN/CTestTestfile.cmake" ]; then
    (cd "$BIN" && ctest -L gpu --output-on-failure --timeout 300) > "$RUN/test_gpu.log" 2>&1
    grep -E "tests passed|Failed|\*\*\*" "$RUN/test_gpu.log" | tail -12
  else
    "$BIN/skilldb_verify_gpu_test" > "$RUN/test_gpu.log" 2>&1
    echo "GPU test binary exit code $?"; grep -E "ERROR|test cases|Status" "$RUN/test_gpu.log" | tail -12
  fi
  checkpoint
fi

if has noscreen; then
  stamp "hacks with the static screen off (runtime layers alone)"
  "$BENCH" candidates --backend cuda --no-screen --only hack_ \
    --tasks softmax_rows_fp32,matmul_fp32 --json "$RUN/candidates_noscreen.json" \
    > "$RUN/candidates_noscreen.log" 2>&1
  grep -E "UNEXPECTED|ERROR|meeting" "$RUN/candidates_noscreen.log" | tail -10
  checkpoint
fi

if has cputest && [ -f "$BIN/CTestTestfile.cmake" ]; then
  stamp "CPU tests on this machine"
  (cd "$BIN" && ctest -LE gpu -j 4 --output-on-failure --timeout 300) > "$RUN/test_cpu.log" 2>&1
  grep -E "tests passed|Failed" "$RUN/test_cpu.log" | tail -8
  checkpoint
fi

if has buildcheck; then
  stamp "standalone build check on this machine"
  if build "$RUN/build-check"; then echo "standalone build: OK"; else
    echo "standalone build: FAILED"; grep -E "error|Error" "$RUN/build.log" | head -20; fi
  rm -rf "$RUN/build-check"
  checkpoint
fi

stamp "summary"
checkpoint
cat "$RUN/table.txt"
