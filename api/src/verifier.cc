#include "skilldb/verifier.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "skilldb/util/json.h"

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

using util::FieldReader;

Status RoundFromJson(const json& j, RoundTiming* r) {
  if (!j.is_object()) {
    return Status::InvalidArgument("a report round is not an object");
  }
  FieldReader in(j, "report round");
  SKILLDB_RETURN_IF_ERROR(in.Doubles("baseline_ms", &r->baseline_ms));
  SKILLDB_RETURN_IF_ERROR(in.Doubles("candidate_ms", &r->candidate_ms));
  SKILLDB_RETURN_IF_ERROR(
      in.Double("baseline_median_ms", &r->baseline_median_ms));
  SKILLDB_RETURN_IF_ERROR(
      in.Double("candidate_median_ms", &r->candidate_median_ms));
  return in.Double("speedup_ratio", &r->speedup_ratio);
}

// The member `key` of `j` when it is an object; InvalidArgument when it is
// present and not one; nullptr when absent.
Result<const json*> ObjectMember(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return static_cast<const json*>(nullptr);
  if (!it->is_object()) {
    return Status::InvalidArgument(std::string("report field '") + key +
                                   "' is not an object");
  }
  return &*it;
}

Status CorrectnessFromJson(const json& j, CorrectnessResult* c) {
  FieldReader in(j, "report correctness");
  SKILLDB_RETURN_IF_ERROR(in.Bool("checked", &c->checked));
  SKILLDB_RETURN_IF_ERROR(in.Bool("passed", &c->passed));
  SKILLDB_RETURN_IF_ERROR(in.Int("trials", &c->trials, 0));
  SKILLDB_RETURN_IF_ERROR(in.Double("max_abs_error", &c->max_abs_error));
  SKILLDB_RETURN_IF_ERROR(in.Double("max_rel_error", &c->max_rel_error));
  return in.Strings("errors", &c->errors);
}

Status IsolationFromJson(const json& j, IsolationInfo* i) {
  FieldReader in(j, "report isolation");
  SKILLDB_RETURN_IF_ERROR(in.Bool("applied", &i->applied));
  SKILLDB_RETURN_IF_ERROR(in.Bool("namespaces", &i->namespaces));
  SKILLDB_RETURN_IF_ERROR(in.Bool("seccomp", &i->seccomp));
  SKILLDB_RETURN_IF_ERROR(in.Bool("network", &i->network));
  SKILLDB_RETURN_IF_ERROR(in.Bool("pid_namespace", &i->pid_namespace));
  SKILLDB_RETURN_IF_ERROR(in.Bool("compiler_confined", &i->compiler_confined));
  return in.String("notes", &i->notes);
}

Status TimesFromJson(const json& j, VerificationTimes* t) {
  FieldReader in(j, "report times");
  SKILLDB_RETURN_IF_ERROR(in.Double("compile_ms", &t->compile_ms));
  SKILLDB_RETURN_IF_ERROR(in.Double("correctness_ms", &t->correctness_ms));
  SKILLDB_RETURN_IF_ERROR(in.Double("timing_ms", &t->timing_ms));
  SKILLDB_RETURN_IF_ERROR(in.Double("total_ms", &t->total_ms));
  return in.Bool("compile_cache_hit", &t->compile_cache_hit);
}

Status SpeedupFromJson(const json& j, SpeedupEstimate* s) {
  FieldReader in(j, "report speedup");
  SKILLDB_RETURN_IF_ERROR(in.Double("ratio", &s->ratio));
  SKILLDB_RETURN_IF_ERROR(in.Double("ci_low", &s->ci_low));
  SKILLDB_RETURN_IF_ERROR(in.Double("ci_high", &s->ci_high));
  return in.Double("confidence", &s->confidence);
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
       {{"applied", report.isolation.applied},
        {"namespaces", report.isolation.namespaces},
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
  return util::DumpLossy(j);
}

Result<VerificationReport> ReportFromJson(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(
      json j, util::ParseUntrustedJson(text, "verification report"));
  if (!j.is_object()) {
    return Status::InvalidArgument("verification report is not a JSON object");
  }
  VerificationReport r;
  FieldReader in(j, "report");
  SKILLDB_RETURN_IF_ERROR(in.String("verifier", &r.verifier));
  SKILLDB_RETURN_IF_ERROR(in.String("verifier_version", &r.verifier_version));
  SKILLDB_RETURN_IF_ERROR(in.String("device", &r.device));
  SKILLDB_RETURN_IF_ERROR(in.String("device_class", &r.device_class));
  SKILLDB_RETURN_IF_ERROR(in.String("task", &r.task));
  SKILLDB_RETURN_IF_ERROR(in.String("candidate_hash", &r.candidate_hash));
  SKILLDB_RETURN_IF_ERROR(in.Bool("compiled", &r.compiled));
  SKILLDB_RETURN_IF_ERROR(in.String("compile_log", &r.compile_log));
  SKILLDB_RETURN_IF_ERROR(in.Bool("passed", &r.passed));
  SKILLDB_RETURN_IF_ERROR(in.Strings("reasons", &r.reasons));
  SKILLDB_RETURN_IF_ERROR(in.Int64("finished_at_ms", &r.finished_at_ms));
  if (in.Find("max_plausible_speedup") != nullptr) {
    double bound = 0;
    SKILLDB_RETURN_IF_ERROR(in.Double("max_plausible_speedup", &bound));
    r.max_plausible_speedup = bound;
  }
  SKILLDB_ASSIGN_OR_RETURN(const json* correctness,
                           ObjectMember(j, "correctness"));
  if (correctness != nullptr) {
    SKILLDB_RETURN_IF_ERROR(CorrectnessFromJson(*correctness, &r.correctness));
  }
  if (const json* rounds = in.Find("rounds")) {
    if (!rounds->is_array()) {
      return Status::InvalidArgument("report field 'rounds' is not an array");
    }
    for (const json& round : *rounds) {
      RoundTiming t;
      SKILLDB_RETURN_IF_ERROR(RoundFromJson(round, &t));
      r.rounds.push_back(std::move(t));
    }
  }
  SKILLDB_ASSIGN_OR_RETURN(const json* isolation, ObjectMember(j, "isolation"));
  if (isolation != nullptr) {
    SKILLDB_RETURN_IF_ERROR(IsolationFromJson(*isolation, &r.isolation));
  }
  SKILLDB_RETURN_IF_ERROR(in.Strings("findings", &r.findings));
  SKILLDB_ASSIGN_OR_RETURN(const json* times, ObjectMember(j, "times"));
  if (times != nullptr) {
    SKILLDB_RETURN_IF_ERROR(TimesFromJson(*times, &r.times));
  }
  SKILLDB_ASSIGN_OR_RETURN(const json* speedup, ObjectMember(j, "speedup"));
  if (speedup != nullptr) {
    SKILLDB_RETURN_IF_ERROR(SpeedupFromJson(*speedup, &r.speedup));
  }
  return r;
}

}  // namespace skilldb
