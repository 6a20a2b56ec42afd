#!/usr/bin/env bash
# The throughput study (gpu_study.sh: this verifier with WORKERS workers
# and KernelBench's harness on the same answers) and then, in the time
# left of BUDGET seconds, one RL step's evaluations (step_bench.sh, its
# STEP_TIMEOUT set from what is left), in one device call, from the run kit
# (no build on the GPU machine):
#
#   bash verify/kernelbench/bench/prepare_kbwork.sh KB_GIT .device/kb   # here
#   bash verify/kernelbench/bench/prepare_run_kit.sh                    # here
#   OUT=DIR bash verify/kernelbench/bench/study_and_step.sh             # there
#     (carry .device/kb and .device/run-kit)
#
# Everything comes back in OUT/all.tgz (study/ and step/, as those scripts
# write them; a snapshot every 30 s until the end) and OUT/summary.txt
# (walls, answers a minute, step.json).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
OUT="${OUT:-/tmp/kb-study-step-out}"
BUDGET="${BUDGET:-570}"
RES="$(mktemp -d)"
export KIT="${KIT:-$ROOT/.device/run-kit}" KBW="${KBW:-$ROOT/.device/kb}"
mkdir -p "$OUT" "$RES/study" "$RES/step"
export RUN="${RUN:-/tmp/kb-study}"  # gpu_study.sh's work directory
# A call cut at its limit still brings back what was done: a snapshot of
# the results every 30 s, with the study's results and logs as they grow
# (one line per answer judged) and its caches' build records.
snapshot() {
  mkdir -p "$RES/study/live"
  cp "$RUN"/study/*.jsonl "$RUN"/study/*.log "$RES/study/live/" 2> /dev/null
  for c in "$RUN"/study/cache*; do
    [ -d "$c/builds" ] || continue
    mkdir -p "$RES/study/live/records-$(basename "$c")"
    cp "$c"/builds/*.json "$RES/study/live/records-$(basename "$c")/" 2> /dev/null
  done
  tar -czf "$OUT/.all.tgz" -C "$RES" . 2> /dev/null && mv "$OUT/.all.tgz" "$OUT/all.tgz"
}
(while sleep 30; do snapshot; done) &
snap=$!
# INTERFERENCE=1: first, on the idle GPU, what a runner's start-up does to
# an answer timed beside it (init_interference.py, about 70 s).
if [ "${INTERFERENCE:-0}" = 1 ]; then
  mkdir -p "$RES/interference"
  timeout 150 python3 "$HERE/init_interference.py" --out "$RES/interference" \
    > "$RES/interference/log.txt" 2>&1 || echo "init_interference failed: rc $?"
  rm -f "$RES/interference/init_interference_rows.json"
fi
WORKERS="${WORKERS:-4}" OURS_TIMEOUT="${OURS_TIMEOUT:-200}" OURS_KB=0 COMPILE_BASELINE=0 \
  OURS_WARM="${OURS_WARM:-0}" \
  HARNESS_TIMEOUT="${HARNESS_TIMEOUT:-230}" OUT="$RES/study" \
  bash "$HERE/gpu_study.sh" "${PHASES:-import,ours,harness}" 2>&1 | tee "$RES/study/study.log"
left=$((BUDGET - SECONDS - 45))  # the step's own set-up: the kit, the library, the import
if [ "$left" -ge 60 ]; then
  STEP_TIMEOUT="$left" KB="$KBW/kb" OUT="$RES/step" bash "$HERE/step_bench.sh" 2>&1 |
    tee "$RES/step/step.log"
else
  echo "no time left for the step ($left s)"
fi
{
  if [ -d "$RES/interference" ]; then
    echo "== interference"; cat "$RES/interference/init_interference.md" 2> /dev/null ||
      tail -5 "$RES/interference/log.txt"
  fi
  echo "== study"; cat "$RES/study/ours_wall.txt" 2> /dev/null
  python3 - "$RES/study/kb.json" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
    print("harness:", json.dumps({k: j.get(k) for k in
          ("answers", "build_wall_s", "eval_wall_s", "wall_s", "answers_per_minute", "workers")}))
except Exception as e:
    print("harness: no kb.json:", e)
PY
  for f in "$RUN"/study/ours*.jsonl; do  # where each run's seconds went
    [ -s "$f" ] && { echo "== split of $(basename "$f")"; python3 "$HERE/op_split.py" "$f"
      python3 "$HERE/round_drift.py" "$f"; python3 "$HERE/timeline.py" "$f"; }
  done
  echo "== step"; cat "$RES/step/step.json" 2> /dev/null
  cat "$RES/step/op_split.txt" 2> /dev/null
  cat "$RES/step/timeline.txt" 2> /dev/null
} | tee "$OUT/summary.txt"
kill "$snap" 2> /dev/null; wait "$snap" 2> /dev/null
snapshot
