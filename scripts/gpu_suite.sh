#!/usr/bin/env bash
# The verifier's GPU suite: builds verify/ on its own (the GPU machine has no
# RocksDB/SQLite/ICU), runs the GPU tests, and measures the figures of the
# GPU-verifier issue: false-positive rate, power, per-task timing noise,
# throughput with a cold and a warm compile cache against KernelBench's
# protocol, and every hack candidate rejected with its reason.
#
#   scripts/gpu_suite.sh [--quick] [--phases build,test,cputest,describe,candidates,fp,power,throughput,kb]
#
# Writes logs and JSON under $OUT/suite (OUT defaults to
# /tmp/skilldb-gpu-suite), then summary.json and summary.md
# (verify/bench/suite_summary.py) in $OUT, packs $OUT/suite into
# $OUT/suite.tgz, and prints a compact table last. --quick shrinks the trial
# counts for a smoke run. Environment: BUILD (build dir, default
# <repo>/build-verify-gpu), JOBS.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-/tmp/skilldb-gpu-suite}"
BUILD="${BUILD:-$ROOT/build-verify-gpu}"
JOBS="${JOBS:-$(nproc)}"
QUICK=0
PHASES="build,test,cputest,describe,candidates,fp,power,throughput,kb"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --phases) PHASES="$2"; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
RUN="$RUN/suite"
mkdir -p "$RUN"
has() { [[ ",$PHASES," == *",$1,"* ]]; }
stamp() { echo "[$(date +%H:%M:%S)] $*"; }
PY="$(command -v python3)"
BENCH="$BUILD/skilldb_verify_bench"
export SKILLDB_VERIFY_CACHE="${SKILLDB_VERIFY_CACHE:-$BUILD/compile-cache}"

if [ "$QUICK" = 1 ]; then
  FP_TRIALS=32; POWER_TRIALS=20; CAND_TASKS="--tasks softmax_rows_fp32,matmul_fp32,attention_fp32"
  TP_TASKS="softmax_rows_fp32,layernorm_fp32,matmul_fp32"; KB_TASKS="softmax_rows_fp32"
else
  FP_TRIALS=208; POWER_TRIALS=200; CAND_TASKS=""
  TP_TASKS=""; KB_TASKS="softmax_rows_fp32,layernorm_fp32,matmul_fp32"
fi

if has build; then
  stamp "environment"
  { nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
    /usr/local/cuda/bin/nvcc --version | tail -2; cmake --version | head -1; g++ --version | head -1
    "$PY" -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available())'
    ls /usr/include/nlohmann/json.hpp /usr/include/doctest/doctest.h 2>&1 || true; } \
    2>&1 | tee "$RUN/environment.log"
  stamp "build (standalone verify/)"
  GEN=(); command -v ninja > /dev/null && GEN=(-G Ninja)
  cmake -S "$ROOT/verify" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DSKILLDB_VERIFY_DEPS_DIR="$ROOT/.verify-deps" > "$RUN/build.log" 2>&1 &&
    cmake --build "$BUILD" -j "$JOBS" >> "$RUN/build.log" 2>&1
  rc=$?; tail -3 "$RUN/build.log"
  [ $rc -eq 0 ] || { echo "BUILD FAILED"; tail -40 "$RUN/build.log"; exit 1; }
fi

if has test; then
  stamp "GPU tests (sequential: they time kernels)"
  (cd "$BUILD" && ctest -L gpu --output-on-failure --timeout 300) > "$RUN/ctest_gpu.log" 2>&1
  grep -E "tests passed|Failed|\*\*\*" "$RUN/ctest_gpu.log" | tail -15
fi

if has cputest; then
  stamp "CPU tests on this machine"
  (cd "$BUILD" && ctest -LE gpu -j 4 --output-on-failure --timeout 300) > "$RUN/ctest_cpu.log" 2>&1
  grep -E "tests passed|Failed" "$RUN/ctest_cpu.log" | tail -8
fi

if has describe; then
  stamp "device and ceilings"
  "$BENCH" describe --backend cuda --json "$RUN/describe.json" 2>&1 | tee "$RUN/describe.log"
fi

if has candidates; then
  stamp "precompile every candidate into the cache ($JOBS threads)"
  "$BENCH" precompile --backend cuda --threads "$JOBS" $CAND_TASKS 2>&1 | tail -1
  stamp "every shipped candidate, static screen on"
  "$BENCH" candidates --backend cuda $CAND_TASKS --json "$RUN/candidates.json" \
    > "$RUN/candidates.log" 2>&1
  grep -E "UNEXPECTED|ERROR|meeting" "$RUN/candidates.log" | tail -20
  stamp "hacks with the static screen off (runtime layers alone)"
  "$BENCH" candidates --backend cuda --no-screen --only hack_ \
    --tasks softmax_rows_fp32,matmul_fp32 --json "$RUN/candidates_noscreen.json" \
    > "$RUN/candidates_noscreen.log" 2>&1
  grep -E "UNEXPECTED|ERROR|meeting" "$RUN/candidates_noscreen.log" | tail -10
fi

if has fp; then
  stamp "false positives: reference vs identical copy, $FP_TRIALS trials, tau 1.05"
  "$BENCH" fp --backend cuda --trials "$FP_TRIALS" --tau 1.05 --json "$RUN/fp.json" \
    > "$RUN/fp.log" 2>&1; tail -20 "$RUN/fp.log"
fi

if has power; then
  stamp "power: a true ~1.3x speedup, $POWER_TRIALS trials"
  "$BENCH" power --backend cuda --trials "$POWER_TRIALS" --tau 1.05 --slowdown 0.3 \
    --tasks softmax_rows_fp32,layernorm_fp32 --json "$RUN/power.json" > "$RUN/power.log" 2>&1
  tail -3 "$RUN/power.log"
fi

if has throughput; then
  stamp "throughput: team candidates, cold then warm compile cache"
  TP_ARGS=(); [ -n "$TP_TASKS" ] && TP_ARGS=(--tasks "$TP_TASKS")
  "$BENCH" throughput --backend cuda "${TP_ARGS[@]}" --cache "$BUILD/throughput-cache" \
    --json "$RUN/throughput.json" > "$RUN/throughput.log" 2>&1; tail -2 "$RUN/throughput.log"
fi

if has kb; then
  stamp "KernelBench protocol on the same candidates ($KB_TASKS)"
  PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR="$BUILD/torch-ext" MAX_JOBS="$JOBS" \
    "$PY" "$ROOT/verify/bench/kernelbench_protocol.py" --tasks "$KB_TASKS" \
    --out "$RUN/kb.json" > "$RUN/kb.log" 2>&1; tail -2 "$RUN/kb.log"
fi

stamp "summary"
"$PY" "$ROOT/verify/bench/suite_summary.py" "$RUN"
cp "$RUN/summary.md" "$RUN/summary.json" "$OUT/" 2>/dev/null
tar czf "$OUT/suite.tgz" -C "$OUT" suite && rm -rf "$RUN"
