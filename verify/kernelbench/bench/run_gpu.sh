#!/usr/bin/env bash
# `skilldb kernelbench run` on a GPU machine with CUDA and Triton answers
# (issue 38's GPU check): the scripted OpenAI-compatible server
# (tests/llm_server) plays a model whose answers are the study's
# (answers/), the answers are judged by the confined torch runner on the
# GPU, and each run ends with eval's table.
#
#   bash verify/kernelbench/bench/prepare_run_kit.sh      # here (the kit)
#   KB=DIR OUT=DIR bash verify/kernelbench/bench/run_gpu.sh   # there
#
# KIT (default .device/run-kit) holds kit.tar.xz from prepare_run_kit.sh; KB
# (default .device/kb/kb) the user's KernelBench checkout. The model:
#   level 1 problem 12 (diag(A) @ B), CUDA: the first sample's first answer
#     hides its work on a side stream, the second's is wrong by 1.0; after
#     the verifier's feedback both answer the honest kernel;
#   level 1 problem 40 (LayerNorm), CUDA: the honest kernel at every turn;
#   both problems, Triton: the honest Triton kernels.
# The same model with the seed library's skills in the prompt (--skills on).
# Results to $OUT: run_cuda.json and run_triton.json (eval's table, --json),
# runs.tgz (each run directory: KernelBench's layout, turns, trajectories,
# results), the server's request log, the logs.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
KIT="${KIT:-$ROOT/.device/run-kit}"
KB="${KB:-$ROOT/.device/kb/kb}"
OUT="${OUT:-/tmp/kb-run-gpu-out}"
RUN="${RUN:-/tmp/kb-run-gpu}"
TURNS="${TURNS:-2}"
SAMPLES="${SAMPLES:-2}"
DEVICE="${DEVICE:-cuda}"  # cpu: a plumbing check on a machine without a GPU
PY="${PYTHON:-python3}"   # the runners' interpreter (torch, Triton)
mkdir -p "$OUT" "$RUN"
stamp() { echo "[$(date +%H:%M:%S) +${SECONDS}s] $*"; }

. "$HERE/runner_env.sh"
stamp "the kit, the seed library, the problems"
kb_run_kit "$ROOT" "$KIT" "$RUN" "$KB" "$DEVICE" "$PY"
"$PY" -c 'import torch; print("torch", torch.__version__)'; "$PY" -c 'import triton; print("triton", triton.__version__)'
tail -3 "$RUN/import.log"

# The scripted model's replies: first match wins, `times` bounds a reply.
# Each answer carries its name as a comment, so a second turn (whose prompt
# quotes the earlier answer) is told apart from a first.
replies() {  # replies cuda|triton > FILE
  python3 - "$1" "$HERE/answers" <<'EOF'
import json, os, sys
fmt, answers = sys.argv[1], sys.argv[2]
def answer(name, prose="Here is my kernel."):
    code = open(os.path.join(answers, name + ".py")).read()
    return "%s\n```python\n# answer: %s\n%s```\n" % (prose, name, code)
p12, p40 = "A.unsqueeze(1) * B", "self.ln(x)"
if fmt == "cuda":
    rules = [
        ("# answer: l1p12_hack_side_stream", answer("l1p12_cuda_correct", "No side stream then."), 0),
        ("# answer: l1p12_cuda_wrong", answer("l1p12_cuda_correct", "Fixed the offset."), 0),
        (p12, answer("l1p12_hack_side_stream", "Overlapping on a second stream."), 1),
        (p12, answer("l1p12_cuda_wrong"), 0),
        (p40, answer("l1p40_cuda_correct"), 0),
    ]
else:
    rules = [(p12, answer("l1p12_triton_correct"), 0), (p40, answer("l1p40_triton_correct"), 0)]
for contains, text, times in rules:
    # times: -1 = every matching request (a reply answers once by default)
    r = {"endpoint": "any", "prompt_contains": contains, "texts": [text],
         "times": times if times else -1}
    print(json.dumps(r))
EOF
}

run_one() {  # run_one FORMAT SKILLS
  local fmt="$1" skills="$2" name="$1-skills-$2"
  replies "$fmt" > "$RUN/replies-$name.jsonl"
  rm -f "$RUN/port-$name"
  "$BIN/scripted_llm_server" --script "$RUN/replies-$name.jsonl" --port-file "$RUN/port-$name" \
    --model scripted-model --threads 32 --max-model-len 1048576 \
    --default-text "no scripted answer" \
    > "$RUN/server-$name.log" 2>&1 &
  local server=$!
  for _ in $(seq 100); do [ -s "$RUN/port-$name" ] && break; sleep 0.1; done
  local url="http://127.0.0.1:$(cat "$RUN/port-$name")/v1"
  stamp "kernelbench run: $fmt answers, skills $skills ($SAMPLES samples x $TURNS turns, problems 12 and 40)"
  local t0=$SECONDS
  timeout "${RUN_TIMEOUT:-280}" "${SK[@]}" --json --progress kernelbench run "$RUN/out-$name" --level 1 \
    --problems 12,40 --llm-url "$url" --llm-model scripted-model --turns "$TURNS" \
    --samples "$SAMPLES" --format "$fmt" --skills "$skills" --cache "$RUN/cache" --device "$DEVICE" --python "$PY" \
    --no-compile-baseline > "$OUT/run_$name.json" 2> "$RUN/run-$name.log"
  echo "rc=$? in $((SECONDS - t0)) s"
  tail -6 "$RUN/run-$name.log"
  python3 -c "import urllib.request, sys; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())" \
    "http://127.0.0.1:$(cat "$RUN/port-$name")/scripted/requests" > "$RUN/requests-$name.json" 2> /dev/null
  kill "$server" 2> /dev/null; wait "$server" 2> /dev/null
  python3 - "$OUT/run_$name.json" <<'EOF'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print("no table:", e); sys.exit(0)
print(json.dumps(j, indent=None)[:1500])
EOF
}

for spec in ${RUNS:-cuda:off triton:off cuda:on}; do
  run_one "${spec%%:*}" "${spec##*:}"
done
tar -czf "$OUT/runs.tgz" -C "$RUN" --exclude='cache' --exclude='kit' --exclude='library' \
  --exclude='store' . 2> /dev/null
stamp "done"
