#!/usr/bin/env bash
# One RL step's evaluations on a GPU machine (issue 38): Dr. Kernel's 14B
# recipe evaluates 16 prompts x 16 samples x 3 turns = 768 answers a step.
# Here a scripted OpenAI-compatible server (tests/llm_server) replays a
# fixed mix of the study's answers (answers/: correct, wrong, slow, fast,
# half precision, torch's own operators, a compile error and five hacks),
# each made distinct (`numbered`: the request's serial in a comment inside
# the kernel's source, so no two answers share a build, as a model's do
# not), and `skilldb kernelbench run` judges them with the confined torch
# runner, so generation is not what is measured.
#
#   bash verify/kernelbench/bench/prepare_run_kit.sh          # here (the kit)
#   KB=DIR OUT=DIR bash verify/kernelbench/bench/step_bench.sh     # there
#
# The step: level-1 problems 12 (diag(A) @ B) and 40 (LayerNorm) x SAMPLES
# (default 128) x TURNS (default 3) = 768 answers, WORKERS evaluators
# (default 4) on the GPU, CONCURRENCY trajectories at once (default 64).
# STEP_TIMEOUT (default 540 s) bounds the run: a step cut short reports
# the answers judged within it, and answers a minute from those (the
# fraction measured, and the extrapolation, are in step.json).
# Results to $OUT: step.json (wall, answers judged (every judged turn, from
# the run's progress lines: a cut step still counts them), answers a
# minute, GPU busy fraction, verdicts, medians of the per-answer split of
# every judged turn (turns.jsonl), the host's CPU busy share), table.json
# (kernelbench run's closing table, if it got there), gpu.csv (nvidia-smi
# every 250 ms), proc_cpu.json (CPU seconds by kind of process:
# proc_cpu.py; per judged answer in step.json), op_split.txt, timeline.txt (timeline.py: where the wall went), the logs in logs.tgz (with the builds' records
# and the run's turns.jsonl).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
KIT="${KIT:-$ROOT/.device/run-kit}"
KB="${KB:-$ROOT/.device/kb/kb}"
OUT="${OUT:-/tmp/kb-step-out}"
RUN="${RUN:-/tmp/kb-step}"
SAMPLES="${SAMPLES:-128}"
TURNS="${TURNS:-3}"
WORKERS="${WORKERS:-4}"
CONCURRENCY="${CONCURRENCY:-64}"
FORMAT="${FORMAT:-cuda}"
DEVICE="${DEVICE:-cuda}"  # cpu: a plumbing check (CUDA answers then fail to build)
PY="${PYTHON:-python3}"
mkdir -p "$OUT" "$RUN"
stamp() { echo "[$(date +%H:%M:%S) +${SECONDS}s] $*"; }

. "$HERE/runner_env.sh"
kb_run_kit "$ROOT" "$KIT" "$RUN" "$KB" "$DEVICE" "$PY"

# The mix: per problem, rules answering a fixed number of requests each
# (first match wins; `times` counts down), the last one every request left.
python3 "$HERE/step_replies.py" "$HERE/answers" "$FORMAT" "$SAMPLES" "$TURNS" \
  > "$RUN/replies.jsonl" || exit 1
rm -f "$RUN/port"
"$BIN/scripted_llm_server" --script "$RUN/replies.jsonl" --port-file "$RUN/port" \
  --model scripted-model --threads 64 --max-model-len 1048576 \
  --default-text "no scripted answer" > "$RUN/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do [ -s "$RUN/port" ] && break; sleep 0.1; done
url="http://127.0.0.1:$(cat "$RUN/port")/v1"

nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader,nounits \
  -lms 250 > "$OUT/gpu.csv" 2> /dev/null &
smi=$!
# The host's cores (builds, runners' start-ups, comparisons): /proc/stat's
# first line every 0.5 s, so step.json says whether the step was bound by
# the CPU rather than the GPU.
( while :; do echo "$(date +%s.%N) $(head -1 /proc/stat)"; sleep 0.5; done ) > "$OUT/cpu.txt" &
cpus=$!
# CPU seconds by kind of process (runners by role, compilers, the verifier).
python3 "$HERE/proc_cpu.py" "$OUT/proc_cpu.json" 0.5 &
procs=$!
stamp "kernelbench run: $FORMAT, 2 problems x $SAMPLES samples x $TURNS turns, $WORKERS workers"
t0=$(date +%s.%N)
timeout "${STEP_TIMEOUT:-540}" "${SK[@]}" --json --progress kernelbench run "$RUN/out" --level 1 \
  --problems 12,40 --llm-url "$url" --llm-model scripted-model --turns "$TURNS" \
  --samples "$SAMPLES" --format "$FORMAT" --skills off --cache "$RUN/cache" \
  --device "$DEVICE" --python "$PY" --no-compile-baseline --workers "$WORKERS" \
  --concurrency "$CONCURRENCY" > "$OUT/table.json" 2> "$RUN/run.log"
rc=$?
t1=$(date +%s.%N)
kill "$smi" "$server" "$cpus" "$procs" 2> /dev/null
wait "$smi" "$server" "$cpus" "$procs" 2> /dev/null
stamp "run rc=$rc"; tail -4 "$RUN/run.log"

python3 - "$RUN/out/skilldb_eval.jsonl" "$OUT/gpu.csv" "$t0" "$t1" "$rc" \
  "$((2 * SAMPLES * TURNS))" "$WORKERS" "$RUN/run.log" "$RUN/out/turns.jsonl" \
  "$OUT/cpu.txt" "$OUT/proc_cpu.json" > "$OUT/step.json" <<'EOF'
import collections, json, os, re, statistics, sys
results, gpu, t0, t1, rc, planned, workers, log, turns_file, cpu_file, procs_file = sys.argv[1:]
wall = float(t1) - float(t0)
# Every judged turn prints a progress line as it is judged; results (and
# skilldb_eval.jsonl) are written only when a trajectory ends, so a step
# cut by its bound is counted from these lines.
turns = collections.Counter()
try:
    for line in open(log, errors="replace"):
        m = re.match(r"level\d+/\d+ sample \d+ turn \d+: (.*)", line)
        if m and not m.group(1).startswith("generation failed"):
            v = m.group(1)
            turns["no answer" if v.startswith("no answer") else
                  "verifier error" if v.startswith("verifier error") else
                  re.split(r"[ ,\[]", v, maxsplit=1)[0]] += 1
except OSError:
    pass
judged_turns = sum(turns.values())
# The per-answer split: every judged turn's result (turns.jsonl, written
# as each is judged), else the results of the trajectories that ended.
def read_rows(path, pick):
    out = []
    try:
        for line in open(path, errors="replace"):
            try:
                r = pick(json.loads(line))
            except (ValueError, AttributeError, TypeError):
                continue
            if isinstance(r, dict):
                out.append(r)
    except OSError:
        pass
    return out
rows = read_rows(turns_file, lambda j: j["turn"].get("result"))
split_of = "judged turns"
if not rows:
    rows = read_rows(results, lambda j: j)
    split_of = "finished trajectories"
util = []
try:
    for line in open(gpu):
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 2 and parts[1].isdigit():
            util.append(int(parts[1]))
except OSError:
    pass
# The host's CPU: busy share of each 0.5 s interval (user..steal over all
# but idle and iowait), from /proc/stat's "cpu" line.
cpu = []
try:
    prev = None
    for line in open(cpu_file):
        f = line.split()
        if len(f) < 9 or f[1] != "cpu":
            continue
        v = [int(x) for x in f[2:]]
        idle, total = v[3] + v[4], sum(v[:8])
        if prev and total > prev[1]:
            cpu.append(1 - (idle - prev[0]) / (total - prev[1]))
        prev = (idle, total)
except (OSError, ValueError):
    pass
def med(key, sub=None):
    v = [r.get("times_ms", {}).get(key) for r in rows]
    v = [x for x in v if isinstance(x, (int, float))]
    return round(statistics.median(v), 1) if v else None
built = [r["times_ms"]["build"] for r in rows
         if not r.get("times_ms", {}).get("build_cached") and r.get("times_ms", {}).get("build")]
n = len(rows)
out = {
    "run_rc": int(rc), "wall_s": round(wall, 1), "answers_planned": int(planned),
    "answers_judged": judged_turns, "workers": int(workers),
    "answers_per_min": round(60 * judged_turns / wall, 2) if wall > 0 else None,
    "extrapolated_step_s": round(wall * int(planned) / judged_turns, 0) if judged_turns else None,
    "turn_verdicts": dict(turns),
    "trajectories_finished": sum(1 for _ in open(results)) if os.path.exists(results) else 0,
    "gpu_busy_fraction": round(sum(1 for u in util if u > 0) / len(util), 3) if util else None,
    "gpu_util_mean_pct": round(statistics.mean(util), 1) if util else None,
    "cpu_busy_mean_pct": round(100 * statistics.mean(cpu), 1) if cpu else None,
    "cpu_saturated_fraction": round(sum(1 for c in cpu if c > 0.9) / len(cpu), 3) if cpu else None,
    "verdicts_of_finished": dict(collections.Counter(
        r.get("verdict", "?") for r in read_rows(results, lambda j: j))),
    "median_ms": {k: med(k) for k in ("build", "reference", "correctness", "timing", "total")},
    "median_of": "%d %s" % (n, split_of),
    "builds_not_cached": len(built),
    "build_median_s_not_cached": round(statistics.median(built) / 1000, 1) if built else None,
    "notes": sorted({n for r in rows for n in r.get("notes", []) if n.startswith("CUDA sources")})[:20],
}
# The host's CPU seconds per judged answer, in all and by kind of process
# (proc_cpu.py: runners by role, the compilers together, the verifier).
try:
    procs = json.load(open(procs_file))
except (OSError, ValueError):
    procs = None
if procs and judged_turns:
    kinds = collections.Counter()
    for k, v in procs.get("by_kind", {}).items():
        kinds["compilers" if k.startswith("compiler:") else k] += v["cpu_s"]
    out["host_cpu_s_per_answer"] = round(procs["host_busy_cpu_s"] / judged_turns, 2)
    out["cpu_s_per_answer_by_kind"] = {
        k: round(v / judged_turns, 2) for k, v in kinds.most_common() if v / judged_turns >= 0.05}
print(json.dumps(out, indent=1))
EOF
cat "$OUT/step.json"
python3 "$HERE/op_split.py" "$RUN/out/turns.jsonl" > "$OUT/op_split.txt" 2>&1 || true
python3 "$HERE/timeline.py" "$RUN/out/turns.jsonl" > "$OUT/timeline.txt" 2>&1 || true
# The builds' records (time, precompiled header, split, the compiler's
# words for failures: bounded by the builder) and the turns judged so far.
tar -czf "$OUT/logs.tgz" -C "$RUN" run.log server.log import.log replies.jsonl cache/builds \
  out/turns.jsonl 2> /dev/null
stamp "done"
