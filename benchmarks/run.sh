#!/usr/bin/env bash
# Reruns the whole BM25 comparison (issue 3) and prints/plots it.
#
#   bash benchmarks/run.sh [--quick] [--sizes 10k,100k,1m] [--real gcide|gcide-20k|none]
#                          [--engines e1,e2,...] [--engines-1m e1,e2,...]
#                          [--queries N] [--search-reps N] [--no-install]
#                          [--keep-indexes]
#
# Engines: skilldb lucene tantivy pisa xapian sqlite-fts5 lucene++ bm25s.
# Default: synthetic 10k and 100k plus the full GCIDE corpus, 2000 queries,
# every engine. --quick: synthetic 10k plus a 20k GCIDE sample, 300 queries,
# short warm-up (a few minutes). 1M-document corpora run only the engines in
# --engines-1m (default: all but bm25s and SQLite FTS5; see below).
# --search-reps N: after every engine of a corpus has run once, run each
# engine's search phase N - 1 more times, in rounds over the engines (so a
# change in the machine's load falls on all of them); the report gives the
# median over the runs of each latency and QPS figure, and every run's p50.
#
# Steps: install what is missing (Debian packages, a venv from
# /usr/bin/python3 with benchmarks/requirements.txt), build the drivers in
# build-bench/ (target `benchmarks`, RelWithDebInfo: -O2 -g, the flags the
# project builds and tests with; symbols for profiles), generate the corpora (cached in
# benchmarks/out/corpora), then for each corpus and engine run `build` and
# `search` as separate, niced processes one after another, check skilldb's
# top-10 against the Python exact reference (corpora up to 200k docs), and
# write benchmarks/out/runs/<date>/results.{json,md,png}
# (benchmarks/out/latest points there).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/benchmarks
OUT=${SKILLDB_BENCH_OUT:-$BENCH/out}
BUILD=${SKILLDB_BENCH_BUILD:-$ROOT/build-bench}
VENV=$BENCH/.venv
PY=$VENV/bin/python

sizes=10k,100k
real=gcide
engines=skilldb,lucene,tantivy,pisa,xapian,sqlite-fts5,lucene++,bm25s
# At 1M: not bm25s (its build holds the corpus as Python lists, several GB)
# nor SQLite FTS5 (it scores every match: its query protocol took 415 s at
# 100k, ~10x that at 1M). Name them in --engines-1m to run them anyway.
engines_1m=skilldb,lucene,tantivy,pisa,xapian,lucene++
queries=2000
warmup=4000
warmup_s=3
# The JVM needs far more: measured on synth-10k, Lucene's p50 stays ~260 µs
# (C1 code) through 8 s of warm-up and drops to ~75 µs once C2 has compiled
# the hot loops (by 15 s). Native engines are steady after one pass.
jvm_warmup=20000
jvm_warmup_s=20
qps_s=3
reps=1
install=1
keep=0
phase_timeout=${SKILLDB_BENCH_TIMEOUT:-5400}
cmdline="bash benchmarks/run.sh $*"

while [ $# -gt 0 ]; do
  case "$1" in
    --quick) sizes=10k; real=gcide-20k; queries=300; warmup=1000; warmup_s=1; qps_s=1 ;;
    --sizes) sizes=$2; shift ;;
    --real) real=$2; shift ;;
    --engines) engines=$2; shift ;;
    --engines-1m) engines_1m=$2; shift ;;
    --queries) queries=$2; shift ;;
    --search-reps) reps=$2; shift
      [[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --search-reps needs a whole number >= 1, got '$reps'" >&2; exit 2; } ;;
    --no-install) install=0 ;;
    --keep-indexes) keep=1 ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

log() { printf '[run %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo

# ---- 1. install (idempotent: does nothing when everything is present) ----
if [ "$install" = 1 ]; then
  pkgs="build-essential cmake ninja-build pkg-config libsqlite3-dev
        librocksdb-dev libxapian-dev liblucene++-dev libboost-dev
        nlohmann-json3-dev libcli11-dev libicu-dev libstemmer-dev
        liblucene8-java default-jdk-headless dict-gcide python3-venv"
  missing=""
  for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
      || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    log "apt-get install:$missing"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
      --no-install-recommends $missing
  fi
  [ -x "$PY" ] || /usr/bin/python3 -m venv "$VENV"
  stamp=$VENV/.requirements.sha256
  want=$(sha256sum "$BENCH/requirements.txt" | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "pip install into $VENV"
    mkdir -p "$OUT"
    : > "$OUT/pip-failures.txt"
    # One package at a time, so a peer that does not install (PISA's wheels
    # exist only for some Pythons) costs only that peer.
    grep -v '^#' "$BENCH/requirements.txt" | while read -r req; do
      [ -n "$req" ] || continue
      "$VENV/bin/pip" install -q "$req" > "$OUT/pip.log" 2>&1 \
        || { log "pip install $req failed"; echo "$req: $(tail -1 "$OUT/pip.log")" >> "$OUT/pip-failures.txt"; }
    done
    [ -s "$OUT/pip-failures.txt" ] || echo "$want" > "$stamp"
  fi
fi

# ---- 2. build the drivers (out of the default build: target per driver) ----
log "configure + build drivers in $BUILD"
mkdir -p "$OUT"
nice cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSKILLDB_BUILD_TESTS=OFF -DSKILLDB_BUILD_CUDA=OFF -DSKILLDB_BUILD_BENCHMARKS=ON \
  > "$OUT/cmake.log" 2>&1 || { tail -20 "$OUT/cmake.log"; exit 1; }
declare -A target=([skilldb]=skilldb_bench [xapian]=xapian_bench
  [sqlite-fts5]=fts5_bench [lucene++]=lucenepp_bench [lucene]=lucene_bench)
declare -A build_failed=()
for e in "${!target[@]}"; do
  if ! nice cmake --build "$BUILD" --target "${target[$e]}" -j "$(nproc)" \
      > "$OUT/build-${target[$e]}.log" 2>&1; then
    build_failed[$e]="driver did not build: $(grep -m1 -E 'error|Error' "$OUT/build-${target[$e]}.log" | cut -c1-200)"
    log "WARNING: ${target[$e]} failed to build (see $OUT/build-${target[$e]}.log)"
  fi
done

# The time-travel benchmark (run by hand, see RESULTS.md) is built here too,
# so the binary in $BUILD always matches the engine being measured.
nice cmake --build "$BUILD" --target timetravel_bench -j "$(nproc)" \
  > "$OUT/build-timetravel_bench.log" 2>&1 \
  || log "WARNING: timetravel_bench failed to build (see $OUT/build-timetravel_bench.log)"

driver() {  # driver ENGINE -> the command line prefix
  case "$1" in
    skilldb) echo "$BUILD/benchmarks/skilldb_bench" ;;
    xapian) echo "$BUILD/benchmarks/xapian_bench" ;;
    sqlite-fts5) echo "$BUILD/benchmarks/fts5_bench" ;;
    lucene++) echo "$BUILD/benchmarks/lucenepp_bench" ;;
    lucene) echo "$BUILD/benchmarks/lucene_bench.sh" ;;
    tantivy|pisa|bm25s) echo "$PY $BENCH/py_bench.py $1" ;;
    *) echo "unknown engine $1" >&2; return 1 ;;
  esac
}

# ---- 3. the run directory and the machine it ran on ----
stamp_dir=$(date -u +%Y%m%d-%H%M%S)
RUN=$OUT/runs/$stamp_dir
mkdir -p "$RUN"
ln -sfn "runs/$stamp_dir" "$OUT/latest"
# The work tree is shared with the engine's authors: record the commit and
# whether the engine's sources differed from it when the drivers were built.
rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')
dirty=$(git -C "$ROOT" status --porcelain -- libskilldb retrieval 2>/dev/null | wc -l)
[ "$dirty" = 0 ] || rev="$rev + $dirty uncommitted engine file(s)"
"$PY" - "$RUN" "$cmdline" "$rev" <<'EOF'
import json, os, platform, subprocess, sys, datetime
def sh(c):
    try:
        return subprocess.run(c, shell=True, capture_output=True, text=True).stdout.strip()
    except Exception:
        return "?"
run_dir, cmd, rev = sys.argv[1], sys.argv[2], sys.argv[3]
cpu = sh("lscpu | sed -n 's/^Model name: *//p' | head -1")
mem = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
osr = sh(". /etc/os-release && echo $PRETTY_NAME")
def pip_v(p):
    return sh(f"{sys.executable} -m pip show {p} 2>/dev/null | sed -n 's/^Version: //p'") or "not installed"
versions = {
  "g++": sh("g++ -dumpfullversion"),
  "xapian": sh("dpkg-query -W -f='${Version}' libxapian30"),
  "sqlite": sh("dpkg-query -W -f='${Version}' libsqlite3-0"),
  "lucene (java)": sh("dpkg-query -W -f='${Version}' liblucene8-java"),
  "java": sh("java -version 2>&1 | head -1"),
  "lucene++": sh("dpkg-query -W -f='${Version}' liblucene++0v5"),
  "tantivy-py": pip_v("tantivy"), "pyterrier-pisa": pip_v("pyterrier-pisa"),
  "bm25s": pip_v("bm25s"), "numba": pip_v("numba"),
  "python": platform.python_version(),
  "skilldb commit": rev,
}
json.dump({"cpu": cpu, "nproc": os.cpu_count(), "mem_gb": mem, "os": osr,
           "kernel": platform.release(),
           "versions": ", ".join(f"{k} {v}" for k, v in versions.items())},
          open(os.path.join(run_dir, "machine.json"), "w"), indent=1)
json.dump({"command": cmd, "date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC")},
          open(os.path.join(run_dir, "run.json"), "w"), indent=1)
EOF

# ---- 4. corpora ----
corpora=()
IFS=, read -ra size_list <<< "$sizes"
for s in "${size_list[@]}"; do corpora+=("synth-$s"); done
[ "$real" = none ] || corpora+=("$real")

threads=$(nproc)
run_phase() {  # run_phase ENGINE PHASE CORPUS_DIR ARGS...
  local e=$1 phase=$2 rd=$3; shift 3
  local -a cmd
  read -ra cmd <<< "$(driver "$e")"
  local t0=$SECONDS rc=0
  # The machine is shared: keep the load average around each phase, so a
  # figure measured while others were compiling can be told apart.
  local load0; load0=$(cut -d' ' -f1 /proc/loadavg)
  nice -n 10 timeout "$phase_timeout" "${cmd[@]}" "$phase" "$@" \
    >> "$rd/$e.log" 2>&1 || rc=$?
  echo "$phase $load0 $(cut -d' ' -f1 /proc/loadavg)" >> "$rd/$e.load"
  if [ $rc -ne 0 ]; then
    local why="$phase failed (exit $rc)"
    [ $rc -eq 124 ] && why="$phase timed out after ${phase_timeout}s"
    echo "$why: $(grep -v '^\s*$' "$rd/$e.log" | tail -1 | cut -c1-200)" > "$rd/$e.status"
    log "  $e $phase: $why"
    return 1
  fi
  log "  $e $phase done in $((SECONDS - t0)) s"
}

search_phase() {  # search_phase ENGINE SUFFIX (uses c, tsv, qf, rd, idx)
  local e=$1 sfx=$2 w=$warmup ws=$warmup_s
  [ "$e" = lucene ] && { w=$jvm_warmup; ws=$jvm_warmup_s; }
  run_phase "$e" search "$rd" --corpus "$tsv" --index "$OUT/indexes/$c/$e" \
    --queries "$qf" --out "$rd/$e.search$sfx.json" \
    --dump "$rd/$e.top10$sfx.tsv" --threads "$threads" --warmup "$w" \
    --warmup-seconds "$ws" --min-qps-seconds "$qps_s"
}

for c in "${corpora[@]}"; do
  log "corpus $c"
  nice "$PY" "$BENCH/gen_corpus.py" --out "$OUT/corpora" --corpus "$c" \
    --queries "$queries" > "$OUT/gen-$c.log"
  tsv=$OUT/corpora/$c.tsv
  qf=$OUT/corpora/$c.q$queries.tsv
  rd=$RUN/$c
  mkdir -p "$rd"
  cp "$OUT/corpora/$c.meta.json" "$rd/corpus.json"
  list=$engines
  [[ "$c" == *-1m ]] && list=$engines_1m
  IFS=, read -ra elist <<< "$list"
  searched=()  # engines whose first search ran, for --search-reps
  for e in "${elist[@]}"; do
    if [ -n "${build_failed[$e]:-}" ]; then
      echo "${build_failed[$e]}" > "$rd/$e.status"; continue
    fi
    case "$e" in tantivy|pisa|bm25s)
      mod=$e; [ "$e" = pisa ] && mod=pyterrier_pisa
      if ! err=$("$PY" -c "import $mod" 2>&1); then
        echo "not installed/importable: $(echo "$err" | tail -1 | cut -c1-200)" > "$rd/$e.status"
        log "  $e skipped: not importable"; continue
      fi ;;
    esac
    idx=$OUT/indexes/$c/$e
    rm -rf "$idx" "$idx"-*
    mkdir -p "$(dirname "$idx")"
    if run_phase "$e" build "$rd" --corpus "$tsv" --index "$idx" \
         --out "$rd/$e.build.json"; then
      search_phase "$e" "" && searched+=("$e")
    fi
    [ "$keep" = 1 ] || [ "$reps" -gt 1 ] || rm -rf "$idx" "$idx"-*
  done
  for ((r = 2; r <= reps; r++)); do
    log "  search round $r of $reps"
    for e in "${searched[@]}"; do
      search_phase "$e" ".r$r" || continue
      # The same index and queries must give the same hits every time.
      cmp -s "$rd/$e.top10.tsv" "$rd/$e.top10.r$r.tsv" || \
        log "  WARNING: $e's top-10 in round $r differs from round 1"
    done
  done
  if [ "$keep" = 0 ] && [ "$reps" -gt 1 ]; then
    for e in "${elist[@]}"; do rm -rf "$OUT/indexes/$c/$e" "$OUT/indexes/$c/$e"-*; done
  fi
  n_docs=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['n_docs'])" "$rd/corpus.json")
  if [ "$n_docs" -le 200000 ] && [ -f "$rd/skilldb.top10.tsv" ]; then
    log "  exact check of skilldb against ref_bm25.py"
    nice "$PY" "$BENCH/ref_bm25.py" topk --corpus "$tsv" --queries "$qf" \
      --dump "$rd/ref.top10.tsv"
    "$PY" "$BENCH/ref_bm25.py" check --ref "$rd/ref.top10.tsv" \
      --got "$rd/skilldb.top10.tsv" --json "$rd/exact_check.json" >&2 || \
      log "  WARNING: skilldb disagrees with the exact reference on $c"
  fi
done

# ---- 5. report ----
"$PY" "$BENCH/report.py" "$RUN"
log "results: $RUN/results.md, $RUN/results.png, $RUN/results.json"
