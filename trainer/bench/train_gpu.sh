#!/usr/bin/env bash
# trainer/ on the GPU machine (torch wheel with CUDA, no RocksDB, SQLite or
# ICU): builds the trainer's core and learner standalone (trainer/CMakeLists
# builds models/ and the API layer itself), then
#   1. the core tests, the learner tests on cpu and on cuda (bf16 autocast),
#      the two-process gloo test (when the wheel has gloo headers);
#   2. the learner bench on a randomly initialized Qwen2-0.5B-shaped
#      checkpoint (made here with transformers; the fixture's tokenizer):
#      training tokens/s at batch 16 x (256 + 256) with bf16 autocast and in
#      fp32, and generation tokens/s through the shared backbone.
# The RL loop itself (rl_loop.cc, skilldb-ml train) needs the library
# (RocksDB) and the rollout store (SQLite), which this machine lacks: it is
# not built here (see trainer/README.md, "On the H200").
# Results under $OUT (default /tmp/skilldb-trainer-gpu); a summary last.
#
#   bash models/bench/prepare_deps.sh        # on the build machine, once
#   bash trainer/bench/train_gpu.sh [--quick]
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${OUT:-/tmp/skilldb-trainer-gpu}"
BUILD="${BUILD:-$ROOT/build-trainer-gpu}"
JOBS="${JOBS:-$(nproc)}"
STEPS=3
if [ "${1:-}" = "--quick" ]; then STEPS=1; fi
mkdir -p "$OUT"
stamp() { echo "[$(date +%H:%M:%S) +${SECONDS}s] $*"; }
PY="$(command -v python3)"

stamp "environment"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())'
} > "$OUT/environment.txt" 2>&1
cat "$OUT/environment.txt"

stamp "build trainer/ standalone"
TORCH_PREFIX="$("$PY" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
export TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}"
GEN=()
command -v ninja > /dev/null && GEN=(-G Ninja)
if ! { cmake -S "$ROOT/trainer" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
         -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" -DSKILLDB_DEPS_DIR="$ROOT/.verify-deps" -DSKILLDB_BUILD_BENCHMARKS=ON \
         > "$OUT/configure.log" 2>&1 &&
       cmake --build "$BUILD" -j "$JOBS" --target trainer_core_test trainer_learner_test \
         trainer_learner_bench trainer_dist_test > "$OUT/build.log" 2>&1; }; then
  echo "build failed; tail of the logs:"; tail -n 30 "$OUT/configure.log" "$OUT/build.log"
  exit 1
fi
grep -i "trainer:" "$OUT/configure.log"

stamp "core tests"
"$BUILD/trainer_core_test" > "$OUT/core_test.txt" 2>&1; echo "core: rc=$?"; tail -3 "$OUT/core_test.txt"
stamp "learner tests on cpu"
"$BUILD/trainer_learner_test" > "$OUT/learner_test_cpu.txt" 2>&1; echo "learner cpu: rc=$?"; tail -3 "$OUT/learner_test_cpu.txt"
stamp "learner tests on cuda"
SKILLDB_TRAINER_TEST_DEVICE=cuda "$BUILD/trainer_learner_test" > "$OUT/learner_test_cuda.txt" 2>&1
echo "learner cuda: rc=$?"; grep -E "ERROR|MESSAGE|test cases" "$OUT/learner_test_cuda.txt" | head -20
stamp "two gloo processes"
if grep -q "no gloo headers" "$OUT/configure.log"; then
  echo "dist: skipped (this libtorch ships no gloo headers; the CPU machine's test runs it)"
else
  timeout 120 "$BUILD/trainer_dist_test" > "$OUT/dist_test.txt" 2>&1; echo "dist: rc=$?"; tail -3 "$OUT/dist_test.txt"
fi

stamp "benchmark checkpoint (random Qwen2-0.5B shape, fixture tokenizer)"
CKPT="$OUT/qwen2-0.5b-random"
"$PY" - "$ROOT/models/testdata/qwen2-tiny" "$CKPT" <<'PYEOF' > "$OUT/checkpoint.txt" 2>&1
import json, shutil, sys, torch, transformers
src, dst = sys.argv[1], sys.argv[2]
cfg = transformers.Qwen2Config(hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
    num_attention_heads=14, num_key_value_heads=2, vocab_size=151936,
    max_position_embeddings=4096, tie_word_embeddings=True, rope_theta=1000000.0,
    eos_token_id=1026, pad_token_id=1024)
torch.manual_seed(0)
m = transformers.Qwen2ForCausalLM(cfg).to(torch.float32)
m.save_pretrained(dst, safe_serialization=True)
for f in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "generation_config.json"):
    shutil.copy(f"{src}/{f}", f"{dst}/{f}")
print("parameters", sum(p.numel() for p in m.parameters()))
PYEOF
cat "$OUT/checkpoint.txt"

stamp "learner bench"
for mode in bf16 fp32; do
  extra=(); [ "$mode" = fp32 ] && extra=(--no-autocast)
  timeout 300 "$BUILD/trainer_learner_bench" --model "$CKPT" --device cuda --batch 16 \
    --prompt-len 256 --completion-len 256 --micro-batch 8 --steps "$STEPS" \
    --gen-rows 64 --gen-tokens 128 "${extra[@]}" > "$OUT/bench_$mode.json" 2> "$OUT/bench_$mode.err"
  echo "$mode: rc=$?"; cat "$OUT/bench_$mode.json"; tail -3 "$OUT/bench_$mode.err"
done
stamp "done"
