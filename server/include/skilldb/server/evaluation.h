// KernelGYM-compatible evaluation: the request and result of KernelGYM's
// POST /evaluate (hkust-nlp/KernelGYM, kernelgym/server/api/models.py, with
// its field names, defaults, bounds and meanings), and the interface an
// evaluator implements behind it.
//
// Two evaluators exist or are planned:
//  - VerifierEvaluation (here): this verifier's own format, a kernel with
//    the C ABI `extern "C" int launch(...)` for a task the verifier knows
//    (the extension field `skilldb_task` names it; `backend` "cuda" on the
//    GPU verifier, "cpp" on the host one). Judged by skilldb::Verifier.
//  - The KernelBench runner (verify/kernelbench, another branch): KernelGYM's
//    own format, a PyTorch `Model` reference and a `ModelNew` answer with
//    inline CUDA or Triton. It plugs in as a second Evaluation and
//    CombinedEvaluation sends each request to the first that accepts it.
//
// Values are plain structs. An Evaluation states its own thread safety;
// VerifierEvaluation is as thread-safe as its Verifier.
#ifndef SKILLDB_SERVER_EVALUATION_H_
#define SKILLDB_SERVER_EVALUATION_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"
#include "skilldb/verifier.h"

namespace skilldb::server {

// KernelGYM's EvaluationRequest. Unknown JSON fields are ignored, as
// pydantic does (Dr. Kernel's client sends detect_decoy_kernel).
struct EvaluationRequest {
  std::string task_id;  // 1..100 characters; the idempotency key
  std::optional<std::string> reference_code;  // 10..100000 characters
  std::string kernel_code;                    // 10..100000 characters
  std::string toolkit = "kernelbench";
  std::string backend_adapter = "kernelbench";
  std::string backend = "triton";  // cuda | triton (| cpp: skilldb's host)
  int num_correct_trials = 5;      // 1..20
  int num_perf_trials = 100;       // 1..1000
  int num_warmup = 3;              // 0..100
  int timeout = 300;               // seconds, 10..3600: the wall limit
  std::string priority = "normal";  // low | normal | high
  std::optional<std::string> device_preference;
  bool force_refresh = false;  // re-run although a result exists
  std::string entry_point = "Model";  // the reference class; kernel: +"New"
  std::optional<std::string> reference_backend;
  std::optional<std::string> uuid;
  bool use_reference_cache = false;
  bool is_valid = false;
  std::optional<bool> verbose_errors, enable_profiling, enable_triton_detection,
      measure_performance, run_correctness, run_triton_detection,
      run_performance;
  std::string workflow = "kernelbench";
  // skilldb's extension: the verifier task a C-ABI kernel implements.
  std::string skilldb_task;
};

// Reads a request body. InvalidArgument (a 400 with KernelGYM's
// VALIDATION_ERROR) naming the field for a missing or malformed field or a
// value out of KernelGYM's bounds.
Result<EvaluationRequest> ParseEvaluationRequest(std::string_view json);

// KernelGYM's EvaluationResponse, less the bookkeeping the server adds
// (task_id, submitted_at, completed_at, processing_time).
struct EvaluationResult {
  std::string status = "completed";  // completed | failed | timeout
  std::optional<bool> compiled, correctness, decoy_kernel;
  // Milliseconds, the mean over the timed calls to 3 significant digits;
  // -1.0 when not measured.
  std::optional<double> reference_runtime, kernel_runtime;
  // reference_runtime / kernel_runtime when correct and both > 0, else 0.
  std::optional<double> speedup;
  std::string metadata_json = "{}";  // a JSON object
  std::optional<std::string> error_message;
  // VALIDATION_ERROR, COMPILATION_ERROR, RUNTIME_ERROR, CORRECTNESS_ERROR,
  // TIMEOUT_ERROR, SYSTEM_ERROR, ...
  std::optional<std::string> error_code;
};

// A failed result with `code` and `message` (KernelGYM's shape for
// validation and system failures).
EvaluationResult FailedResult(std::string_view code, std::string message);

// The result of a verification as KernelGYM reports it: compiled and
// correct from the report, runtimes from the timed calls, decoy_kernel for
// a detected reward hack, error_code from the first finding; this
// verifier's own evidence (speedup with its confidence interval, rounds,
// findings, isolation) in metadata.
EvaluationResult ResultFromReport(const VerificationReport& report);

class Evaluation {
 public:
  virtual ~Evaluation() = default;
  // "" if this evaluator takes the request's format; else why not.
  virtual std::string Accepts(const EvaluationRequest& request) const = 0;
  // Evaluates an accepted request. A kernel that fails is a result, not an
  // error; errors are for the evaluator itself (Unavailable, ...).
  virtual Result<EvaluationResult> Evaluate(
      const EvaluationRequest& request) = 0;
};

// The verifier's C ABI through skilldb::Verifier. `verifier` may be null
// (no verifier configured): every request then fails with SYSTEM_ERROR.
// REQUIRES: `verifier` outlives this.
std::unique_ptr<Evaluation> MakeVerifierEvaluation(Verifier* verifier,
                                                   int rounds = 3);

// Sends each request to the first of `evaluations` that accepts it; a
// request none accepts gets a failed result naming every reason.
std::unique_ptr<Evaluation> MakeCombinedEvaluation(
    std::vector<std::unique_ptr<Evaluation>> evaluations);

}  // namespace skilldb::server

#endif  // SKILLDB_SERVER_EVALUATION_H_
