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
