#!/usr/bin/env bash
# Time per Policy Agent turn (retrieval, rerank, generation, compile,
# correctness, timing) and rollout-pool throughput (turns per minute per
# verifier worker) at several concurrency levels, with the scripted LLM and
# everything else real (policy/bench/turn_costs.cc).
#
# Here (host backend), from the repository root, after building
# skilldb_policy_bench in build/:
#   policy/bench/turn_costs.sh --backend host [--concurrency 1,8] [--rerank listwise]
#
# For the GPU machine (no RocksDB, SQLite, ICU or cpp-httplib there), make a
# bundle here, carry it, and run it there:
#   policy/bench/turn_costs.sh --bundle build-bench-bundle     # here
#   policy/bench/turn_costs.sh --gpu build-bench-bundle        # there
# The bundle holds the bench and the verifier workers (built here with
# nvcc 13, CUDA runtime and CUPTI taken from the machine's /usr/local/cuda)
# and the shared libraries they need that the GPU machine lacks.
#
# Output: one JSON object on stdout and in $OUT/turn_costs_<backend>.json
# (OUT defaults to /tmp/skilldb-turn-costs); bench arguments after the
# options above pass through (--tasks, --turns, --samples, --workers,
# --rollouts, --cached-sources, --decode-tokens-per-s).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${OUT:-/tmp/skilldb-turn-costs}"
BUILD="${BUILD:-$ROOT/build}"
MODE=run
BUNDLE=""
BACKEND=host
PASS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) MODE=bundle; BUNDLE="$2"; shift ;;
    --gpu) MODE=gpu; BUNDLE="$2"; BACKEND=cuda; shift ;;
    --backend) BACKEND="$2"; shift ;;
    *) PASS+=("$1") ;;
  esac
  shift
done
mkdir -p "$OUT"

if [ "$MODE" = bundle ]; then
  # The bench, the workers, and every shared library they load except the
  # C runtime, the C++ runtime (the GPU machine's are newer) and CUDA's.
  case "$BUNDLE" in /*) ;; *) BUNDLE="$ROOT/$BUNDLE" ;; esac
  rm -rf "$BUNDLE" && mkdir -p "$BUNDLE/bin" "$BUNDLE/lib"
  for exe in "$BUILD/policy/skilldb_policy_bench" \
             "$BUILD/verify/skilldb_verify_worker_cuda" \
             "$BUILD/verify/skilldb_verify_worker_host"; do
    [ -x "$exe" ] || { echo "missing $exe: build it first" >&2; exit 1; }
    strip -o "$BUNDLE/bin/$(basename "$exe")" "$exe"
  done
  ldd "$BUILD/policy/skilldb_policy_bench" | awk '/=> \//{print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libstdc++.so*|libgcc_s.so*|ld-linux*|libcuda*|libcupti*) ;;
      *) cp -L "$lib" "$BUNDLE/lib/" && strip --strip-unneeded "$BUNDLE/lib/$(basename "$lib")" ;;
    esac
  done
  du -sh "$BUNDLE"/bin "$BUNDLE"/lib
  du -sh "$BUNDLE"
  exit 0
fi

if [ "$MODE" = gpu ]; then
  case "$BUNDLE" in /*) ;; *) BUNDLE="$ROOT/$BUNDLE" ;; esac
  BENCH="$BUNDLE/bin/skilldb_policy_bench"
  export LD_LIBRARY_PATH="$BUNDLE/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/extras/CUPTI/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export SKILLDB_VERIFY_CUDA_WORKER="$BUNDLE/bin/skilldb_verify_worker_cuda"
  export SKILLDB_VERIFY_HOST_WORKER="$BUNDLE/bin/skilldb_verify_worker_host"
  export PATH="/usr/local/cuda/bin:$PATH"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
else
  BENCH="$BUILD/policy/skilldb_policy_bench"
fi
export SKILLDB_VERIFY_SOURCE_DIR="$ROOT/verify"
export SKILLDB_VERIFY_CACHE="${SKILLDB_VERIFY_CACHE:-$OUT/compile-cache}"
[ -x "$BENCH" ] || { echo "missing $BENCH" >&2; exit 1; }
"$BENCH" --backend "$BACKEND" --seed "$ROOT/data/seed" \
  --out "$OUT/turn_costs_$BACKEND.json" ${PASS[@]+"${PASS[@]}"}
