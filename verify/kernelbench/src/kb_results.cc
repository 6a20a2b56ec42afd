// EvalResult as JSON (the results file, --json) and as text.
#include <cmath>
#include <cstdio>

#include "kb_internal.h"

namespace skilldb::verify::kb {
namespace {

using internal::json;
using internal::Num;

json Opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// {"cand.call": [calls, wall ms, runner ms], ...}
json OpsJson(const std::map<std::string, OpTime>& ops) {
  json j = json::object();
  for (const auto& [op, t] : ops)
    j[op] = {t.calls, t.wall_ms, t.runner_ms, t.cpu_ms};
  return j;
}

// [[name, start ms, end ms], ...] on the process's clock, to 0.1 ms.
json SpansJson(const std::vector<Span>& spans) {
  json j = json::array();
  for (const Span& s : spans) {
    j.push_back({s.name, std::round(s.start_ms * 10) / 10,
                 std::round(s.end_ms * 10) / 10});
  }
  return j;
}

std::optional<double> OptFrom(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

json BaselineJson(const Baseline& b) {
  return {{"kind", b.kind}, {"median_ms", b.median_ms}, {"mean_ms", b.mean_ms},
          {"calls", b.calls}, {"cached", b.cached}, {"unavailable", b.unavailable}};
}

Baseline BaselineFrom(const json& j) {
  Baseline b;
  if (!j.is_object()) return b;
  b.kind = j.value("kind", "");
  b.median_ms = j.value("median_ms", 0.0);
  b.mean_ms = j.value("mean_ms", 0.0);
  b.calls = j.value("calls", 0);
  b.cached = j.value("cached", false);
  b.unavailable = j.value("unavailable", "");
  return b;
}


}  // namespace

std::string ResultToJson(const EvalResult& r) {
  json findings = json::array();
  for (const Finding& f : r.findings) {
    findings.push_back({{"code", std::string(FindingCodeName(f.code))}, {"message", f.message}});
  }
  json rounds = json::array();
  for (const RoundTiming& t : r.rounds) {
    rounds.push_back({{"baseline_ms", t.baseline_ms},
                      {"candidate_ms", t.candidate_ms},
                      {"baseline_median_ms", t.baseline_median_ms},
                      {"candidate_median_ms", t.candidate_median_ms},
                      {"speedup", t.speedup_ratio}});
  }
  json kernels = json::array();
  for (const KernelTime& k : r.kernels) {
    kernels.push_back({{"name", k.name}, {"own", k.own}, {"count", k.count},
                       {"us", k.us}, {"stream", k.stream}});
  }
  json j = {
      {"level", r.level},
      {"problem", r.problem},
      {"sample", r.sample},
      {"problem_name", r.problem_name},
      {"answer_sha256", r.answer_hash},
      {"format", std::string(AnswerFormatName(r.format.format))},
      {"backend", r.format.backend},
      {"protocol", std::string(ProtocolName(r.protocol))},
      {"verdict", r.verdict},
      {"compiled", r.compiled},
      {"correctness", r.correct},
      {"credited", r.credited},
      {"findings", findings},
      {"notes", r.notes},
      {"compile_log", r.compile_log},
      {"correctness_trials", "(" + std::to_string(r.trials_passed) + " / " +
                                 std::to_string(r.trials) + ")"},
      {"trials", r.trials},
      {"trials_passed", r.trials_passed},
      {"max_difference", r.max_abs_diff},
      {"avg_difference", r.avg_abs_diff},
      {"mismatches", r.mismatches},
      {"runtime", r.candidate_ms},
      {"kb_times_ms", r.kb_times_ms},
      {"baseline_eager", BaselineJson(r.eager)},
      {"baseline_compile", BaselineJson(r.compiled_baseline)},
      {"speedup_eager", Opt(r.speedup_eager)},
      {"speedup_compile", Opt(r.speedup_compile)},
      {"speedup_ci",
       {{"low", r.estimate.ci_low},
        {"high", r.estimate.ci_high},
        {"confidence", r.estimate.confidence}}},
      {"rounds", rounds},
      {"max_plausible_speedup", Opt(r.max_plausible_speedup)},
      {"custom_kernel_cuda_time_in_profiling_us", r.own_kernel_us},
      {"total_kernel_run_time_in_profiling_us", r.total_kernel_us},
      {"num_custom_kernels", r.own_kernels},
      {"num_total_kernels", r.total_kernels},
      {"kernels", kernels},
      {"isolation",
       {{"namespaces", r.isolation.namespaces},
        {"seccomp", r.isolation.seccomp},
        {"network", r.isolation.network},
        {"pid_namespace", r.isolation.pid_namespace},
        {"compiler_confined", r.isolation.compiler_confined},
        {"notes", r.isolation.notes}}},
      {"times_ms",
       {{"build", r.times.build_ms},
        {"build_cached", r.times.build_cached},
        {"reference", r.times.reference_ms},
        {"correctness", r.times.correctness_ms},
        {"timing", r.times.timing_ms},
        {"total", r.times.total_ms},
        {"ops", OpsJson(r.times.ops)},
        {"spans", SpansJson(r.times.spans)},
        {"spans_dropped", r.times.spans_dropped}}},
      {"device", r.device},
      {"torch", r.torch_version},
      {"error_code", r.error_code},
      {"error_message", r.error_message},
      {"degenerate_problem", r.degenerate_problem},
  };
  return internal::Dump(j);
}

Result<EvalResult> ResultFromJson(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(json j, internal::ParseJson(text, "a result"));
  if (!j.is_object()) return Status::InvalidArgument("a result is not a JSON object");
  EvalResult r;
  try {
    r.level = j.at("level").get<int>();
    r.problem = j.at("problem").get<int>();
    r.sample = j.value("sample", 0);
    r.problem_name = j.value("problem_name", "");
    r.answer_hash = j.at("answer_sha256").get<std::string>();
    r.format.backend = j.value("backend", "");
    SKILLDB_ASSIGN_OR_RETURN(r.protocol, ParseProtocol(j.value("protocol", "skilldb")));
    r.verdict = j.at("verdict").get<std::string>();
    r.compiled = j.value("compiled", false);
    r.correct = j.value("correctness", false);
    r.credited = j.value("credited", false);
    for (const json& f : j.value("findings", json::array())) {
      if (auto code = ParseFindingCode(f.value("code", ""))) {
        r.findings.push_back({*code, f.value("message", "")});
      }
    }
    r.notes = j.value("notes", std::vector<std::string>{});
    r.compile_log = j.value("compile_log", "");
    r.trials = j.value("trials", 0);
    r.trials_passed = j.value("trials_passed", 0);
    r.max_abs_diff = j.value("max_difference", 0.0);
    r.avg_abs_diff = j.value("avg_difference", 0.0);
    r.mismatches = j.value("mismatches", std::vector<std::string>{});
    r.candidate_ms = j.value("runtime", -1.0);
    r.kb_times_ms = j.value("kb_times_ms", std::vector<double>{});
    r.eager = BaselineFrom(j.value("baseline_eager", json::object()));
    r.compiled_baseline = BaselineFrom(j.value("baseline_compile", json::object()));
    r.speedup_eager = OptFrom(j, "speedup_eager");
    r.speedup_compile = OptFrom(j, "speedup_compile");
    const json ci = j.value("speedup_ci", json::object());
    r.estimate.ci_low = ci.value("low", 0.0);
    r.estimate.ci_high = ci.value("high", 0.0);
    r.estimate.confidence = ci.value("confidence", 0.95);
    r.estimate.ratio = r.speedup_eager.value_or(0.0);
    r.max_plausible_speedup = OptFrom(j, "max_plausible_speedup");
    r.own_kernel_us = j.value("custom_kernel_cuda_time_in_profiling_us", -1.0);
    r.total_kernel_us = j.value("total_kernel_run_time_in_profiling_us", -1.0);
    r.own_kernels = j.value("num_custom_kernels", 0);
    r.total_kernels = j.value("num_total_kernels", 0);
    const json t = j.value("times_ms", json::object());
    r.times.build_ms = t.value("build", 0.0);
    r.times.build_cached = t.value("build_cached", false);
    r.times.reference_ms = t.value("reference", 0.0);
    r.times.correctness_ms = t.value("correctness", 0.0);
    r.times.timing_ms = t.value("timing", 0.0);
    r.times.total_ms = t.value("total", 0.0);
    const json ops = t.value("ops", json::object());
    for (const auto& [op, v] : ops.items()) {
      // [calls, wall, runner, cpu] (lines before 2026-12-06 lack cpu).
      if (!v.is_array() || v.size() < 3 || v.size() > 4 ||
          !v[0].is_number_integer() || !v[1].is_number() || !v[2].is_number() ||
          (v.size() == 4 && !v[3].is_number())) {
        continue;  // a damaged line: the split is informative only
      }
      r.times.ops[op] = {v[0].get<int>(), v[1].get<double>(),
                         v[2].get<double>(),
                         v.size() == 4 ? v[3].get<double>() : 0.0};
    }
    for (const json& v : t.value("spans", json::array())) {
      // [name, start, end] (lines before 2026-12-07 have none).
      if (v.is_array() && v.size() == 3 && v[0].is_string() &&
          v[1].is_number() && v[2].is_number() &&
          r.times.spans.size() < PhaseSplit::kMaxSpans) {
        r.times.spans.push_back(
            {v[0].get<std::string>(), v[1].get<double>(), v[2].get<double>()});
      }
    }
    if (t.contains("spans_dropped") && t["spans_dropped"].is_number_integer()) {
      r.times.spans_dropped = t["spans_dropped"].get<int>();
    }
    const json iso = j.value("isolation", json::object());
    r.isolation.namespaces = iso.value("namespaces", false);
    r.isolation.seccomp = iso.value("seccomp", false);
    r.isolation.network = iso.value("network", true);
    r.isolation.pid_namespace = iso.value("pid_namespace", false);
    r.isolation.compiler_confined = iso.value("compiler_confined", false);
    r.isolation.notes = iso.value("notes", "");
    r.device = j.value("device", "");
    r.torch_version = j.value("torch", "");
    r.error_code = j.value("error_code", "");
    r.error_message = j.value("error_message", "");
    r.degenerate_problem = j.value("degenerate_problem", false);
  } catch (const json::exception& e) {
    return Status::InvalidArgument(std::string("a result field is missing or mistyped: ") +
                                   e.what());
  }
  return r;
}

std::string FormatResultText(const EvalResult& r) {
  std::string s = "level " + std::to_string(r.level) + " problem " +
                  std::to_string(r.problem) + " sample " + std::to_string(r.sample) + " (" +
                  r.problem_name + "): " + r.verdict;
  if (r.speedup_eager) {
    s += ", " + Num(*r.speedup_eager) + "x over eager";
    if (r.protocol == Protocol::kSkilldb && r.estimate.ci_high > 0) {
      s += " (" + Num(r.estimate.confidence * 100, "%.0f") + "% CI " + Num(r.estimate.ci_low) +
           "-" + Num(r.estimate.ci_high) + ")";
    }
  }
  if (r.speedup_compile) s += ", " + Num(*r.speedup_compile) + "x over torch.compile";
  s += "\n";
  if (r.trials > 0) {
    s += "  correctness: " + std::to_string(r.trials_passed) + "/" + std::to_string(r.trials) +
         " trials, max difference " + Num(r.max_abs_diff) + "\n";
  }
  if (r.candidate_ms > 0) {
    s += "  time: " + Num(r.candidate_ms) + " ms (answer), " + Num(r.eager.median_ms > 0 ?
         (r.protocol == Protocol::kKernelBench ? r.eager.mean_ms : r.eager.median_ms) : 0) +
         " ms (eager)";
    if (r.compiled_baseline.unavailable.empty() && r.compiled_baseline.median_ms > 0) {
      s += ", " + Num(r.protocol == Protocol::kKernelBench ? r.compiled_baseline.mean_ms
                                                           : r.compiled_baseline.median_ms) +
           " ms (torch.compile)";
    }
    s += "\n";
  }
  if (r.total_kernel_us > 0) {
    s += "  own kernels: " + Num(100 * r.own_share(), "%.1f") + "% of " +
         Num(r.total_kernel_us, "%.0f") + " us profiled\n";
  }
  for (const std::string& m : r.mismatches) s += "  mismatch: " + m + "\n";
  for (const Finding& f : r.findings) s += "  " + FormatFinding(f) + "\n";
  for (const std::string& n : r.notes) s += "  note: " + n + "\n";
  if (!r.compile_log.empty() && r.verdict == "compile_error") {
    std::string log = r.compile_log;
    if (log.size() > 1500) log = "..." + log.substr(log.size() - 1500);
    s += "  compile log:\n" + log + "\n";
  }
  s += "  isolation: " + r.isolation.notes + "\n";
  s += "  phases (ms): build " + Num(r.times.build_ms, "%.0f") +
       (r.times.build_cached ? " (cached)" : "") + ", reference " +
       Num(r.times.reference_ms, "%.0f") + ", correctness " +
       Num(r.times.correctness_ms, "%.0f") + ", timing " + Num(r.times.timing_ms, "%.0f") +
       ", total " + Num(r.times.total_ms, "%.0f") + "\n";
  return s;
}

}  // namespace skilldb::verify::kb
