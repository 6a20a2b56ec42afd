#!/usr/bin/env bash
# The KernelBench loop test's margin over seeds: runs trainer_kb_loop_test
# once per seed, two at a time (as ctest -j2 does on a 2-core machine),
# and prints each run's mean policy reward of the first and last three
# steps and the difference (the test asks for at least 0.25).
#
#   bash trainer/bench/kb_loop_seeds.sh [BUILD]
#
# Environment: SEEDS ("1 2 3 4 5 6 7"), ROLLOUTS (a step's; the
# test's own when unset), KL (optim.kl_coef; the test's own when unset),
# OUT (a temporary folder: one log per seed). Rewards come from timings:
# each sweep differs.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:-$ROOT/build}"
TEST="$BUILD/trainer/trainer_kb_loop_test"
[ -x "$TEST" ] || { echo "no $TEST (scripts/build.sh trainer_kb_loop_test)" >&2; exit 1; }
OUT="${OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
export OPENBLAS_NUM_THREADS=1 TEST OUT
if [ -n "${ROLLOUTS:-}" ]; then export SKILLDB_KB_LOOP_GROUPS="$ROLLOUTS"; fi
if [ -n "${KL:-}" ]; then export SKILLDB_KB_LOOP_KL="$KL"; fi
# shellcheck disable=SC2016,SC2086
printf '%s\n' ${SEEDS:-1 2 3 4 5 6 7} | xargs -P2 -I{} sh -c \
  'SKILLDB_KB_LOOP_SEED={} "$TEST" > "$OUT/seed{}.log" 2>&1; echo "seed {} rc $?"' | sort -n -k2
echo "| seed | first 3 | last 3 | difference |"
echo "|---:|---:|---:|---:|"
for log in "$OUT"/seed*.log; do
  s="$(basename "$log" .log)"; s="${s#seed}"
  line="$(grep -o 'first 3 steps [0-9.e-]*, last 3 [0-9.e-]*' "$log" | tail -1)"
  if [ -z "$line" ]; then echo "| $s | - | - | (no result: $log) |"; continue; fi
  python3 -c "import sys; f, l = float(sys.argv[1]), float(sys.argv[2]); print('| %s | %.2f | %.2f | %+.2f |' % (sys.argv[3], f, l, l - f))" \
    "$(echo "$line" | awk '{print $4}' | tr -d ,)" "$(echo "$line" | awk '{print $7}')" "$s"
done | sort -t'|' -k2 -n
echo "logs: $OUT"
