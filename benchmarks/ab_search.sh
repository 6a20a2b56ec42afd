#!/usr/bin/env bash
# Compares the search phase of two or more skilldb_bench binaries on one
# index, alternating them so that the machine's drifting load falls on all.
#
#   bash benchmarks/ab_search.sh [--reps N] [--classes] --index DIR --queries FILE BIN...
#
# Each round runs every BIN once (`BIN search --threads 1 --warmup 1000`:
# single-thread top-10 and top-100 passes, no QPS phase); after N rounds
# (default 5) it prints, per binary, the top-10 p50 and mean of every round
# and their medians. The top-10 dump of every run must equal the first
# binary's first run, or the script says which run differed and exits 1:
# a speed change must never change results. With --classes (query files
# made by gen_corpus.py, which have a .meta.json), it also prints each
# binary's latencies by kind of query (benchmarks/latency_classes.py over
# each query's median across the rounds). Build the binaries from the
# commits to compare (`ninja skilldb_bench` in build-bench/, then copy
# benchmarks/skilldb_bench aside).
set -euo pipefail

reps=5
classes=0
index=""
queries=""
bins=()
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps=$2; shift ;;
    --classes) classes=1 ;;
    --index) index=$2; shift ;;
    --queries) queries=$2; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "ab_search.sh: unknown option $1" >&2; exit 2 ;;
    *) bins+=("$1") ;;
  esac
  shift
done
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "ab_search.sh: --reps needs a whole number >= 1, got '$reps'" >&2; exit 2; }
[ -d "$index" ] || { echo "ab_search.sh: --index '$index' is not a directory" >&2; exit 2; }
[ -f "$queries" ] || { echo "ab_search.sh: --queries '$queries' is not a file" >&2; exit 2; }
[ ${#bins[@]} -ge 1 ] || { echo "ab_search.sh: name at least one skilldb_bench binary" >&2; exit 2; }
for b in "${bins[@]}"; do
  [ -x "$b" ] || { echo "ab_search.sh: '$b' is not an executable" >&2; exit 2; }
done
if [ $classes = 1 ] && [ ! -f "$queries.meta.json" ]; then
  echo "ab_search.sh: --classes needs $queries.meta.json (made by gen_corpus.py)" >&2
  exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for ((r = 1; r <= reps; r++)); do
  for i in "${!bins[@]}"; do
    b=${bins[$i]}
    "$b" search --index "$index" --queries "$queries" --out "$work/run.json" \
      --dump "$work/run.tsv" --threads 1 --warmup 1000 --warmup-seconds 0 \
      --min-qps-seconds 0 --latencies "$work/lat-$i-$r.tsv" > "$work/run.log" 2>&1 ||
      { echo "ab_search.sh: $b failed:" >&2; tail -3 "$work/run.log" >&2; exit 1; }
    if [ ! -f "$work/reference.tsv" ]; then
      cp "$work/run.tsv" "$work/reference.tsv"
    elif ! cmp -s "$work/reference.tsv" "$work/run.tsv"; then
      echo "ab_search.sh: round $r of $b: top-10 differs from the first run" >&2
      status=1
    fi
    python3 - "$work/run.json" "$i" >> "$work/figures.tsv" <<'EOF'
import json, sys
lat = json.load(open(sys.argv[1]))["latency"]["10"]
print(f"{sys.argv[2]}\t{lat['p50_us']}\t{lat['mean_us']}")
EOF
  done
  echo "[ab] round $r of $reps done" >&2
done
python3 - "$work/figures.tsv" "${bins[@]}" <<'EOF'
import statistics, sys
rows = [line.split("\t") for line in open(sys.argv[1])]
for i, name in enumerate(sys.argv[2:]):
    p50 = [float(r[1]) for r in rows if int(r[0]) == i]
    mean = [float(r[2]) for r in rows if int(r[0]) == i]
    print(f"{name}: top-10 p50 median {statistics.median(p50):.1f} us "
          f"(rounds: {' '.join(f'{x:.0f}' for x in p50)}); mean median "
          f"{statistics.median(mean):.1f} us "
          f"(rounds: {' '.join(f'{x:.0f}' for x in mean)})")
EOF
if [ $classes = 1 ]; then
  meds=()
  for i in "${!bins[@]}"; do
    python3 - "$work/med-$i.tsv" "$work"/lat-$i-*.tsv <<'EOF'
import statistics, sys
lat = {}
for path in sys.argv[2:]:
    for line in open(path):
        qid, us = line.rstrip("\n").split("\t")
        lat.setdefault(qid, []).append(float(us))
with open(sys.argv[1], "w") as out:
    for qid, v in lat.items():
        out.write(f"{qid}\t{statistics.median(v)}\n")
EOF
    meds+=("$work/med-$i.tsv")
  done
  echo "per-query medians over the rounds; files in the order of the binaries: ${bins[*]}"
  python3 "$(dirname "$0")/latency_classes.py" "$queries" "${meds[@]}"
fi
exit $status
