#!/usr/bin/env bash
# Where skilldb's query time goes: builds one corpus's index with the
# benchmark driver, then runs its `search` phase (the same timing protocol
# as run.sh) under `perf record` and prints the hottest functions.
#
#   bash benchmarks/profile.sh [CORPUS]     CORPUS: synth-100k (default),
#                                           synth-1m, gcide, ...
#
# Needs the corpus and query files that run.sh generated
# (benchmarks/out/corpora) and the drivers it built (build-bench/), and
# linux-perf (`perf`). Writes benchmarks/out/profile-CORPUS/{perf.data,
# report.txt,search.json,latencies.tsv,classes.txt}; the index stays there
# for the next run (delete the folder to rebuild it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
corpus="${1:-synth-100k}"
corpora="$root/benchmarks/out/corpora"
driver="$root/build-bench/benchmarks/skilldb_bench"
out="$root/benchmarks/out/profile-$corpus"
queries="$(ls "$corpora/$corpus".q*.tsv 2>/dev/null | grep -v meta | head -n 1 || true)"
for f in "$corpora/$corpus.tsv" "$queries" "$driver"; do
  if [[ -z "$f" || ! -e "$f" ]]; then
    echo "profile.sh: missing ${f:-the query file for $corpus}; run benchmarks/run.sh first" >&2
    exit 2
  fi
done
command -v perf >/dev/null || { echo "profile.sh: perf not found (apt install linux-perf)" >&2; exit 2; }
mkdir -p "$out"
if [[ ! -e "$out/build.json" ]]; then  # an index left by an earlier run is reused
  rm -rf "$out/index"
  echo "[profile] building the $corpus index" >&2
  "$driver" build --corpus "$corpora/$corpus.tsv" --index "$out/index" \
    --out "$out/build.json.tmp" >&2
  mv "$out/build.json.tmp" "$out/build.json"
fi
echo "[profile] search phase under perf record ($queries)" >&2
perf record -F 2000 -o "$out/perf.data" -- \
  "$driver" search --index "$out/index" --queries "$queries" \
  --out "$out/search.json" --dump "$out/top10.tsv" --threads 1 --warmup 2000 --warmup-seconds 2 \
  --min-qps-seconds 1 --latencies "$out/latencies.tsv" >&2 2>"$out/perf-record.log"
perf report -i "$out/perf.data" --no-children --percent-limit 1 \
  --sort symbol 2>/dev/null | grep -v '^#' | grep -v '^$' |
  grep -E '^ +[0-9]' | sed -E 's/[[:space:]-]+$//' > "$out/report.txt"
cat "$out/report.txt"
# The timed top-10 pass by kind of query (when the query file has the
# generator's meta: each term's df decade).
if [[ -e "$queries.meta.json" ]]; then
  echo
  python3 "$root/benchmarks/latency_classes.py" "$queries" "$out/latencies.tsv" |
    tee "$out/classes.txt"
fi
