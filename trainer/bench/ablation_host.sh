#!/usr/bin/env bash
# The per-agent ablation on the host backend: three `skilldb train demo`
# runs with the same seed (TRLOO + per-agent normalization; TRLOO without
# normalization; batch-mean baseline + per-agent normalization), then the
# report of the first and a summary of mean policy reward over the first and
# last three steps of each. DEMO_ARGS adds arguments to every run (the GPU
# script passes "--backend cuda --device cuda").
#   bash trainer/bench/ablation_host.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:-$ROOT/build}"
OUT="${2:-/tmp/skilldb-trainer-ablation}"
B="$BUILD/trainer/skilldb_train"
SEED="${SEED:-3}"
STEPS="${STEPS:-12}"
rm -rf "$OUT" && mkdir -p "$OUT"
run() {
  local name="$1"; shift
  # shellcheck disable=SC2086  # DEMO_ARGS is a list of words
  "$B" demo --seed "$SEED" --steps "$STEPS" --turns 1 --out "$OUT/$name" ${DEMO_ARGS:-} "$@" \
    > "$OUT/$name.jsonl" 2> "$OUT/$name.err"
}
run loo_per_agent
run loo_none --normalization none
run batch_per_agent --baseline batch_mean
"$B" report "$OUT/loo_per_agent" --json
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
for name in ("loo_per_agent", "loo_none", "batch_per_agent"):
    steps = [json.loads(l) for l in open(f"{out}/{name}.jsonl") if '"step"' in l]
    r = [s["reward"]["policy"]["mean"] for s in steps]
    t = [s["time_s"]["total"] for s in steps]
    print(f"{name:16s} first3 {sum(r[:3])/3:.3f} last3 {sum(r[-3:])/3:.3f} "
          f"s/step {sum(t)/len(t):.2f} per-step {' '.join(f'{x:.2f}' for x in r)}")
PY
