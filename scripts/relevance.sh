#!/usr/bin/env bash
# Reruns the retrieval-quality evaluation of the seed library: builds
# relevance_eval and runs every judged query (data/relevance/queries.jsonl)
# for each analyzer and field weighting of the grid, writing
# data/relevance/results.md (table sorted by nDCG@10, per area, per query)
# and $build/relevance/results.json (every configuration, per query).
#
# Usage: scripts/relevance.sh [relevance_eval arguments...]
#   e.g. scripts/relevance.sh --grid small
#        scripts/relevance.sh --config code:title=3,summary=2,tags=2,code=0
# Environment: SKILLDB_BUILD_DIR (default build/), SKILLDB_JOBS (default nproc).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SKILLDB_BUILD_DIR:-$root/build}"
jobs="${SKILLDB_JOBS:-$(nproc)}"
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$root" -B "$build" -G Ninja >/dev/null
fi
cmake --build "$build" -j "$jobs" --target relevance_eval >&2
mkdir -p "$build/relevance"
"$build/tests/relevance_eval" --json "$build/relevance/results.json" \
  --markdown "$root/data/relevance/results.md" "$@"
