#!/usr/bin/env bash
# The RL loop on the GPU machine (Ubuntu 24.04 with the torch wheel, no
# RocksDB, SQLite, ICU): builds the whole tree's skilldb-ml (the CLI's libtorch companion, which
# runs `train`) against the
# wheel's libtorch (CUDA) and the Debian libraries packed by
# trainer/bench/prepare_loop_deps.sh, then runs the per-agent ablation of
# trainer/bench/ablation_host.sh with the CUDA verifier backend and the
# learner on the GPU (bf16 autocast): TRLOO + per-agent normalization,
# TRLOO without normalization, a batch-mean baseline with per-agent
# normalization; then `skilldb-ml train report` of the first run.
#
#   bash trainer/bench/prepare_loop_deps.sh     # on the build machine
#   OUT=... bash trainer/bench/train_loop_gpu.sh  # there (carry .loop-deps.tar.xz, .verify-deps)
#
# ABLATION=coevolution runs trainer/bench/coevolution_ablation.sh (the
# skill-library arms) instead of the per-agent ablation.
# BUILD_ONLY=1 stops after the build; RUNS picks the ablation's runs (see
# ablation_host.sh), STEPS their length and SEEDS their seeds, so the work
# fits the device's 10-minute calls.
# Results under $OUT (default /tmp/skilldb-loop-gpu): the build's logs, one
# JSONL of step lines per run, the report of the first run, summary.txt.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${OUT:-/tmp/skilldb-loop-gpu}"
BUILD="${BUILD:-$ROOT/build-loop-gpu}"
DEPS="${DEPS:-$BUILD/deps}"
JOBS="${JOBS:-$(nproc)}"
mkdir -p "$OUT"
stamp() { echo "[$(date +%H:%M:%S) +${SECONDS}s] $*"; }
PY="$(command -v python3)"

SYS="$DEPS/root"
LIB="$SYS/usr/lib/x86_64-linux-gnu"
# A second call on a warm machine keeps the build folder: the unpacked
# libraries (and the build) are reused, so a call can build and the next run.
if [ ! -e "$DEPS/.unpacked" ]; then
  stamp "unpack the Debian libraries"
  rm -rf "$DEPS" && mkdir -p "$DEPS"
  tar -C "$DEPS" -xJf "$ROOT/.loop-deps.tar.xz" || { echo "no $ROOT/.loop-deps.tar.xz"; exit 1; }
  # CMake and pkg-config files name /usr: point them at the folder.
  find "$SYS" \( -name '*.cmake' -o -name '*.pc' \) -print0 |
    xargs -0 sed -i -e "s#\([\" =;(]\)/usr/#\1$SYS/usr/#g" -e "s#^prefix *= */usr *\$#prefix=$SYS/usr#"
  # Development links to runtimes not packed (or absolute into /lib): the
  # machine's own copy of the same library, found by its shorter names.
  find "$SYS" -type l | while read -r l; do
    t="$(readlink "$l")"
    case "$t" in /*) abs="$t" ;; *) abs="$(dirname "$l")/$t" ;; esac
    [ -e "$abs" ] && continue
    cand="$(basename "$t")"
    while :; do
      for d in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu; do
        if [ -e "$d/$cand" ]; then ln -sf "$d/$cand" "$l"; continue 3; fi
      done
      [[ "$cand" == *.so.* ]] || break
      cand="${cand%.*}"
    done
    echo "unresolved link $l -> $t"
  done
  touch "$DEPS/.unpacked"
fi
export PKG_CONFIG_PATH="$LIB/pkgconfig:$SYS/usr/share/pkgconfig"
export LD_LIBRARY_PATH="$LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
command -v pkg-config > /dev/null || echo "warning: no pkg-config on this machine"

stamp "configure and build skilldb-ml and the verifier workers"
TORCH_PREFIX="$("$PY" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
export TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}"
GEN=()
command -v ninja > /dev/null && GEN=(-G Ninja)
# A configure that failed half way is not reused.
[ -e "$BUILD/.configured" ] || rm -rf "$BUILD/CMakeCache.txt" "$BUILD/CMakeFiles"
if ! { cmake -S "$ROOT" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
         -DCMAKE_PREFIX_PATH="$TORCH_PREFIX;$SYS/usr" -DSKILLDB_WERROR=OFF \
         -DSKILLDB_BUILD_TESTS=OFF -DSKILLDB_BUILD_SHARED=OFF \
         > "$OUT/configure.log" 2>&1 && touch "$BUILD/.configured" &&
       cmake --build "$BUILD" -j "$JOBS" --target skilldb_cli_ml skilldb_verify_worker_cuda \
         skilldb_verify_worker_host > "$OUT/build.log" 2>&1; }; then
  echo "build failed; tail of the logs:"; tail -n 40 "$OUT/configure.log" "$OUT/build.log"
  exit 1
fi
grep -E "libtorch|trainer:|CUDA" "$OUT/configure.log" | head -8
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$PY" -c 'import torch; print("torch", torch.__version__)'; } > "$OUT/environment.txt" 2>&1

# libstdc++ must be the first needed library (models/CMakeLists.txt,
# skilldb_torch_executable: the wheel's libtorch_cpu.so exports copies of
# its symbols); should a toolchain reorder it, preload it and say so.
first_needed="$(readelf -d "$BUILD/cli/skilldb-ml" | awk '/NEEDED/ {print $NF; exit}')"
echo "skilldb-ml's first needed library: $first_needed" >> "$OUT/environment.txt"
if [[ "$first_needed" != *libstdc++* ]]; then
  LD_PRELOAD="$(ldconfig -p | awk '/libstdc\+\+\.so\.6 .*x86-64/ {print $NF; exit}')"
  export LD_PRELOAD
  echo "warning: libstdc++ is not skilldb-ml's first needed library; preloading $LD_PRELOAD" |
    tee -a "$OUT/environment.txt"
fi
[ "${BUILD_ONLY:-0}" = 1 ] && { stamp "built"; exit 0; }
if [ "${ABLATION:-agents}" = coevolution ]; then
  # The skill-library ablation (coevolution_ablation.sh: co-evolving,
  # frozen, no skills), SEEDS and STEPS as given; $OUT gets the step lines
  # and logs in coevolution.tar.gz (the report is made on the host).
  stamp "the skill-library ablation, CUDA verifier, learner on the GPU"
  # RUN_TIMEOUT bounds the runs so that what ran is packed before the
  # device call's own limit.
  DEMO_ARGS="--backend cuda --device cuda ${DEMO_ARGS:-}" SEEDS="${SEEDS:-3 4}" \
    STEPS="${STEPS:-12}" PYTHON="$PY" timeout "${RUN_TIMEOUT:-3600}" \
    bash "$ROOT/trainer/bench/coevolution_ablation.sh" "$BUILD" "$BUILD/coevolution" |
    tee -a "$OUT/summary.txt"
  # Cut by RUN_TIMEOUT, the script printed no summary: the runs so far
  # (the last one cut short, and named so) are summarized here.
  if [ "${PIPESTATUS[0]}" = 124 ]; then
    echo "RUN_TIMEOUT (${RUN_TIMEOUT:-3600} s) cut the ablation; the runs so far:" | tee -a "$OUT/summary.txt"
    "$PY" "$ROOT/trainer/tools/ablation_summary.py" "$BUILD/coevolution" "${SEEDS:-3 4}" \
      "${ARMS:-coevolve frozen none}" | tee -a "$OUT/summary.txt"
  fi
  mkdir -p "$OUT/coevolution"
  for f in "$BUILD"/coevolution/*.jsonl "$BUILD"/coevolution/*.err; do
    [ -e "$f" ] && cp "$f" "$OUT/coevolution/"
  done
  for d in "$BUILD"/coevolution/seed-*/*/; do
    [ -e "$d/steps.jsonl" ] || continue
    name="$(basename "$(dirname "$d")").$(basename "$d")"
    mkdir -p "$OUT/coevolution/$name"
    cp "$d/steps.jsonl" "$d"/events.out.tfevents.* "$OUT/coevolution/$name/" 2> /dev/null || true
  done
  tar -C "$OUT" -czf "$OUT/coevolution.tar.gz" coevolution && rm -rf "$OUT/coevolution"
  stamp "done"
  exit 0
fi
stamp "the per-agent ablation, CUDA verifier, learner on the GPU"
# The runs (checkpoints, libraries, rollout stores) stay in the build folder;
# $OUT gets their step lines, logs and the report, packed into one
# ablation.tar.gz (the device brings back at most 8 files). SEEDS repeats the
# ablation per seed (default: 3).
for seed in ${SEEDS:-3}; do
  RUNS_DIR="$BUILD/ablation/seed-$seed"
  stamp "seed $seed"
  SEED="$seed" DEMO_ARGS="--backend cuda --device cuda ${DEMO_ARGS:-}" STEPS="${STEPS:-12}" \
    bash "$ROOT/trainer/bench/ablation_host.sh" "$BUILD" "$RUNS_DIR" | tee -a "$OUT/summary.txt"
  mkdir -p "$OUT/ablation/seed-$seed"
  cp "$RUNS_DIR"/*.jsonl "$RUNS_DIR"/*.err "$OUT/ablation/seed-$seed/" 2> /dev/null
  for f in "$RUNS_DIR"/loo_per_agent/*.png "$RUNS_DIR"/loo_per_agent/*.html; do
    [ -e "$f" ] && cp "$f" "$OUT/ablation/seed-$seed/"
  done
done
tar -C "$OUT" -czf "$OUT/ablation.tar.gz" ablation && rm -rf "$OUT/ablation"
stamp "done"
