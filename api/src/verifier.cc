#include "skilldb/verifier.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace skilldb {
namespace {

using nlohmann::json;

std::string Fixed(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

json RoundToJson(const RoundTiming& r) {
  return json{{"baseline_ms", r.baseline_ms},
              {"candidate_ms", r.candidate_ms},
              {"baseline_median_ms", r.baseline_median_ms},
              {"candidate_median_ms", r.candidate_median_ms},
              {"speedup_ratio", r.speedup_ratio}};
}

// Reads `key` from `j` into `out` if present; a present value of the wrong
// type is an error naming the key.
template <typename T>
Status Read(const json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  try {
    *out = it->get<T>();
  } catch (const json::exception&) {
    return Status::InvalidArgument(std::string("report field '") + key +
                                   "' has the wrong type");
  }
  return Status::Ok();
}

Status RoundFromJson(const json& j, RoundTiming* r) {
  if (!j.is_object())
    return Status::InvalidArgument("a round is not an object");
  SKILLDB_RETURN_IF_ERROR(Read(j, "baseline_ms", &r->baseline_ms));
  SKILLDB_RETURN_IF_ERROR(Read(j, "candidate_ms", &r->candidate_ms));
  SKILLDB_RETURN_IF_ERROR(
      Read(j, "baseline_median_ms", &r->baseline_median_ms));
  SKILLDB_RETURN_IF_ERROR(
      Read(j, "candidate_median_ms", &r->candidate_median_ms));
  return Read(j, "speedup_ratio", &r->speedup_ratio);
}

}  // namespace

std::vector<std::string> PolicyViolations(const VerificationPolicy& policy,
                                          const VerificationReport& report) {
  std::vector<std::string> reasons;
  if (!report.compiled) reasons.push_back("the candidate did not compile");
  if (policy.require_correctness &&
      !(report.correctness.checked && report.correctness.passed)) {
    reasons.push_back(report.correctness.checked
                          ? "the candidate's output is wrong"
                          : "correctness was not checked");
  }
  if (!policy.device_class.empty() &&
      report.device_class != policy.device_class) {
    reasons.push_back("evidence comes from device class '" +
                      report.device_class + "', policy requires '" +
                      policy.device_class + "'");
  }
  if (static_cast<int>(report.rounds.size()) < policy.min_rounds) {
    reasons.push_back(std::to_string(report.rounds.size()) +
                      " timing rounds, policy requires at least " +
                      std::to_string(policy.min_rounds));
  }
  for (size_t i = 0; i < report.rounds.size(); ++i) {
    if (!(report.rounds[i].speedup_ratio >= policy.min_speedup)) {
      reasons.push_back("round " + std::to_string(i + 1) + " speedup " +
                        Fixed(report.rounds[i].speedup_ratio) +
                        " is below the required " + Fixed(policy.min_speedup));
    }
  }
  if (!(report.speedup.ci_low > policy.min_ci_low)) {
    reasons.push_back("speedup confidence lower bound " +
                      Fixed(report.speedup.ci_low) + " does not exceed " +
                      Fixed(policy.min_ci_low));
  }
  const double plausible =
      std::min(policy.max_plausible_speedup,
               report.max_plausible_speedup.value_or(INFINITY));
  if (report.speedup.ratio > plausible) {
    reasons.push_back("speedup " + Fixed(report.speedup.ratio) +
                      " is implausible (bound " + Fixed(plausible) + ")");
  }
  if (!report.passed && reasons.empty()) {
    reasons.push_back("the verifier rejected the candidate");
  }
  return reasons;
}

std::string ReportToJson(const VerificationReport& report) {
  json rounds = json::array();
  for (const RoundTiming& r : report.rounds) rounds.push_back(RoundToJson(r));
  json j{
      {"verifier", report.verifier},
      {"verifier_version", report.verifier_version},
      {"device", report.device},
      {"device_class", report.device_class},
      {"task", report.task},
      {"candidate_hash", report.candidate_hash},
      {"compiled", report.compiled},
      {"compile_log", report.compile_log},
      {"correctness",
       {{"checked", report.correctness.checked},
        {"passed", report.correctness.passed},
        {"trials", report.correctness.trials},
        {"max_abs_error", report.correctness.max_abs_error},
        {"max_rel_error", report.correctness.max_rel_error},
        {"errors", report.correctness.errors}}},
      {"rounds", rounds},
      {"speedup",
       {{"ratio", report.speedup.ratio},
        {"ci_low", report.speedup.ci_low},
        {"ci_high", report.speedup.ci_high},
        {"confidence", report.speedup.confidence}}},
      {"passed", report.passed},
      {"reasons", report.reasons},
      {"finished_at_ms", report.finished_at_ms},
      {"isolation",
       {{"namespaces", report.isolation.namespaces},
        {"seccomp", report.isolation.seccomp},
        {"network", report.isolation.network},
        {"pid_namespace", report.isolation.pid_namespace},
        {"compiler_confined", report.isolation.compiler_confined},
        {"notes", report.isolation.notes}}},
  };
  if (report.max_plausible_speedup) {
    j["max_plausible_speedup"] = *report.max_plausible_speedup;
  }
  // Written only when there is something to say, so that reports of
  // verifiers without codes or times read as before.
  if (!report.findings.empty()) j["findings"] = report.findings;
  const VerificationTimes& t = report.times;
  if (t.total_ms > 0 || t.compile_cache_hit) {
    j["times"] = {{"compile_ms", t.compile_ms},
                  {"correctness_ms", t.correctness_ms},
                  {"timing_ms", t.timing_ms},
                  {"total_ms", t.total_ms},
                  {"compile_cache_hit", t.compile_cache_hit}};
  }
  // Non-finite numbers have no JSON form; nlohmann writes them as null.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<VerificationReport> ReportFromJson(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument("verification report is not a JSON object");
  }
  VerificationReport r;
  SKILLDB_RETURN_IF_ERROR(Read(j, "verifier", &r.verifier));
  SKILLDB_RETURN_IF_ERROR(Read(j, "verifier_version", &r.verifier_version));
  SKILLDB_RETURN_IF_ERROR(Read(j, "device", &r.device));
  SKILLDB_RETURN_IF_ERROR(Read(j, "device_class", &r.device_class));
  SKILLDB_RETURN_IF_ERROR(Read(j, "task", &r.task));
  SKILLDB_RETURN_IF_ERROR(Read(j, "candidate_hash", &r.candidate_hash));
  SKILLDB_RETURN_IF_ERROR(Read(j, "compiled", &r.compiled));
  SKILLDB_RETURN_IF_ERROR(Read(j, "compile_log", &r.compile_log));
  SKILLDB_RETURN_IF_ERROR(Read(j, "passed", &r.passed));
  SKILLDB_RETURN_IF_ERROR(Read(j, "reasons", &r.reasons));
  SKILLDB_RETURN_IF_ERROR(Read(j, "finished_at_ms", &r.finished_at_ms));
  if (auto it = j.find("max_plausible_speedup");
      it != j.end() && it->is_number()) {
    r.max_plausible_speedup = it->get<double>();
  }
  if (auto it = j.find("correctness"); it != j.end()) {
    if (!it->is_object()) {
      return Status::InvalidArgument(
          "report field 'correctness' is not an object");
    }
    CorrectnessResult& c = r.correctness;
    SKILLDB_RETURN_IF_ERROR(Read(*it, "checked", &c.checked));
    SKILLDB_RETURN_IF_ERROR(Read(*it, "passed", &c.passed));
    SKILLDB_RETURN_IF_ERROR(Read(*it, "trials", &c.trials));
    SKILLDB_RETURN_IF_ERROR(Read(*it, "max_abs_error", &c.max_abs_error));
    SKILLDB_RETURN_IF_ERROR(Read(*it, "max_rel_error", &c.max_rel_error));
    SKILLDB_RETURN_IF_ERROR(Read(*it, "errors", &c.errors));
  }
  if (auto it = j.find("rounds"); it != j.end()) {
    if (!it->is_array()) {
      return Status::InvalidArgument("report field 'rounds' is not an array");
    }
    for (const json& round : *it) {
      RoundTiming t;
      SKILLDB_RETURN_IF_ERROR(RoundFromJson(round, &t));
      r.rounds.push_back(std::move(t));
    }
  }
  if (auto it = j.find("isolation"); it != j.end()) {
    if (!it->is_object()) {
      return Status::InvalidArgument(
          "report field 'isolation' is not an object");
    }
    IsolationInfo& i = r.isolation;
    SKILLDB_RETURN_IF_ERROR(Read(*it, "namespaces", &i.namespaces));
    SKILLDB_RETURN_IF_ERROR(Read(*it, "seccomp", &i.seccomp));
    SKILLDB_RETURN_IF_ERROR(Read(*it, "network", &i.network));
    SKILLDB_RETURN_IF_ERROR(Read(*it, "pid_namespace", &i.pid_namespace));
    SKILLDB_RETURN_IF_ERROR(
        Read(*it, "compiler_confined", &i.compiler_confined));
    SKILLDB_RETURN_IF_ERROR(Read(*it, "notes", &i.notes));
  }
  SKILLDB_RETURN_IF_ERROR(Read(j, "findings", &r.findings));
  if (auto it = j.find("times"); it != j.end()) {
    if (!it->is_object()) {
      return Status::InvalidArgument("report field 'times' is not an object");
    }
    VerificationTimes& t = r.times;
    SKILLDB_RETURN_IF_ERROR(Read(*it, "compile_ms", &t.compile_ms));
    SKILLDB_RETURN_IF_ERROR(Read(*it, "correctness_ms", &t.correctness_ms));
    SKILLDB_RETURN_IF_ERROR(Read(*it, "timing_ms", &t.timing_ms));
    SKILLDB_RETURN_IF_ERROR(Read(*it, "total_ms", &t.total_ms));
    SKILLDB_RETURN_IF_ERROR(
        Read(*it, "compile_cache_hit", &t.compile_cache_hit));
  }
  if (auto it = j.find("speedup"); it != j.end()) {
    if (!it->is_object()) {
      return Status::InvalidArgument("report field 'speedup' is not an object");
    }
    SKILLDB_RETURN_IF_ERROR(Read(*it, "ratio", &r.speedup.ratio));
    SKILLDB_RETURN_IF_ERROR(Read(*it, "ci_low", &r.speedup.ci_low));
    SKILLDB_RETURN_IF_ERROR(Read(*it, "ci_high", &r.speedup.ci_high));
    SKILLDB_RETURN_IF_ERROR(Read(*it, "confidence", &r.speedup.confidence));
  }
  return r;
}

}  // namespace skilldb
