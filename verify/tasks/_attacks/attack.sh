#!/usr/bin/env bash
# Runs every attack candidate of this directory through the verifier and
# checks that each was contained (README.md says what that means for each).
#
#   verify/tasks/_attacks/attack.sh BENCH BACKEND OUTDIR
#
# BENCH is a built skilldb_verify_bench, BACKEND cuda or host. Writes, per
# attack, OUTDIR/<attack>.{cu|cc,txt,json} and OUTDIR/containment.json
# (attack, backend, outcome, findings, contained), and prints a table.
# Exit status 1 if any attack was not contained.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH="$1"; BACKEND="$2"; OUT="$3"
mkdir -p "$OUT"
TASK=softmax_rows_fp32
if [ "$BACKEND" = cuda ]; then EXT=cu; REF="$HERE/../$TASK/reference.cu"; else
  EXT=cc; REF="$HERE/../$TASK/reference.cc"; fi
rows=()
failed=0
for attack in ctor_write launch_write read_host_file fork_survivor socket include_host_file macro_bomb; do
  cand="$OUT/$attack.$EXT"
  { echo '#define launch skdb_ref_launch'; cat "$REF"; echo '#undef launch'
    cat "$HERE/$attack.cc"; } > "$cand"
  rm -f /tmp/skilldb-attack-ctor /tmp/skilldb-attack-launch /tmp/skilldb-attack-climb
  t0=$EPOCHREALTIME
  "$BENCH" verify --backend "$BACKEND" --task "$TASK" --candidate "$cand" --rounds 1 \
    --compile-memory-mib 2048 \
    --json "$OUT/$attack.json" > "$OUT/$attack.txt" 2>&1
  rc=$?
  secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')
  sleep 1
  findings=$(python3 -c 'import json,sys
try:
  j=json.load(open(sys.argv[1]))
  print(",".join(r.split("]")[0].lstrip("[") for r in j.get("reasons",[])) or "none")
except Exception as e: print("no-report")' "$OUT/$attack.json")
  contained=yes; why=""
  case "$attack" in
    ctor_write) [ -e /tmp/skilldb-attack-ctor ] && { contained=no; why="file written"; } ;;
    launch_write) { [ -e /tmp/skilldb-attack-launch ] || [ -e /tmp/skilldb-attack-climb ]; } &&
      { contained=no; why="file written"; } ;;
    read_host_file) { grep -q 'returned 77\|root:' "$OUT/$attack.txt" "$OUT/$attack.json"; } &&
      { contained=no; why="host file read"; } ;;
    fork_survivor) grep -lx skdb-attack-kid /proc/[0-9]*/comm > /dev/null 2>&1 &&
      { contained=no; why="child outlived"; } ;;
    socket) grep -q 'returned 7[89]' "$OUT/$attack.txt" && { contained=no; why="socket opened"; } ;;
    include_host_file) grep -q 'root:x:0' "$OUT/$attack.txt" "$OUT/$attack.json" &&
      { contained=no; why="host file in the log"; } ;;
    macro_bomb) grep -q 'resource_limit' <<< "$findings" || { contained=no; why="no resource verdict"; } ;;
  esac
  # No report: the verifier did not run the candidate; that proves nothing.
  [ "$findings" = no-report ] && { contained=unknown; why="no report (see $attack.txt)"; }
  [ "$contained" != yes ] && failed=1
  printf '%-18s %-5s contained=%-3s %6.1f s  findings=%s %s\n' "$attack" "$BACKEND" "$contained" \
    "$secs" "$findings" "$why"
  rows+=("{\"attack\":\"$attack\",\"backend\":\"$BACKEND\",\"contained\":\"$contained\",\"why\":\"$why\",\"findings\":\"$findings\",\"seconds\":$secs,\"exit\":$rc}")
done
( IFS=,; echo "[${rows[*]}]" ) > "$OUT/containment.json"
exit $failed
