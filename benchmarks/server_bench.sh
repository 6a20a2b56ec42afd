#!/usr/bin/env bash
# The server's benchmarks (README, "Server"): query QPS and p50/p99 through
# `skilldb serve` at 1, 16 and 64 concurrent clients (server_load on
# loopback, SECONDS each) against the same queries in process (QueryBatch
# and per-query latency, 16 threads); proposals per second through the
# durable queue; the Python binding's overhead per query.
# Usage: benchmarks/server_bench.sh [SECONDS] [OUT.jsonl]
# Library: the seed library (data/seed); queries: data/relevance/queries.jsonl.
# Measurements, not tests: nothing here is in ctest or CI.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-10}"
out="${2:-$root/build/server_bench.jsonl}"
build="$(bash "$root/scripts/build.sh" skilldb_cli server_load skilldb_python | tail -n 1)"
work="$(mktemp -d)"
trap 'kill "${server_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
cli="$build/cli/skilldb"
for f in "$root"/data/seed/[0-9]*.jsonl; do
  "$cli" --db "$work/lib" import "$f" >/dev/null
done
queries="$root/data/relevance/queries.jsonl"
: > "$out"
start_server() {  # start_server DB ARGS...: sets url and server_pid
  local db="$1"
  shift
  "$cli" --db "$db" --json serve --listen 127.0.0.1:0 --quiet "$@" > "$work/serve.json" &
  server_pid=$!
  for _ in $(seq 100); do
    [[ -s "$work/serve.json" ]] && break
    sleep 0.1
  done
  url="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["url"])' "$work/serve.json")"
}
stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid" || true
  server_pid=
}

start_server "$work/lib" --read-only --refresh-ms 0 --threads 80
for clients in 1 16 64; do
  echo "server_bench: http, $clients clients, ${seconds}s" >&2
  "$build/server/server_load" http "$url" "$clients" "$seconds" "$queries" | tee -a "$out"
done
stop_server
for threads in 1 16; do
  echo "server_bench: in process, $threads threads, ${seconds}s" >&2
  "$build/server/server_load" inprocess "$work/lib" "$threads" "$seconds" "$queries" | tee -a "$out"
done

cp -r "$work/lib" "$work/queue-lib"
start_server "$work/queue-lib" --verifier none
echo "server_bench: 500 proposals through the queue" >&2
"$build/server/server_load" proposals "$url" 8 500 | tee -a "$out"
stop_server

echo "server_bench: Python binding overhead" >&2
PYTHONPATH="$build/python" /usr/bin/python3 "$root/benchmarks/python_overhead.py" \
  "$work/lib" 5000 | tee -a "$out"
echo "server_bench: results in $out" >&2
