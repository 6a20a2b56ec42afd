#!/usr/bin/env bash
# The scripted_llm_server executable in its CLI mode: it serves the replies
# of a JSONL script, takes more over /scripted/replies, reports its request
# log at /scripted/requests, and stops cleanly on SIGTERM.
# Usage: scripted_server_cli_test.sh PATH/TO/scripted_llm_server
set -euo pipefail
server_bin=$1
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT

cat > "$work/script.jsonl" <<'JSONL'
# a comment line
{"endpoint": "chat", "prompt_contains": "gemm", "text": "tile the K loop"}
{"endpoint": "chat", "status": 429, "headers": {"Retry-After": "0"}}
JSONL

"$server_bin" --script "$work/script.jsonl" --port-file "$work/port" \
  --model test/model > "$work/stdout" &
pid=$!
for _ in $(seq 1 200); do [[ -s "$work/port" ]] && break; sleep 0.05; done
[[ -s "$work/port" ]] || { echo "server did not start" >&2; exit 1; }
port=$(cat "$work/port")

/usr/bin/python3 - "$port" <<'PY'
import json, sys, urllib.request, urllib.error
base = f"http://127.0.0.1:{sys.argv[1]}"

def post(path, body, raw=False):
    data = body.encode() if raw else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())

chat = {"model": "test/model", "messages": [{"role": "user", "content": "fast gemm"}]}
status, answer = post("/v1/chat/completions", chat)
assert status == 200, status
assert answer["choices"][0]["message"]["content"] == "tile the K loop", answer
status, answer = post("/v1/chat/completions", chat)
assert status == 429, status
status, added = post("/scripted/replies", '{"text": "added live"}\n', raw=True)
assert added["added"] == 1, added
status, answer = post("/v1/chat/completions", chat)
assert answer["choices"][0]["message"]["content"] == "added live", answer
with urllib.request.urlopen(base + "/v1/models") as r:
    assert json.loads(r.read())["data"][0]["id"] == "test/model"
with urllib.request.urlopen(base + "/scripted/requests") as r:
    log = json.loads(r.read())
assert log["count"] == 4, log["count"]
assert log["by_endpoint"] == {"chat": 3, "models": 1}, log["by_endpoint"]
PY

kill -TERM "$pid"
wait "$pid"
grep -q "listening on http://127.0.0.1:$port/v1" "$work/stdout"
grep -q "stopped after 4 requests" "$work/stdout"
echo "scripted_llm_server CLI: ok"
