// KernelGYM's request and result (evaluation.h), and the evaluator of the
// verifier's own C ABI. Field names, defaults, bounds and meanings follow
// KernelGYM at 3a84417 (kernelgym/server/api/models.py, schema/result.py,
// workflow/kernelbench.py) as /work/notes/kernelbench_spec.md section 7
// records them.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "skilldb/server/evaluation.h"
#include "skilldb/util/json.h"

namespace skilldb::server {
namespace {

using Json = nlohmann::ordered_json;

// Typed reads of the request's members, as pydantic's lax mode takes
// them: an absent or null member keeps the default; integers may come as
// integral floats.
class EvalFields {
 public:
  explicit EvalFields(const Json& j) : j_(j) {}

  Status Str(const char* key, std::string* out) const {
    const Json* v = Find(key);
    if (v == nullptr) return Status::Ok();
    if (!v->is_string()) return Wrong(key, "a string");
    *out = v->get<std::string>();
    return Status::Ok();
  }
  Status OptStr(const char* key, std::optional<std::string>* out) const {
    const Json* v = Find(key);
    if (v == nullptr) return Status::Ok();
    if (!v->is_string()) return Wrong(key, "a string");
    *out = v->get<std::string>();
    return Status::Ok();
  }
  Status Bool(const char* key, bool* out) const {
    const Json* v = Find(key);
    if (v == nullptr) return Status::Ok();
    if (!v->is_boolean()) return Wrong(key, "a boolean");
    *out = v->get<bool>();
    return Status::Ok();
  }
  Status OptBool(const char* key, std::optional<bool>* out) const {
    const Json* v = Find(key);
    if (v == nullptr) return Status::Ok();
    if (!v->is_boolean()) return Wrong(key, "a boolean");
    *out = v->get<bool>();
    return Status::Ok();
  }
  Status Int(const char* key, int lo, int hi, int* out) const {
    const Json* v = Find(key);
    if (v == nullptr) return Status::Ok();
    double d = 0;
    if (v->is_number_integer() || v->is_number_unsigned()) {
      d = v->get<double>();
    } else if (v->is_number_float() && std::floor(v->get<double>()) ==
                                           v->get<double>()) {
      d = v->get<double>();
    } else {
      return Wrong(key, "an integer");
    }
    if (d < lo || d > hi) {
      return Status::InvalidArgument(std::string(key) + ": must be between " +
                                     std::to_string(lo) + " and " +
                                     std::to_string(hi));
    }
    *out = static_cast<int>(d);
    return Status::Ok();
  }

 private:
  const Json* Find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  static Status Wrong(const char* key, const char* type) {
    return Status::InvalidArgument(std::string(key) + ": must be " + type);
  }
  const Json& j_;
};

// KernelGYM's code validator: at least 10 non-blank characters, under
// 100 KB.
Status CheckCode(const char* key, const std::string& code) {
  size_t non_blank = 0;
  for (char c : code) {
    if (!std::isspace(static_cast<unsigned char>(c))) ++non_blank;
  }
  if (non_blank < 10) {
    return Status::InvalidArgument(std::string(key) +
                                   ": code must be at least 10 characters");
  }
  if (code.size() > 100000) {
    return Status::InvalidArgument(std::string(key) +
                                   ": Code must be less than 100KB");
  }
  return Status::Ok();
}

Status CheckOneOf(const char* key, const std::string& value,
                  std::initializer_list<const char*> allowed) {
  std::string names;
  for (const char* a : allowed) {
    if (value == a) return Status::Ok();
    names += names.empty() ? a : std::string(", ") + a;
  }
  return Status::InvalidArgument(std::string(key) + ": '" +
                                 value.substr(0, 40) + "' is not one of " +
                                 names);
}

// 3 significant digits, as KernelGYM's get_timing_stats rounds.
double ThreeDigits(double v) {
  if (!(v > 0)) return v;
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return std::strtod(buf, nullptr);
}

double MeanOf(const std::vector<RoundTiming>& rounds, bool candidate) {
  double sum = 0;
  size_t n = 0;
  for (const RoundTiming& r : rounds) {
    for (double ms : candidate ? r.candidate_ms : r.baseline_ms) {
      sum += ms;
      ++n;
    }
  }
  return n == 0 ? -1.0 : ThreeDigits(sum / static_cast<double>(n));
}

// The "[code]" of a verifier reason ("" when it has none).
std::string FindingCode(const std::string& reason) {
  if (!reason.starts_with("[")) return "";
  const size_t end = reason.find(']');
  return end == std::string::npos ? "" : reason.substr(1, end - 1);
}

bool IsHack(const std::string& code) {
  for (const char* c :
       {"no_kernel_launched", "foreign_stream", "late_work", "hidden_work",
        "timer_mismatch", "inconsistent_results", "inputs_modified",
        "out_of_bounds_write", "forbidden_import", "forbidden_export",
        "sandbox_violation"}) {
    if (code == c) return true;
  }
  return false;
}

bool IsRuntimeFailure(const std::string& code) {
  for (const char* c : {"launch_error", "crashed", "timeout",
                        "sticky_cuda_error", "resource_limit", "load_error"}) {
    if (code == c) return true;
  }
  return false;
}

class VerifierEvaluation final : public Evaluation {
 public:
  VerifierEvaluation(Verifier* verifier, int rounds)
      : verifier_(verifier), rounds_(rounds) {}

  std::string Accepts(const EvaluationRequest& r) const override {
    if (r.skilldb_task.empty()) {
      return "KernelBench-format evaluation (a PyTorch reference_code with "
             "class " +
             r.entry_point + " and an answer with class " + r.entry_point +
             "New) needs the KernelBench runner, which this server does not "
             "have; it evaluates kernels in the verifier's C ABI (extern \"C\" "
             "int launch(...)) for a verifier task named by 'skilldb_task'";
    }
    if (r.backend == "triton") {
      return "Triton kernels need the KernelBench runner, which this server "
             "does not have; the C ABI takes backend 'cuda' (GPU verifier) "
             "or 'cpp' (host verifier)";
    }
    return "";
  }

  Result<EvaluationResult> Evaluate(const EvaluationRequest& r) override {
    if (verifier_ == nullptr) {
      return FailedResult("SYSTEM_ERROR",
                          "this server has no verifier (skilldb serve "
                          "--verifier host|cuda)");
    }
    VerificationRequest request;
    request.task = r.skilldb_task;
    request.candidate.name = r.task_id;
    request.candidate.language = r.backend;
    request.candidate.source = r.kernel_code;
    request.rounds = rounds_;
    // KernelGYM's perf trials spread over the rounds, at least the 30 timed
    // calls a round this verifier needs.
    request.timed_calls_per_round =
        std::max(30, (r.num_perf_trials + rounds_ - 1) / rounds_);
    request.check_correctness = r.run_correctness.value_or(true);
    auto report = verifier_->Verify(request);
    if (!report.ok()) {
      return FailedResult(report.status().IsInvalidArgument()
                              ? "VALIDATION_ERROR"
                              : "SYSTEM_ERROR",
                          report.status().message());
    }
    return ResultFromReport(*report);
  }

 private:
  Verifier* verifier_;
  int rounds_;
};

class CombinedEvaluation final : public Evaluation {
 public:
  explicit CombinedEvaluation(std::vector<std::unique_ptr<Evaluation>> all)
      : all_(std::move(all)) {}

  std::string Accepts(const EvaluationRequest& r) const override {
    std::string reasons;
    for (const auto& e : all_) {
      std::string why = e->Accepts(r);
      if (why.empty()) return "";
      reasons += (reasons.empty() ? "" : "; ") + why;
    }
    return reasons.empty() ? "no evaluator is configured" : reasons;
  }

  Result<EvaluationResult> Evaluate(const EvaluationRequest& r) override {
    for (const auto& e : all_) {
      if (e->Accepts(r).empty()) return e->Evaluate(r);
    }
    return FailedResult("VALIDATION_ERROR", Accepts(r));
  }

 private:
  std::vector<std::unique_ptr<Evaluation>> all_;
};

}  // namespace

Result<EvaluationRequest> ParseEvaluationRequest(std::string_view text) {
  util::JsonLimits limits;
  limits.max_bytes = text.size();  // bounded by the HTTP layer
  limits.max_depth = 64;
  limits.max_values = text.size() / 2 + 16;
  auto parsed = util::ParseUntrustedJson<Json>(text, "the body", limits);
  if (!parsed.ok()) return parsed.status();
  Json j = std::move(parsed).value();
  if (!j.is_object()) {
    return Status::InvalidArgument("the body must be a JSON object");
  }
  EvaluationRequest r;
  EvalFields f(j);
  if (!j.contains("task_id") || j["task_id"].is_null()) {
    return Status::InvalidArgument("task_id: field required");
  }
  SKILLDB_RETURN_IF_ERROR(f.Str("task_id", &r.task_id));
  if (r.task_id.empty() || r.task_id.size() > 100) {
    return Status::InvalidArgument("task_id: must be 1 to 100 characters");
  }
  if (!j.contains("kernel_code") || j["kernel_code"].is_null()) {
    return Status::InvalidArgument("kernel_code: field required");
  }
  SKILLDB_RETURN_IF_ERROR(f.Str("kernel_code", &r.kernel_code));
  SKILLDB_RETURN_IF_ERROR(CheckCode("kernel_code", r.kernel_code));
  SKILLDB_RETURN_IF_ERROR(f.OptStr("reference_code", &r.reference_code));
  if (r.reference_code) {
    SKILLDB_RETURN_IF_ERROR(CheckCode("reference_code", *r.reference_code));
  }
  SKILLDB_RETURN_IF_ERROR(f.Str("toolkit", &r.toolkit));
  SKILLDB_RETURN_IF_ERROR(f.Str("backend_adapter", &r.backend_adapter));
  SKILLDB_RETURN_IF_ERROR(f.Str("backend", &r.backend));
  SKILLDB_RETURN_IF_ERROR(
      CheckOneOf("backend", r.backend, {"cuda", "triton", "cpp"}));
  SKILLDB_RETURN_IF_ERROR(
      f.Int("num_correct_trials", 1, 20, &r.num_correct_trials));
  SKILLDB_RETURN_IF_ERROR(f.Int("num_perf_trials", 1, 1000, &r.num_perf_trials));
  SKILLDB_RETURN_IF_ERROR(f.Int("num_warmup", 0, 100, &r.num_warmup));
  SKILLDB_RETURN_IF_ERROR(f.Int("timeout", 10, 3600, &r.timeout));
  SKILLDB_RETURN_IF_ERROR(f.Str("priority", &r.priority));
  SKILLDB_RETURN_IF_ERROR(
      CheckOneOf("priority", r.priority, {"low", "normal", "high"}));
  SKILLDB_RETURN_IF_ERROR(f.OptStr("device_preference", &r.device_preference));
  SKILLDB_RETURN_IF_ERROR(f.Bool("force_refresh", &r.force_refresh));
  SKILLDB_RETURN_IF_ERROR(f.Str("entry_point", &r.entry_point));
  SKILLDB_RETURN_IF_ERROR(f.OptStr("reference_backend", &r.reference_backend));
  SKILLDB_RETURN_IF_ERROR(f.OptStr("uuid", &r.uuid));
  SKILLDB_RETURN_IF_ERROR(
      f.Bool("use_reference_cache", &r.use_reference_cache));
  SKILLDB_RETURN_IF_ERROR(f.Bool("is_valid", &r.is_valid));
  SKILLDB_RETURN_IF_ERROR(f.OptBool("verbose_errors", &r.verbose_errors));
  SKILLDB_RETURN_IF_ERROR(f.OptBool("enable_profiling", &r.enable_profiling));
  SKILLDB_RETURN_IF_ERROR(
      f.OptBool("enable_triton_detection", &r.enable_triton_detection));
  SKILLDB_RETURN_IF_ERROR(
      f.OptBool("measure_performance", &r.measure_performance));
  SKILLDB_RETURN_IF_ERROR(f.OptBool("run_correctness", &r.run_correctness));
  SKILLDB_RETURN_IF_ERROR(
      f.OptBool("run_triton_detection", &r.run_triton_detection));
  SKILLDB_RETURN_IF_ERROR(f.OptBool("run_performance", &r.run_performance));
  SKILLDB_RETURN_IF_ERROR(f.Str("workflow", &r.workflow));
  SKILLDB_RETURN_IF_ERROR(f.Str("skilldb_task", &r.skilldb_task));
  if (r.workflow == "kernelbench" && !r.reference_code &&
      r.skilldb_task.empty()) {
    return Status::InvalidArgument(
        "reference_code: required for the kernelbench workflow");
  }
  if (r.use_reference_cache && !r.uuid) {
    return Status::InvalidArgument("uuid: required with use_reference_cache");
  }
  return r;
}

EvaluationResult FailedResult(std::string_view code, std::string message) {
  EvaluationResult r;
  r.status = "failed";
  r.compiled = false;
  r.correctness = false;
  r.decoy_kernel = false;
  r.reference_runtime = -1.0;
  r.kernel_runtime = -1.0;
  r.speedup = 0.0;
  r.metadata_json = util::DumpLossy(Json{{"error", message}});
  r.error_message = std::move(message);
  r.error_code = std::string(code);
  return r;
}

EvaluationResult ResultFromReport(const VerificationReport& report) {
  EvaluationResult r;
  std::vector<std::string> hacks;
  std::string runtime_failure;
  for (const std::string& reason : report.reasons) {
    const std::string code = FindingCode(reason);
    if (IsHack(code)) hacks.push_back(reason);
    if (runtime_failure.empty() && IsRuntimeFailure(code)) {
      runtime_failure = reason;
    }
  }
  const bool compiled = report.compiled;
  const bool checked = report.correctness.checked;
  const bool correct = compiled && (!checked || report.correctness.passed) &&
                       runtime_failure.empty();
  const bool decoy = !hacks.empty();
  r.status = compiled ? "completed" : "failed";
  r.compiled = compiled;
  r.correctness = correct;
  r.decoy_kernel = decoy;
  r.kernel_runtime = decoy ? -1.0 : MeanOf(report.rounds, true);
  r.reference_runtime = MeanOf(report.rounds, false);
  r.speedup = correct && !decoy && *r.kernel_runtime > 0 &&
                      *r.reference_runtime > 0
                  ? *r.reference_runtime / *r.kernel_runtime
                  : 0.0;
  if (!compiled) {
    r.error_code = "COMPILATION_ERROR";
    std::string detail = report.compile_log.substr(0, 4000);
    if (detail.empty() && !report.reasons.empty()) detail = report.reasons[0];
    r.error_message = "Kernel compilation failed: " + detail;
  } else if (!runtime_failure.empty()) {
    r.error_code = "RUNTIME_ERROR";
    r.error_message = "Kernel execution failed: " + runtime_failure;
  } else if (!correct) {
    r.error_code = "CORRECTNESS_ERROR";
    r.error_message = "Kernel produced incorrect results";
  } else if (decoy) {
    r.error_message = "Reward hacking: " + hacks.front();
  }
  Json rounds = Json::array();
  for (const RoundTiming& t : report.rounds) rounds.push_back(t.speedup_ratio);
  char trials[64];
  std::snprintf(trials, sizeof(trials), "(%d / %d)",
                report.correctness.passed ? report.correctness.trials : 0,
                report.correctness.trials);
  char max_diff[32];
  std::snprintf(max_diff, sizeof(max_diff), "%.6f",
                report.correctness.max_abs_error);
  Json metadata{
      {"hardware", report.device},
      {"device", report.device_class},
      {"backend", report.verifier},
      {"num_correct_trials", report.correctness.trials},
      {"correctness_trials", trials},
      {"max_difference", Json::array({max_diff})},
      {"correctness_skipped", !checked},
      {"skilldb",
       {{"verifier", report.verifier},
        {"verifier_version", report.verifier_version},
        {"task", report.task},
        {"passed", report.passed},
        {"speedup_ratio", report.speedup.ratio},
        {"ci_low", report.speedup.ci_low},
        {"ci_high", report.speedup.ci_high},
        {"confidence", report.speedup.confidence},
        {"round_speedups", rounds},
        {"reasons", report.reasons},
        {"hack_findings", hacks},
        {"candidate_hash", report.candidate_hash},
        {"isolation",
         {{"namespaces", report.isolation.namespaces},
          {"seccomp", report.isolation.seccomp},
          {"network", report.isolation.network},
          {"pid_namespace", report.isolation.pid_namespace},
          {"compiler_confined", report.isolation.compiler_confined},
          {"notes", report.isolation.notes}}}}}};
  if (!report.correctness.errors.empty()) {
    metadata["correctness_issue"] = report.correctness.errors.front();
  }
  r.metadata_json = util::DumpLossy(metadata);
  return r;
}

std::unique_ptr<Evaluation> MakeVerifierEvaluation(Verifier* verifier,
                                                   int rounds) {
  return std::make_unique<VerifierEvaluation>(verifier, rounds);
}

std::unique_ptr<Evaluation> MakeCombinedEvaluation(
    std::vector<std::unique_ptr<Evaluation>> evaluations) {
  return std::make_unique<CombinedEvaluation>(std::move(evaluations));
}

}  // namespace skilldb::server
