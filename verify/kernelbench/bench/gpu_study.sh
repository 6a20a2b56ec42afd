#!/usr/bin/env bash
# The KernelBench study on a GPU machine: builds verify/ standalone, imports
# problems, runs `skilldb_kernelbench eval` (this verifier's protocol, then
# KernelBench's protocol reproduced) and KernelBench's own harness
# (kb_harness.py) on the answers in answers/. The agreement table is made
# afterwards, anywhere, from the JSON this writes (kb_agreement.py; see
# bench/README.md).
#
#   KBW=DIR OUT=DIR bash gpu_study.sh PHASES
#
# PHASES (comma separated, in this order when given together):
#   build     cmake -S KBW/src/verify (standalone, SKILLDB_DEPS_DIR=KBW/deps),
#             the kernelbench targets, -Werror first (its log says whether
#             that held), then without it if the machine's compiler warns
#   import    the study's problems (level1 12,40; level2 76), with the
#             degenerate-problem screen
#   ours      every answer through skilldb_kernelbench eval, this
#             verifier's protocol (OURS_TIMEOUT), then --protocol kernelbench
#             on the cached builds (OURS_KB_TIMEOUT; OURS_KB=0 skips it;
#             COMPILE_BASELINE=0 skips timing torch.compile; OURS_MAIN=0
#             skips the first; BUILD_JOBS sets --build-jobs, WORKERS
#             --workers, default 1; OURS_AGAIN_WORKERS=N runs the answers
#             once more with --workers N from a cold cache of its own,
#             bounded by OURS_AGAIN_TIMEOUT; OURS_WARM=1 runs them again
#             from the first run's cache without the answers' builds
#             (OURS_WARM_TIMEOUT; WARM_WORKERS its --workers, default
#             WORKERS; WARM_BUILD_JOBS="8 16" once per --build-jobs),
#             OURS_WARM=ab with and without the generic caller)
#   diag      where a Triton answer dies (triton_diag.py; the answer
#             alone through eval, unconfined and confined)
#   compile   the torch.compile baseline: the three study problems' honest
#             CUDA answers, builds cached by `ours` (COMPILE_TIMEOUT)
#   sample    a sample of levels 1 and 2 imported (IMPORT1, IMPORT2; default
#             1-20 and 1-10; IMPORT_JOBS runners at once, default 8), bounded
#             by IMPORT_TIMEOUT; then the store's list (what a cut import kept)
#   harness   KernelBench's harness on every answer (HARNESS_TIMEOUT)
#
# KBW (default .device/kb in the checkout) holds:
#   src/      a copy of this repository's api/ cmake/ verify/ (git archive)
#   deps/     nlohmann-json and doctest headers, doctest's CMake helpers
#   kb/       the user's KernelBench checkout (src/, KernelBench/level1-2)
#   whl/      wheels the machine lacks (pydantic, for KernelBench's package)
#   stubs/    stand-ins for KernelBench's LLM clients (openai, litellm,
#             dotenv): imported by its utils.py, never called by eval
# KIT=DIR (a folder with prepare_run_kit.sh's kit.tar.xz) runs the kit's
# `skilldb kernelbench` instead of building verify/ (no build phase).
# Results go to $OUT (at most 8 files: the device tool's limit).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$(cd "$HERE/../../.." && pwd)"
KBW="${KBW:-$SRC/..}"
KBW="$(cd "$KBW" && pwd)"
OUT="${OUT:-/tmp/kb-study-out}"
RUN="${RUN:-/tmp/kb-study}"
BUILD="${BUILD:-/tmp/kb-study-build}"
PHASES="${1:-build,import,ours}"
mkdir -p "$OUT" "$RUN"
has() { [[ ",$PHASES," == *",$1,"* ]]; }
stamp() { echo "[$(date +%H:%M:%S) +${SECONDS}s] $*"; }
now() { date +%s.%N; }

python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site "$KBW"/whl/*.whl >/dev/null 2>&1 || echo "wheels: none installed"
export PYTHONPATH="/tmp/site:$KBW/stubs:$KBW/kb/src${PYTHONPATH:+:$PYTHONPATH}"
. "$HERE/runner_env.sh"
if [ -n "${KIT:-}" ]; then
  # The run kit's `skilldb kernelbench` (prepare_run_kit.sh; the same code
  # as the standalone build): no build phase needed.
  [ -d "$RUN/kit" ] || tar -C "$RUN" -xJf "$KIT/kit.tar.xz" || { echo "no kit at $KIT"; exit 1; }
  export LD_LIBRARY_PATH="$RUN/kit/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  kb_runner_env "$SRC/verify/kernelbench/runner" "$RUN/kit/bin" "$RUN/store"
  # --progress: a line per answer judged, in the logs (a cut run shows how far it got).
  KBC=("$RUN/kit/bin/skilldb" --progress kernelbench)
  echo "kit $(cat "$RUN/kit/COMMIT")"
else
  kb_runner_env "$SRC/verify/kernelbench/runner" "$BUILD" "$RUN/store"
  KBC=("$BUILD/skilldb_kernelbench")
fi
stamp "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(nproc) cores"
python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)'
echo "source: $(cat "$SRC/COMMIT" 2>/dev/null), KernelBench $(cat "$KBW/kb/COMMIT" 2>/dev/null)"

if has build; then
  stamp "build: cmake -S verify (standalone), kernelbench targets"
  gen=(); command -v ninja > /dev/null && gen=(-G Ninja)
  targets=(--target skilldb_kernelbench --target skilldb_kb_launch --target skilldb_kb_sandbox)
  werror=ON
  { cmake -S "$SRC/verify" -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DSKILLDB_WERROR=ON \
      -DSKILLDB_DEPS_DIR="$KBW/deps" -DSKILLDB_BUILD_TESTS=OFF &&
    cmake --build "$BUILD" -j "$(nproc)" "${targets[@]}"; } > "$RUN/build.log" 2>&1 || {
    werror=OFF
    echo "-Werror build failed; warnings: $(grep -c 'warning:' "$RUN/build.log")"
    grep -m5 -A3 'error' "$RUN/build.log"
    cmake -S "$SRC/verify" -B "$BUILD" -DSKILLDB_WERROR=OFF >> "$RUN/build.log" 2>&1 &&
      cmake --build "$BUILD" -j "$(nproc)" "${targets[@]}" >> "$RUN/build.log" 2>&1 ||
      { echo "BUILD FAILED"; tail -30 "$RUN/build.log"; cp "$RUN/build.log" "$OUT/"; exit 1; }
  }
  echo "built with SKILLDB_WERROR=$werror; compiler warnings: $(grep -c 'warning:' "$RUN/build.log")"
  tail -1 "$RUN/build.log"
  "${KBC[@]}" --help | head -5
fi

# A run directory in KernelBench's generation layout from the manifest, and
# the map back to answer files.
gen_rundir() {  # gen_rundir DIR
  python3 - "$1" "$HERE/answers" <<'EOF'
import json, os, shutil, sys
out, answers = sys.argv[1], sys.argv[2]
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
samples, mapping = {}, []
for a in json.load(open(os.path.join(answers, "manifest.json")))["answers"]:
    key = (a["level"], a["problem"])
    s = samples.get(key, 0)
    samples[key] = s + 1
    shutil.copy(os.path.join(answers, a["file"]),
                os.path.join(out, "level_%d_problem_%d_sample_%d_kernel.py" % (key[0], key[1], s)))
    mapping.append({"file": a["file"], "level": key[0], "problem": key[1], "sample": s})
json.dump(mapping, open(os.path.join(os.path.dirname(out), "map.json"), "w"), indent=1)
EOF
}

if has import; then
  stamp "import: the study's problems"
  t0=$(now)
  scr=(--max-screen-bytes 20000000000)
  "${KBC[@]}" import "$KBW/kb/KernelBench" --level 1 --problems 12,40 "${scr[@]}" 2> "$RUN/import0.log" > /dev/null
  "${KBC[@]}" import "$KBW/kb/KernelBench" --level 2 --problems 76 "${scr[@]}" 2>> "$RUN/import0.log" > /dev/null
  echo "study problems imported in $(python3 -c "print(round($(now) - $t0, 1))") s"
fi

if has diag; then
  # Where a Triton answer dies (triton_diag.py), then the same answer alone
  # through the verifier, unconfined and confined, with the runner's log.
  stamp "diag: Triton answer in fresh interpreters"
  prob=$(ls "$KBW"/kb/KernelBench/level1/12_*.py)
  [ "${DIAG_PY:-1}" = 1 ] && timeout 300 python3 "$HERE/triton_diag.py" --problem "$prob" \
    --answer "$HERE/answers/l1p12_triton_correct.py" 2>&1 | tee "$RUN/diag.log"
  for mode in noconfine confine; do
    d="$RUN/diag-$mode"; rm -rf "$d"; mkdir -p "$d/run"
    cp "$HERE/answers/l1p12_triton_correct.py" "$d/run/level_1_problem_12_sample_0_kernel.py"
    extra=(); [ $mode = noconfine ] && extra=(--no-confine)
    stamp "diag: eval, $mode"
    timeout 120 "${KBC[@]}" eval "$d/run" --cache "$d/cache" --no-compile-baseline \
      "${extra[@]}" --json > "$d/out.json" 2> "$d/err.log"
    echo "rc=$?"; tail -5 "$d/err.log"
    python3 -c "import json,sys; j=json.load(open(sys.argv[1])); [print(r['verdict'], r.get('isolation',{}).get('notes'), r['error_message']) for r in j['results']]" "$d/out.json" 2>&1 | tee -a "$RUN/diag.log"
  done
fi

if has ours; then
  dir="$RUN/study"
  gen_rundir "$dir/run"
  cp "$dir/map.json" "$OUT/map.json"
  if [ "${OURS_MAIN:-1}" = 1 ]; then
  stamp "ours: skilldb_kernelbench eval (this verifier's protocol)"
  t0=$(now)
  nocb=(); [ "${COMPILE_BASELINE:-1}" = 0 ] && nocb=(--no-compile-baseline)
  jobs=(); [ -n "${BUILD_JOBS:-}" ] && jobs=(--build-jobs "$BUILD_JOBS")
  wk=(--workers "${WORKERS:-1}")
  timeout "${OURS_TIMEOUT:-300}" "${KBC[@]}" eval "$dir/run" --cache "$dir/cache" "${nocb[@]}" \
    "${jobs[@]}" "${wk[@]}" --results "$dir/ours.jsonl" --json > "$OUT/ours.json" 2> "$dir/ours.log"
  echo "rc=$? wall $(python3 -c "print(round($(now) - $t0, 1))") s, ${wk[*]}" | tee "$OUT/ours_wall.txt"
  tail -25 "$dir/ours.log"
  fi
  if [ "${OURS_WARM:-0}" != 0 ]; then
  # The same answers again from a copy of the cache that keeps what a
  # machine makes once (the precompiled headers, the generic caller, the
  # baselines' times) and drops the answers' own builds: the rate of a
  # machine that has judged before. OURS_WARM=ab runs it twice, with and
  # without the generic caller (--no-generic-caller), each from its own copy.
  # WARM_BUILD_JOBS="8 16" runs it once per --build-jobs value (each from
  # its own copy; "" keeps BUILD_JOBS's or the default).
  modes=(on); [ "$OURS_WARM" = ab ] && modes=(on off)
  wwk=(--workers "${WARM_WORKERS:-${WORKERS:-1}}")
  read -r -a wjobs <<< "${WARM_BUILD_JOBS:-}"
  [ "${#wjobs[@]}" -eq 0 ] && wjobs=("")
  for mode in "${modes[@]}"; do
  for wj in "${wjobs[@]}"; do
    tag="$mode${wj:+-j$wj}"
    c="$dir/cache-warm-$tag"; rm -rf "$c"; cp -a "$dir/cache" "$c"
    rm -rf "$c/builds" "$c/triton"
    find "$c/ext" -mindepth 1 -maxdepth 1 ! -name 'caller-*' -exec rm -rf {} +
    gc=(); [ "$mode" = off ] && gc=(--no-generic-caller)
    bj=("${jobs[@]}"); [ -n "$wj" ] && bj=(--build-jobs "$wj")
    stamp "ours: again, machine caches kept, answers' builds dropped, generic caller $mode ${bj[*]}"
    t0=$(now)
    timeout "${OURS_WARM_TIMEOUT:-150}" "${KBC[@]}" eval "$dir/run" --cache "$c" "${nocb[@]}" \
      "${bj[@]}" "${wwk[@]}" "${gc[@]}" --results "$dir/ours-warm-$tag.jsonl" --json \
      > "$OUT/ours_warm_$tag.json" 2> "$dir/ours-warm-$tag.log"
    echo "rc=$? wall $(python3 -c "print(round($(now) - $t0, 1))") s, ${wwk[*]} ${bj[*]}, warm, generic caller $mode" |
      tee -a "$OUT/ours_wall.txt"
    tail -5 "$dir/ours-warm-$tag.log"
  done
  done
  fi
  if [ -n "${OURS_AGAIN_WORKERS:-}" ]; then
  # The same answers again with another --workers, from an empty cache of
  # its own (builds too), so the two walls compare.
  stamp "ours: again with --workers $OURS_AGAIN_WORKERS, cold cache"
  t0=$(now)
  timeout "${OURS_AGAIN_TIMEOUT:-300}" "${KBC[@]}" eval "$dir/run" --cache "$dir/cache-again" \
    --no-compile-baseline --workers "$OURS_AGAIN_WORKERS" --results "$dir/ours-again.jsonl" \
    --json > "$OUT/ours_again.json" 2> "$dir/ours-again.log"
  echo "rc=$? wall $(python3 -c "print(round($(now) - $t0, 1))") s, --workers $OURS_AGAIN_WORKERS" | tee -a "$OUT/ours_wall.txt"
  tail -8 "$dir/ours-again.log"
  fi
  if [ "${OURS_KB:-1}" = 1 ]; then
  stamp "ours: --protocol kernelbench (builds cached)"
  t0=$(now)
  timeout "${OURS_KB_TIMEOUT:-150}" "${KBC[@]}" eval "$dir/run" --cache "$dir/cache" \
    --results "$dir/ours-kb.jsonl" --protocol kernelbench --no-compile-baseline --json \
    > "$OUT/ours_kb.json" 2> "$dir/ours-kb.log"
  echo "rc=$? wall $(python3 -c "print(round($(now) - $t0, 1))") s" | tee "$OUT/ours_kb_wall.txt"
  tail -8 "$dir/ours-kb.log"
  fi
  # A stopped run leaves its results files (ours.jsonl, ours-kb.jsonl): they
  # come back in logs.tgz, and a resumed eval rebuilds the report from them.
fi

if has compile; then
  # Speedups over torch.compile: the honest CUDA answer of each study
  # problem, builds from the cache of `ours`, the compile baseline timed.
  dir="$RUN/study"; d="$RUN/compile"; rm -rf "$d"; mkdir -p "$d/run"
  cp "$HERE/answers/l1p12_cuda_correct.py" "$d/run/level_1_problem_12_sample_0_kernel.py"
  cp "$HERE/answers/l1p40_cuda_correct.py" "$d/run/level_1_problem_40_sample_0_kernel.py"
  cp "$HERE/answers/l2p76_cuda_bias_relu.py" "$d/run/level_2_problem_76_sample_0_kernel.py"
  stamp "compile: the torch.compile baseline on three honest answers"
  t0=$(now)
  timeout "${COMPILE_TIMEOUT:-150}" "${KBC[@]}" eval "$d/run" --cache "$dir/cache" \
    --results "$d/compile.jsonl" --json > "$OUT/compile.json" 2> "$d/compile.log"
  echo "rc=$? wall $(python3 -c "print(round($(now) - $t0, 1))") s" | tee "$OUT/compile_wall.txt"
  tail -5 "$d/compile.log"
fi

if has sample; then
  stamp "import: a sample, level1 ${IMPORT1:-1-20}, level2 ${IMPORT2:-1-10}"
  scr=(--max-screen-bytes 20000000000)
  t0=$(now)
  ij=(--jobs "${IMPORT_JOBS:-8}")
  timeout "${IMPORT_TIMEOUT:-150}" bash -c "
    '$KB' import '$KBW/kb/KernelBench' --level 1 --problems ${IMPORT1:-1-20} ${scr[*]} ${ij[*]} --json > '$RUN/import1.json' 2> '$RUN/import1.log'
    echo level1 done at \$(date +%s.%N) > '$RUN/import1.done'
    '$KB' import '$KBW/kb/KernelBench' --level 2 --problems ${IMPORT2:-1-10} ${scr[*]} ${ij[*]} --json > '$RUN/import2.json' 2> '$RUN/import2.log'"
  echo "sample import rc=$? in $(python3 -c "print(round($(now) - $t0, 1))") s (started $t0; $(cat "$RUN/import1.done" 2>/dev/null))"
  tail -n 4 "$RUN/import1.log" "$RUN/import2.log"
  "${KBC[@]}" list --json > "$RUN/list.json" 2> /dev/null
  python3 - "$RUN" > "$OUT/import.json" <<'EOF'
import json, sys, os
out = {}
for n in ("import1", "import2", "list"):
    p = os.path.join(sys.argv[1], n + ".json")
    try:
        out[n] = json.load(open(p))
    except Exception as e:
        out[n] = {"error": "%s: %s" % (type(e).__name__, e)}
json.dump(out, sys.stdout, indent=1)
EOF
fi

if has harness; then
  dir="$RUN/study"
  stamp "KernelBench's harness (eval_kernel_against_ref, run_and_check settings)"
  timeout "${HARNESS_TIMEOUT:-500}" python3 "$HERE/kb_harness.py" --kb-root "$KBW/kb" \
    --manifest "$HERE/answers/manifest.json" --answers "$HERE/answers" --out "$OUT/kb.json" \
    --workers 12 --gpu-arch Hopper --build-root "$dir/kb-build" --no-ref-times \
    --partial "$OUT/kb_partial.json" > "$dir/kb.log" 2>&1
  echo "harness rc=$?"
  tail -25 "$dir/kb.log"
fi
# The builds' records of every cache (how each answer was built: split,
# binding, precompiled headers, the generic caller), without the builds.
for c in "$RUN"/study/cache*; do
  [ -d "$c/builds" ] || continue
  # (not named "cache*": the tar below leaves those out)
  mkdir -p "$RUN/study/records/of-$(basename "$c")"
  cp "$c"/builds/*.json "$RUN/study/records/of-$(basename "$c")/" 2> /dev/null
done
tar -czf "$OUT/logs.tgz" -C "$RUN" --exclude='*/cache' --exclude='*/cache-again' --exclude='*/cache-warm-*' --exclude='*/kb-build' --exclude='store' --exclude='./kit' \
  --exclude='*/run' . 2>/dev/null
stamp "done"
