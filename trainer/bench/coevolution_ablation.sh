#!/usr/bin/env bash
# The skill-library ablation (issue 36): for each seed, one cold start
# (`train demo --coevolve --steps 0`), then three arms resumed from its
# checkpoint with the same seed and budget:
#   coevolve  the Summary Agent adds skills through verified insertion
#   frozen    the seed library as it is (--no-summary)
#   none      no skills at all: no retrieval, no Selection or Summary Agent
# then the report of each arm's first seed and, when /usr/bin/python3 has
# matplotlib, trainer/tools/report.py --ablation over all of them (mean
# policy reward per step per arm, the band min..max over seeds) and a
# summary line per arm and seed.
#   bash trainer/bench/coevolution_ablation.sh [BUILD_DIR] [OUT_DIR]
# SEEDS (default "3 4"), STEPS (12), RUN_GROUPS (8), SFT_EPOCHS (8) and
# DEMO_ARGS (added to every run: the GPU script passes "--backend cuda
# --device cuda") choose the budget; ARMS picks the arms.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:-$ROOT/build}"
OUT="${2:-/tmp/skilldb-coevolution}"
B="$BUILD/cli/skilldb-ml"
SEEDS="${SEEDS:-3 4}"
STEPS="${STEPS:-12}"
GROUPS_="${RUN_GROUPS:-8}"
SFT_EPOCHS="${SFT_EPOCHS:-8}"
ARMS="${ARMS:-coevolve frozen none}"
PY="${PYTHON:-/usr/bin/python3}"  # with matplotlib for the report
[ -x "$B" ] || { echo "coevolution_ablation.sh: no $B (bash scripts/build.sh skilldb_cli_ml)" >&2; exit 1; }
[ "${KEEP:-0}" = 1 ] || rm -rf "$OUT"
mkdir -p "$OUT"
stamp() { echo "[$(date +%H:%M:%S) +${SECONDS}s] $*" >&2; }
common() {
  # shellcheck disable=SC2086  # DEMO_ARGS is a list of words
  echo --coevolve --seed "$1" --groups "$GROUPS_" --turns 1 --sft-epochs "$SFT_EPOCHS" ${DEMO_ARGS:-}
}
for seed in $SEEDS; do
  stamp "seed $seed: cold start"
  # shellcheck disable=SC2046
  "$B" train demo $(common "$seed") --steps 0 --out "$OUT/seed-$seed/sft" \
    > "$OUT/seed-$seed.sft.jsonl" 2> "$OUT/seed-$seed.sft.err"
  for arm in $ARMS; do
    case "$arm" in
      coevolve) extra=() ;;
      frozen) extra=(--no-summary) ;;
      none) extra=(--no-skills) ;;
      *) echo "unknown arm '$arm' (coevolve, frozen, none)" >&2; exit 1 ;;
    esac
    stamp "seed $seed: $arm"
    # shellcheck disable=SC2046
    "$B" train demo $(common "$seed") "${extra[@]}" --steps "$STEPS" \
      --resume "$OUT/seed-$seed/sft/checkpoints/final" --out "$OUT/seed-$seed/$arm" \
      > "$OUT/seed-$seed.$arm.jsonl" 2> "$OUT/seed-$seed.$arm.err" ||
      echo "coevolution_ablation.sh: seed $seed arm $arm exited with $?" | tee -a "$OUT/seed-$seed.$arm.err" >&2
  done
done
"$PY" - "$OUT" "$SEEDS" "$ARMS" <<'PY'
import json, sys
out, seeds, arms = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
for arm in arms:
    for seed in seeds:
        try:
            steps = [json.loads(l) for l in open(f"{out}/seed-{seed}.{arm}.jsonl") if '"step"' in l]
        except OSError:
            steps = []
        if not steps:
            print(f"{arm:9s} seed {seed}: no step lines (see seed-{seed}.{arm}.err)")
            continue
        r = [s["reward"].get("policy", {}).get("mean", 0.0) for s in steps]
        k = max(1, len(r) // 4)
        added = sum(s.get("skills", {}).get("added", 0) for s in steps)
        rejected = sum(s.get("skills", {}).get("rejected", 0) for s in steps)
        used = sum(s.get("run_skills", {}).get("rollouts_with", 0) for s in steps)
        t = [s["time_s"]["total"] for s in steps]
        print(f"{arm:9s} seed {seed}: steps {len(steps)} first{k} {sum(r[:k])/k:.3f} "
              f"last{k} {sum(r[-k:])/k:.3f} added {added} rejected {rejected} "
              f"rollouts-with-run-skill {used} s/step {sum(t)/len(t):.2f} "
              f"per-step {' '.join(f'{x:.2f}' for x in r)}")
PY
if "$PY" -c 'import matplotlib' 2> /dev/null; then
  args=()
  for arm in $ARMS; do
    runs=""
    for seed in $SEEDS; do
      [ -s "$OUT/seed-$seed/$arm/steps.jsonl" ] && runs="$runs${runs:+,}$OUT/seed-$seed/$arm"
    done
    [ -n "$runs" ] && args+=("$arm=$runs")
  done
  "$PY" "$ROOT/trainer/tools/report.py" --ablation "$OUT/report" "${args[@]}" > "$OUT/report.json"
  first="$(echo $SEEDS | cut -d' ' -f1)"
  "$PY" "$ROOT/trainer/tools/report.py" "$OUT/seed-$first/coevolve" > /dev/null || true
else
  echo "coevolution_ablation.sh: no matplotlib for $PY: the report is left to the host" >&2
fi
stamp "done"
