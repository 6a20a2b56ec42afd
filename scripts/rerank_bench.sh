#!/usr/bin/env bash
# Reruns the measurements of rerank/RESULTS.md: reranking quality on
# data/relevance with scripted models (rerank_eval; --grid adds the fusion
# grid the defaults were chosen from, ~10 min on 2 cores) and the latency
# reranking adds per selection against the scripted protocol server with a
# real server's latency model, plus the parser on the committed adversarial
# answers (rerank_latency_bench, ~25 min: the model delays are real sleeps);
# and the dense stage with the real all-MiniLM-L6-v2 on libtorch: BM25,
# dense alone and the fusions, with latency per query (dense_eval, ~1 min).
#
# Usage: scripts/rerank_bench.sh [quality|latency|dense|all] [--grid]
# Environment: SKILLDB_BUILD_DIR (default build/), SKILLDB_JOBS (default 1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SKILLDB_BUILD_DIR:-$root/build}"
jobs="${SKILLDB_JOBS:-1}"
what="${1:-all}"
shift || true
# The latency bench is a benchmark driver: configured in (it stays on).
cmake -S "$root" -B "$build" -G Ninja -DSKILLDB_BUILD_BENCHMARKS=ON >/dev/null
if [[ "$what" == quality || "$what" == all ]]; then
  cmake --build "$build" -j "$jobs" --target rerank_eval >&2
  "$build/tests/rerank/rerank_eval" "$@"
fi
if [[ "$what" == latency || "$what" == all ]]; then
  cmake --build "$build" -j "$jobs" --target rerank_latency_bench >&2
  "$build/tests/rerank/rerank_latency_bench"
fi
if [[ "$what" == dense || "$what" == all ]]; then
  cmake --build "$build" -j "$jobs" --target dense_eval >&2
  "$build/tests/rerank/dense_eval"
fi
