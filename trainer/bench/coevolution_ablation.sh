#!/usr/bin/env bash
# The skill-library ablation (issue 36): for each seed, one cold start
# (`train demo --coevolve --steps 0`), then the arms resumed from its
# checkpoint with the same seed and budget:
#   coevolve  the Summary Agent adds skills through verified insertion
#   frozen    the seed library as it is (--no-summary)
#   none      no skills at all: no retrieval, no Selection or Summary Agent;
#             from its own cold start made with --no-skills (its prompts
#             show no skill, so a policy cold-started on prompts with skills
#             would be out of its distribution)
#   oracle    (not in the default ARMS) the seed library plus one skill that
#             states the parameters the host rewards most, frozen: what a
#             right skill is worth to the cold-started policy
# then a summary line per arm and seed and, when /usr/bin/python3 has
# matplotlib, trainer/tools/report.py --ablation over all of them (mean
# policy reward per step per arm, the band min..max over seeds) and the
# first seed's co-evolving run's report.
#   bash trainer/bench/coevolution_ablation.sh [BUILD_DIR] [OUT_DIR]
# SEEDS (default "3 4"), STEPS (12), RUN_GROUPS (8), SFT_EPOCHS (12) and
# DEMO_ARGS (added to every run: the GPU script passes "--backend cuda
# --device cuda") choose the budget; ARMS picks the arms. SFT_SEED=S makes
# one cold start (with seed S) that every seed's arms resume from, so that
# the seeds vary only the RL phase (the host's small run, to save cold
# starts).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:-$ROOT/build}"
OUT="${2:-/tmp/skilldb-coevolution}"
B="$BUILD/cli/skilldb-ml"
SEEDS="${SEEDS:-3 4}"
STEPS="${STEPS:-12}"
GROUPS_="${RUN_GROUPS:-8}"
SFT_EPOCHS="${SFT_EPOCHS:-12}"
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
# A cold start: cold_start SEED DIR [ARGS...] (once per folder).
cold_start() {
  local seed="$1" dir="$2"
  shift 2
  [ -e "$dir/checkpoints/final" ] && return 0
  stamp "seed $seed: cold start $*"
  # shellcheck disable=SC2046
  "$B" train demo $(common "$seed") "$@" --steps 0 --out "$dir" \
    > "$dir.jsonl" 2> "$dir.err"
}
# The oracle arm's seed library: the seed plus one skill stating the best
# host parameters, written the way the Summary Agent's cold start writes one.
ORACLE_SEED="$OUT/oracle-seed"
mkdir -p "$ORACLE_SEED"
cp "$ROOT"/data/seed/*.jsonl "$ORACLE_SEED/"
"$PY" - "$ORACLE_SEED/zz_oracle.jsonl" <<'PY'
import json, sys
params = "order=rows tile=256 unroll=4 tail=loop"
when = ("y[b, m] = sum over n of x[b, n, m]: a reduction along the middle "
        "dimension, float32 (torch.sum(x, dim=1)).")
skill = {"id": "oracle-row-order", "title": "Template parameters " + params,
         "summary": "Verified faster than the reference on this template.",
         "body": "## When to use\n" + when + "\n## How\nAnswer " + params +
                 "\n## Pitfalls\nOther values are refused.\n"
                 "## How to tell it worked\nA speedup in every round.",
         "code": params, "tags": ["template"], "ops": ["reduction"], "arch": []}
open(sys.argv[1], "w").write(json.dumps(skill) + "\n")
PY
for seed in $SEEDS; do
  sft_seed="${SFT_SEED:-$seed}"
  mkdir -p "$OUT/sft-$sft_seed"
  for arm in $ARMS; do
    env=()
    case "$arm" in
      coevolve) extra=(); sft="$OUT/sft-$sft_seed/skills" ;;
      frozen) extra=(--no-summary); sft="$OUT/sft-$sft_seed/skills" ;;
      oracle) extra=(--no-summary); sft="$OUT/sft-$sft_seed/skills"
              env=(SKILLDB_SEED_DIR="$ORACLE_SEED") ;;
      none) extra=(--no-skills); sft="$OUT/sft-$sft_seed/none" ;;
      *) echo "unknown arm '$arm' (coevolve, frozen, none, oracle)" >&2; exit 1 ;;
    esac
    if [ "$arm" = none ]; then
      cold_start "$sft_seed" "$sft" --no-skills
    else
      cold_start "$sft_seed" "$sft"
    fi
    stamp "seed $seed: $arm"
    # shellcheck disable=SC2046
    env "${env[@]}" "$B" train demo $(common "$seed") "${extra[@]}" --steps "$STEPS" \
      --resume "$sft/checkpoints/final" --out "$OUT/seed-$seed/$arm" \
      > "$OUT/seed-$seed.$arm.jsonl" 2> "$OUT/seed-$seed.$arm.err" ||
      echo "coevolution_ablation.sh: seed $seed arm $arm exited with $?" | tee -a "$OUT/seed-$seed.$arm.err" >&2
  done
done
"$PY" "$ROOT/trainer/tools/ablation_summary.py" "$OUT" "$SEEDS" "$ARMS"
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
