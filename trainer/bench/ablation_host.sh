#!/usr/bin/env bash
# The per-agent ablation on the host backend: three `skilldb train demo`
# runs with the same seed (TRLOO + per-agent normalization; TRLOO without
# normalization; batch-mean baseline + per-agent normalization), then the
# report of the first and a summary of mean policy reward over the first and
# last three steps of each. DEMO_ARGS adds arguments to every run (the GPU
# script passes "--backend cuda --device cuda").
# RUNS (default "loo_per_agent loo_none batch_per_agent") picks the runs; the
# summary covers every run whose step lines are in OUT_DIR, and the report
# is made when the first run is among them. KEEP=1 keeps earlier runs' files.
#   bash trainer/bench/ablation_host.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:-$ROOT/build}"
OUT="${2:-/tmp/skilldb-trainer-ablation}"
B="$BUILD/cli/skilldb-ml"
SEED="${SEED:-3}"
STEPS="${STEPS:-12}"
RUNS="${RUNS:-loo_per_agent loo_none batch_per_agent}"
[ "${KEEP:-0}" = 1 ] || rm -rf "$OUT"
mkdir -p "$OUT"
run() {
  local name="$1"; shift
  # shellcheck disable=SC2086  # DEMO_ARGS is a list of words
  "$B" train demo --seed "$SEED" --steps "$STEPS" --turns 1 --out "$OUT/$name" ${DEMO_ARGS:-} "$@" \
    > "$OUT/$name.jsonl" 2> "$OUT/$name.err" ||
    echo "ablation_host.sh: run $name exited with $?" | tee -a "$OUT/$name.err" >&2
}
for name in $RUNS; do
  case "$name" in
    loo_per_agent) run loo_per_agent ;;
    loo_none) run loo_none --normalization none ;;
    batch_per_agent) run batch_per_agent --baseline batch_mean ;;
    *) echo "unknown run '$name' in RUNS (loo_per_agent, loo_none, batch_per_agent)" >&2; exit 1 ;;
  esac
done
[ -d "$OUT/loo_per_agent" ] && "$B" train report "$OUT/loo_per_agent" --json
python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
for name in ("loo_per_agent", "loo_none", "batch_per_agent"):
    if not os.path.exists(f"{out}/{name}.jsonl"):
        continue
    steps = [json.loads(l) for l in open(f"{out}/{name}.jsonl") if '"step"' in l]
    if not steps:
        print(f"{name:16s} no step lines (see {name}.err)")
        continue
    # A step whose rollouts all failed ends the run; partly failed ones count.
    r = [s["reward"].get("policy", {}).get("mean", 0.0) for s in steps]
    t = [s["time_s"]["total"] for s in steps]
    failed = sum(s.get("failed_rollouts", 0) for s in steps)
    print(f"{name:16s} steps {len(steps)} first3 {sum(r[:3])/len(r[:3]):.3f} "
          f"last3 {sum(r[-3:])/len(r[-3:]):.3f} s/step {sum(t)/len(t):.2f} "
          f"failed-rollouts {failed} per-step {' '.join(f'{x:.2f}' for x in r)}")
PY
