#!/usr/bin/env bash
# The CLI at library scale (issue 14, part 5): a generated JSONL of N skills
# (about 640 bytes each, so 200k is ~128 MB), then, each as its own process
# under /usr/bin/time: `import` (wall time, peak RSS), `stats` (median of 5
# runs), `stats --as-of` an older version, `compact` (library size before and
# after), and `query`.
#
#   bash benchmarks/cli_scale.sh [N] [SKILLDB]   N: 200000 (default)
#                                                SKILLDB: build/cli/skilldb
#
# Writes benchmarks/out/cli-scale-N/{skills.jsonl,lib/,results.tsv} and
# prints results.tsv (the library is rebuilt every run).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n="${1:-200000}"
skilldb="${2:-$root/build/cli/skilldb}"
out="$root/benchmarks/out/cli-scale-$n"
mkdir -p "$out"
[[ -x "$skilldb" ]] || { echo "cli_scale.sh: no $skilldb (run scripts/build.sh)" >&2; exit 2; }
if [[ ! -s "$out/skills.jsonl" ]]; then
  python3 - "$n" "$out/skills.jsonl" <<'PY'
import json, random, sys
n, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(14)
words = ("warp shuffle reduction tiling shared memory bank conflict async copy "
         "tensor core mma pipeline softmax layernorm coalesced vector load "
         "register blocking occupancy persistent kernel split epilogue fusion "
         "prefetch stream ordered launch bounds unroll predicate swizzle").split()
status = ["candidate", "active", "active", "deprecated"]
langs = ["cuda", "triton", "any"]
with open(path, "w") as f:
    for i in range(n):
        body = " ".join(rng.choice(words) for _ in range(60)) + f" variant {i}"
        f.write(json.dumps({
            "id": f"skill-{i:07d}",
            "title": " ".join(rng.choice(words) for _ in range(5)),
            "summary": " ".join(rng.choice(words) for _ in range(14)),
            "body": body,
            "tags": [rng.choice(words), rng.choice(words)],
            "language": rng.choice(langs),
            "status": rng.choice(status),
        }) + "\n")
PY
fi
lib="$out/lib"
rm -rf "$lib"
results="$out/results.tsv"
printf 'what\tvalue\n' > "$results"
row() { printf '%s\t%s\n' "$1" "$2" >> "$results"; }
# Runs the CLI under /usr/bin/time; sets WALL (s) and RSS (MB).
timed() {
  /usr/bin/time -f '%e %M' -o "$out/time.txt" "$skilldb" --db "$lib" "$@" > "$out/last.out"
  read -r WALL RSS_KB < "$out/time.txt"
  RSS=$((RSS_KB / 1024))
}
row skills "$n"
row file_bytes "$(stat -c %s "$out/skills.jsonl")"
"$skilldb" --db "$lib" init > /dev/null
timed import "$out/skills.jsonl"
row import_s "$WALL"; row import_peak_rss_mb "$RSS"
# A second, smaller commit so an older version exists.
head -n 1000 "$out/skills.jsonl" | sed 's/"status": "active"/"status": "pruned"/' > "$out/update.jsonl"
timed import "$out/update.jsonl"
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for v in head 1; do
  for r in 1 2 3 4 5; do
    if [[ "$v" == head ]]; then timed stats --json; else timed stats --json --as-of 1; fi
    echo "$WALL"
  done | median > "$out/median.txt"
  row "stats_${v}_median_s" "$(cat "$out/median.txt")"
done
for r in 1 2 3 4 5; do timed query "shared memory tiling"; echo "$WALL"; done | median > "$out/median.txt"
row query_process_median_s "$(cat "$out/median.txt")"
row library_bytes_before_compact "$(du -sb "$lib" | cut -f1)"
timed compact
row compact_s "$WALL"; row compact_peak_rss_mb "$RSS"
row library_bytes_after_compact "$(du -sb "$lib" | cut -f1)"
column -t "$results"
