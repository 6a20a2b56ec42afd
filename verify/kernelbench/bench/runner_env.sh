# Sourced by the bench scripts: where the KernelBench runners come from.
#   kb_runner_env RUNNER_DIR BIN_DIR [STORE]
# RUNNER_DIR holds kb_runner.py (verify/kernelbench/runner), BIN_DIR
# skilldb_kb_launch and libskilldb_kb_sandbox.so; STORE, when given, is the
# task store. NVLink multicast stays off (the device tool's advice).
kb_runner_env() {
  export SKILLDB_KB_RUNNER_DIR="$1"
  export SKILLDB_KB_LAUNCH="$2/skilldb_kb_launch"
  export SKILLDB_KB_SANDBOX_LIB="$2/libskilldb_kb_sandbox.so"
  [ -n "${3:-}" ] && export SKILLDB_KB_STORE="$3"
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
}

# The run kit's set-up shared by run_gpu.sh and step_bench.sh: unpacks
# KIT/kit.tar.xz into RUN once, sets BIN and SK (the skilldb command on
# RUN/library) and the runners' environment, seeds the library, imports
# level-1 problems 12 and 40 of the checkout KB on DEVICE with PY.
#   kb_run_kit ROOT KIT RUN KB DEVICE PY   (exits the script on failure)
kb_run_kit() {
  local root="$1" kit="$2" run="$3" kb="$4" device="$5" py="$6"
  [ -d "$run/kit" ] || tar -C "$run" -xJf "$kit/kit.tar.xz" || { echo "no kit at $kit"; exit 1; }
  BIN="$run/kit/bin"
  export LD_LIBRARY_PATH="$run/kit/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  kb_runner_env "$root/verify/kernelbench/runner" "$BIN" "$run/store"
  SK=("$BIN/skilldb" --db "$run/library")
  echo "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(nproc) cores; kit $(cat "$run/kit/COMMIT")"
  if [ ! -e "$run/library/.seeded" ]; then
    "${SK[@]}" init > /dev/null && for f in "$root"/data/seed/*.jsonl; do
      "${SK[@]}" import "$f" > /dev/null || exit 1
    done && touch "$run/library/.seeded"
  fi
  "${SK[@]}" --no-progress kernelbench import "$kb/KernelBench" --level 1 --problems 12,40 \
    --device "$device" --python "$py" --jobs 2 --max-screen-bytes 20000000000 \
    > "$run/import.log" 2>&1 || { cat "$run/import.log"; exit 1; }
}
