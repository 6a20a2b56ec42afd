#!/usr/bin/env bash
# A/B of skilldb_bench (benchmarks/skilldb_bench.cc), in one of two modes.
#
# Same results at two commits (the check of issue 33):
#
#   bash benchmarks/ab_search.sh --against OLD [--new REV] [--corpus synth-100k]
#        [--queries N] [--algorithms maxscore,wand] [--work DIR]
#
# Builds only the skilldb_bench target at commit OLD and at REV (default
# HEAD; each commit's tree comes from `git archive`, so neither the checkout
# nor its worktree list changes), generates the corpus and N queries (default
# 2000) with this checkout's gen_corpus.py (the same query file for both),
# then for each commit builds a fresh index with that commit's binary
# (`skilldb_bench build`: the index format may differ between the commits)
# and runs every query on it (`skilldb_bench search --threads 1`) once per
# algorithm (SKILLDB_BENCH_ALGORITHM: windowed block-max MaxScore, block-max
# WAND). The dumps print scores with 17 significant digits (a double round
# trips), so the comparison is exact: for every query and algorithm the
# top-10 ids in order and their scores must be equal. It prints the commits,
# the corpus size, the query count, how many lists are identical and how many
# differ (the first differences spelled out), and exits 1 on any difference.
# Sources, builds (cmake, Release, warnings not errors, no CUDA, no torch,
# ccache when present), the corpus and the dumps go under DIR (default
# ${TMPDIR:-/tmp}/skilldb-ab, kept between runs: a second run rebuilds
# nothing it has). Builds run under `nice` with SKILLDB_JOBS jobs (default
# nproc).
#
# Speed of binaries on one index:
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
against=""
new_rev=HEAD
corpus=synth-100k
algorithms=maxscore,wand
abdir="${TMPDIR:-/tmp}/skilldb-ab"
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps=$2; shift ;;
    --classes) classes=1 ;;
    --index) index=$2; shift ;;
    --queries) queries=$2; shift ;;
    --against) against=$2; shift ;;
    --new) new_rev=$2; shift ;;
    --corpus) corpus=$2; shift ;;
    --algorithms) algorithms=$2; shift ;;
    --work) abdir=$2; shift ;;
    -h|--help) sed -n '2,42p' "$0"; exit 0 ;;
    -*) echo "ab_search.sh: unknown option $1" >&2; exit 2 ;;
    *) bins+=("$1") ;;
  esac
  shift
done

# ---- same results at two commits ------------------------------------------
die() { echo "ab_search.sh: $*" >&2; exit 2; }

# Prints a python3 that has numpy (gen_corpus.py needs it): Debian's, the
# benchmarks' venv (run.sh makes it), or the one on PATH.
python_with_numpy() {
  local py
  for py in /usr/bin/python3 "$root/benchmarks/.venv/bin/python" python3; do
    if "$py" -c 'import numpy' 2>/dev/null; then echo "$py"; return; fi
  done
  die "gen_corpus.py needs numpy: apt-get install python3-numpy, or run benchmarks/run.sh once (it makes benchmarks/.venv)"
}

# build_bench SHA: extracts SHA's tree under $abdir and builds its
# skilldb_bench there (nothing else); prints the binary's path.
build_bench() {
  local sha=$1 src="$abdir/src-${1:0:12}" build="$abdir/build-${1:0:12}"
  if [ ! -f "$src/.extracted" ]; then
    rm -rf "$src" && mkdir -p "$src"
    git -C "$root" archive "$sha" | tar -x -C "$src"
    touch "$src/.extracted"
  fi
  [ -f "$src/benchmarks/skilldb_bench.cc" ] ||
    die "${sha:0:12} has no benchmarks/skilldb_bench.cc: nothing to build"
  # The compiler cache settings come from this checkout's ccache_flags.sh:
  # older trees (b48b580 among them) do not have the script.
  local launchers=()
  mapfile -t launchers < <(bash "$root/scripts/ccache_flags.sh" "$src")
  # One set of options fits both sides of issue 33: SKILLDB_BUILD_BENCHMARKS
  # and SKILLDB_BUILD_TESTS were in the top CMakeLists.txt before it and are
  # in cmake/skilldb.cmake after it, under the same names.
  if [ ! -f "$build/build.ninja" ]; then
    nice -n 10 cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DSKILLDB_WERROR=OFF -DSKILLDB_BUILD_TESTS=OFF -DSKILLDB_BUILD_BENCHMARKS=ON \
      -DSKILLDB_BUILD_CUDA=OFF -DSKILLDB_BUILD_SHARED=OFF -DSKILLDB_BUILD_PYTHON=OFF \
      -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON "${launchers[@]}" \
      > "$build.configure.log" 2>&1 ||
      { tail -20 "$build.configure.log" >&2; die "configuring ${sha:0:12} failed"; }
  fi
  nice -n 10 cmake --build "$build" --target skilldb_bench -j "${SKILLDB_JOBS:-$(nproc)}" \
    > "$build.build.log" 2>&1 ||
    { grep -m5 -E 'error' "$build.build.log" >&2; die "building skilldb_bench at ${sha:0:12} failed (see $build.build.log)"; }
  echo "$build/benchmarks/skilldb_bench"
}

# Compares the dumps (ALGO=OLD.tsv ALGO=NEW.tsv ...) for every query of the
# query file; prints the figures and the first differences; exits 1 on any.
compare_dumps() {
  python3 - "$@" <<'EOF'
import json, sys
from collections import defaultdict

meta = json.load(open(sys.argv[1]))
qids = [line.split("\t", 1)[0] for line in open(sys.argv[2])]
print(f"corpus {meta['corpus']}: {meta['n_docs']} documents, {meta['n_terms']} terms, "
      f"seed {meta['seed']}; queries {len(qids)} ({sys.argv[2].rsplit('/', 1)[-1]})")

def load(path):  # qid -> [(id, score as printed)] in rank order
    lists = defaultdict(list)
    for line in open(path):
        qid, rank, doc, score = line.rstrip("\n").split("\t")
        if int(rank) != len(lists[qid]) + 1:
            sys.exit(f"{path}: rank {rank} of {qid} out of order")
        lists[qid].append((doc, score))
    return lists

pairs = {}
for arg in sys.argv[3:]:
    algo, path = arg.split("=", 1)
    pairs.setdefault(algo, []).append(load(path))
failed = False
for algo, (old, new) in pairs.items():
    same = ids_differ = scores_differ = hits = 0
    examples = []
    for qid in qids:
        a, b = old.get(qid, []), new.get(qid, [])
        hits += len(b)
        if a == b:
            same += 1
            continue
        if [d for d, _ in a] != [d for d, _ in b]:
            ids_differ += 1
        else:
            scores_differ += 1
        if len(examples) < 5:
            r = next(i for i in range(max(len(a), len(b)))
                     if i >= len(a) or i >= len(b) or a[i] != b[i])
            show = lambda l: " ".join(f"{d}:{s}" for d, s in l[r:r + 3]) or "(none)"
            examples.append(f"  {qid} from rank {r + 1}: old {show(a)} | new {show(b)}")
    differ = ids_differ + scores_differ
    failed |= differ > 0
    print(f"{algo}: {len(qids)} queries ({hits} hits at the new commit); top-10 identical "
          f"(ids, order, scores to 17 digits): {same}; differing: {differ} "
          f"(ids or order {ids_differ}, scores only {scores_differ})")
    for e in examples:
        print(e)
print("RESULT:", "differ" if failed else "identical")
sys.exit(1 if failed else 0)
EOF
}

same_results() {
  [[ "$queries" =~ ^[1-9][0-9]*$ ]] || die "--queries with --against is a number of queries, got '$queries'"
  [[ "$corpus" =~ ^(synth-[0-9]+[km]?|gcide(-[0-9]+[km]?)?)$ ]] || die "--corpus '$corpus' is not one gen_corpus.py makes"
  local old new
  old=$(git -C "$root" rev-parse --verify "$against^{commit}" 2>/dev/null) || die "--against '$against' is not a commit"
  new=$(git -C "$root" rev-parse --verify "$new_rev^{commit}" 2>/dev/null) || die "--new '$new_rev' is not a commit"
  mkdir -p "$abdir/corpora"
  local py; py=$(python_with_numpy)
  echo "[ab] corpus $corpus and $queries queries under $abdir/corpora" >&2
  nice -n 10 "$py" "$root/benchmarks/gen_corpus.py" --out "$abdir/corpora" \
    --corpus "$corpus" --queries "$queries" > "$abdir/gen.log" ||
    { tail -5 "$abdir/gen.log" >&2; die "gen_corpus.py failed"; }
  local tsv="$abdir/corpora/$corpus.tsv" qf="$abdir/corpora/$corpus.q$queries.tsv"
  local sha bin algo run
  local -a dumps=()
  for sha in "$old" "$new"; do
    if ! git -C "$root" diff --quiet "$sha" HEAD -- benchmarks/gen_corpus.py; then
      echo "[ab] note: gen_corpus.py differs at ${sha:0:12}; both commits get this checkout's corpus and queries" >&2
    fi
    echo "[ab] ${sha:0:12}: building skilldb_bench" >&2
    bin=$(build_bench "$sha")
    run="$abdir/run-${sha:0:12}"
    mkdir -p "$run"
    echo "[ab] ${sha:0:12}: indexing $corpus" >&2
    nice -n 10 "$bin" build --corpus "$tsv" --index "$run/index" --out "$run/build.json" \
      > "$run/build.log" 2>&1 || { tail -3 "$run/build.log" >&2; die "indexing at ${sha:0:12} failed"; }
    for algo in ${algorithms//,/ }; do
      [[ "$algo" =~ ^(maxscore|wand)$ ]] || die "--algorithms takes maxscore and wand, got '$algo'"
      echo "[ab] ${sha:0:12}: searching ($algo)" >&2
      SKILLDB_BENCH_ALGORITHM=$algo nice -n 10 "$bin" search --index "$run/index" \
        --corpus "$tsv" --queries "$qf" --out "$run/search-$algo.json" \
        --dump "$run/top10-$algo.tsv" --threads 1 --warmup 0 --warmup-seconds 0 \
        --min-qps-seconds 0 > "$run/search-$algo.log" 2>&1 ||
        { tail -3 "$run/search-$algo.log" >&2; die "search at ${sha:0:12} ($algo) failed"; }
      dumps+=("$algo=$run/top10-$algo.tsv")
    done
  done
  echo "old $old $(git -C "$root" log -1 --format='%cs %s' "$old" | cut -c1-80)"
  echo "new $new $(git -C "$root" log -1 --format='%cs %s' "$new" | cut -c1-80)"
  echo "each commit indexed the corpus with its own skilldb_bench; scores compared as printed (17 digits)"
  compare_dumps "$abdir/corpora/$corpus.meta.json" "$qf" "${dumps[@]}"
}

root=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "$against" ]; then
  [ ${#bins[@]} = 0 ] && [ -z "$index" ] || die "--against takes neither --index nor binaries"
  [ -n "$queries" ] || queries=2000
  same_results
  exit $?
fi

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
