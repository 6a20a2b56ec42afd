// libskilldb_kb_sandbox: the run stage of the KernelBench runner's sandbox,
// for the runner to call through ctypes (kb_guard.py) once PyTorch and the
// device are up and before any answer code runs. The filter is the GPU
// worker's allowlist (verify/src/worker/sandbox.h); a trapped call is named
// on stderr and the process exits with the worker's sandbox-violation
// status, which the verifier reports as a finding.
#include <cstring>
#include <string>

#include "worker/sandbox.h"

extern "C" __attribute__((visibility("default"))) int
skdb_kb_enter_run_sandbox(int writes_ok, char* notes, int notes_len) {
  auto r = skilldb::verify::internal::EnterRunnerRunSandbox(writes_ok != 0);
  const std::string text = r.ok() ? *r : r.status().message();
  if (notes != nullptr && notes_len > 0) {
    std::strncpy(notes, text.c_str(), static_cast<size_t>(notes_len) - 1);
    notes[notes_len - 1] = '\0';
  }
  return r.ok() ? 0 : 1;
}
