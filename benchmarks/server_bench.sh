#!/usr/bin/env bash
# The server's benchmarks (README, "Measured"): query QPS and p50/p99
# through `skilldb serve` at 1, 16 and 64 concurrent HTTP clients while a
# writer commits COMMITS_PER_S proposals a second through the server's
# queue, against the same queries in process (Query on 1, 16, 64 threads,
# and QueryBatch) while an in-process writer commits at the same rate the
# same way (Propose, replayed report, Commit). Each (mode, concurrency) runs
# REPS times, HTTP and in-process alternating, SECONDS each; the summary
# takes medians over the reps. Then proposals per second through the
# durable queue, and the Python binding's overhead per query.
# Usage: benchmarks/server_bench.sh [SECONDS] [COMMITS_PER_S] [REPS] [OUT_DIR]
#   defaults: 5 s, 10 commits/s, 3 reps, benchmarks/out/server-<UTC time>
# Library: the seed library (data/seed); queries: data/relevance/queries.jsonl
# (128). Loopback only. Measurements, not tests: nothing here is in ctest.
# Writes OUT_DIR/runs.jsonl (one line per run) and prints the summary
# (benchmarks/server_summary.py) on stdout.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-5}"
rate="${2:-10}"
reps="${3:-3}"
out="${4:-$root/benchmarks/out/server-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"
build="$(bash "$root/scripts/build.sh" skilldb_cli server_load skilldb_python | tail -n 1)"
work="$(mktemp -d)"
trap 'kill "${server_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
cli="$build/cli/skilldb"
load="$build/server/server_load"
"$cli" --db "$work/lib" init >/dev/null
for f in "$root"/data/seed/[0-9]*.jsonl; do
  "$cli" --db "$work/lib" import "$f" >/dev/null
done
queries="$root/data/relevance/queries.jsonl"
runs="$out/runs.jsonl"
: > "$runs"
# The machine: cores and load average at the start and the end (other
# processes' load shows in every figure).
{ echo "start $(date -u +%FT%TZ) $(git -C "$root" rev-parse --short HEAD) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"; } > "$out/machine.txt"
start_server() {  # start_server DB ARGS...: sets url and server_pid
  local db="$1"
  shift
  : > "$work/serve.json"
  "$cli" --db "$db" --json serve --listen 127.0.0.1:0 --quiet "$@" > "$work/serve.json" &
  server_pid=$!
  # The server prints its one JSON line once it listens.
  for _ in $(seq 300); do
    [[ -s "$work/serve.json" ]] && break
    sleep 0.1
  done
  url="$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["url"])' "$work/serve.json")"
}
stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid" || true
  server_pid=
}
http_run() {  # http_run CLIENTS REP
  start_server "$work/lib" --verifier none --threads 80
  echo "server_bench: rep $2, http, $1 clients, ${seconds}s, writer ${rate}/s" >&2
  { "$load" http "$url" "$1" "$seconds" "$queries" "$rate" || true; } |
    /usr/bin/python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); j["rep"]=int(sys.argv[1]); print(json.dumps(j))' "$2" >> "$runs"
  stop_server
}
inprocess_run() {  # inprocess_run THREADS REP
  echo "server_bench: rep $2, in process, $1 threads, ${seconds}s, writer ${rate}/s" >&2
  { "$load" inprocess "$work/lib" "$1" "$seconds" "$queries" "$rate" || true; } |
    /usr/bin/python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); j["rep"]=int(sys.argv[1]); print(json.dumps(j))' "$2" >> "$runs"
}
for rep in $(seq "$reps"); do
  for n in 1 16 64; do
    if (( rep % 2 )); then http_run "$n" "$rep"; inprocess_run "$n" "$rep"
    else inprocess_run "$n" "$rep"; http_run "$n" "$rep"; fi
  done
done

start_server "$work/lib" --verifier none
echo "server_bench: 500 proposals through the queue, 8 clients" >&2
"$load" proposals "$url" 8 500 >> "$runs"
stop_server

echo "server_bench: Python binding overhead" >&2
PYTHONPATH="$build/python" /usr/bin/python3 "$root/benchmarks/python_overhead.py" \
  "$work/lib" 2000 | /usr/bin/python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); j["mode"]="python"; print(json.dumps(j))' >> "$runs"
echo "end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"
echo "server_bench: runs in $runs" >&2
/usr/bin/python3 "$root/benchmarks/server_summary.py" "$runs"
