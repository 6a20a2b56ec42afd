#include "bench_modes.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "file_util.h"
#include "skilldb/verify/compiler.h"
#include "skilldb/verify/stats.h"

namespace skilldb::verify::bench {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

void WriteJson(const Args& args, const json& j) {
  const std::string path = args.Get("json");
  if (path.empty()) return;
  std::ofstream f(path);
  f << j.dump(1) << "\n";
}

Result<std::unique_ptr<TaskVerifier>> Make(const Args& args) {
  auto v = MakeVerifier(OptionsFrom(args));
  if (!v.ok()) {
    std::fprintf(stderr, "cannot start the verifier: %s\n",
                 v.status().ToString().c_str());
  }
  return v;
}

std::vector<std::string> TaskList(const Args& args, const VerifierOptions& o) {
  if (args.Has("tasks")) return Split(args.Get("tasks"));
  auto all = ListTasks(o.task_dir);
  return all.ok() ? *all : std::vector<std::string>{};
}

std::string Codes(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& f : findings) {
    if (!out.empty()) out += ",";
    out += FindingCodeName(f.code);
  }
  return out.empty() ? "-" : out;
}

json ReportJson(const DetailedReport& d) {
  json j = json::parse(ReportToJson(d.report), nullptr, false);
  // Per-call timings make the files large; the suite keeps round medians.
  if (j.contains("rounds")) {
    for (json& r : j["rounds"]) {
      r.erase("baseline_ms");
      r.erase("candidate_ms");
    }
  }
  json codes = json::array();
  for (const Finding& f : d.findings) codes.push_back(FindingCodeName(f.code));
  j["finding_codes"] = codes;
  j["times"] = {{"compile_ms", d.times.compile_ms},
                {"correctness_ms", d.times.correctness_ms},
                {"timing_ms", d.times.timing_ms},
                {"total_ms", d.times.total_ms},
                {"compile_cache_hit", d.times.compile_cache_hit}};
  if (d.roofline_floor_ms) j["roofline_floor_ms"] = *d.roofline_floor_ms;
  return j;
}

// The expectation a shipped candidate must meet.
bool MeetsExpectation(const CandidateSpec& spec, const DetailedReport& d,
                      bool screened) {
  if (spec.expect_pass) return d.report.passed;
  if (d.report.passed) return false;
  const auto& want = !screened && !spec.expect_without_screen.empty()
                         ? spec.expect_without_screen
                         : spec.expect_any;
  for (FindingCode c : want) {
    if (HasFinding(d.findings, c)) return true;
  }
  return false;
}

// Builds the ~1.3x-slower baseline: the task's reference, then the same
// work again on the first `fraction` of dimension 0 (rewriting identical
// values), so the function is unchanged and the work grows by `fraction`.
Result<std::string> SlowedReference(const VerifierOptions& o, const Task& t,
                                    double fraction) {
  const std::string name =
      o.backend == Backend::kCuda ? "bench/slowdown.cu.in" : "bench/slowdown.cc.in";
  SKILLDB_ASSIGN_OR_RETURN(
      std::string templ,
      internal::ReadFile(internal::JoinPath(o.task_dir, "../" + name)));
  const std::string ref =
      o.backend == Backend::kCuda ? t.reference_cuda : t.reference_cpp;
  const size_t at = templ.find("{{REFERENCE}}");
  if (at == std::string::npos) return Status::Internal("bad slowdown template");
  templ.replace(at, 13, ref);
  char frac[32];
  std::snprintf(frac, sizeof(frac), "%.4f", fraction);
  for (size_t f = templ.find("{{FRACTION}}"); f != std::string::npos;
       f = templ.find("{{FRACTION}}", f)) {
    templ.replace(f, 12, frac);
  }
  return templ;
}

}  // namespace

std::string Args::Get(const std::string& key, const std::string& def) const {
  auto it = values.find(key);
  return it == values.end() ? def : it->second;
}
int Args::GetInt(const std::string& key, int def) const {
  return Has(key) ? std::atoi(Get(key).c_str()) : def;
}
double Args::GetDouble(const std::string& key, double def) const {
  return Has(key) ? std::atof(Get(key).c_str()) : def;
}

VerifierOptions OptionsFrom(const Args& args) {
  auto backend = ParseBackend(args.Get("backend", "host"));
  VerifierOptions o = DefaultOptions(backend.ok() ? *backend : Backend::kHost);
  if (args.Has("cache")) o.cache_dir = args.Get("cache");
  if (args.Has("no-screen")) o.static_screen = false;
  // Confinement off, to measure its cost: the worker sandbox and the
  // compiler's namespaces (the compiler's resource limits stay).
  if (args.Has("no-confine")) {
    o.sandbox = false;
    o.confine_compiler = false;
  }
  if (args.Has("compile-memory-mib")) {
    o.limits.compile_memory_bytes =
        int64_t{args.GetInt("compile-memory-mib", 8192)} << 20;
  }
  if (args.Has("tau")) o.decision.min_speedup = args.GetDouble("tau", kDefaultMinSpeedup);
  if (args.Has("workers")) o.host_workers = args.GetInt("workers", 1);
  if (args.Has("min-calls")) {
    o.min_timed_calls_per_round = args.GetInt("min-calls", 30);
  }
  return o;
}

int RunVerify(const Args& args) {
  auto v = Make(args);
  if (!v.ok()) return 1;
  VerificationRequest r;
  r.task = args.Get("task");
  auto cand = ArtifactFromFile(args.Get("candidate"));
  if (!cand.ok()) {
    std::fprintf(stderr, "%s\n", cand.status().ToString().c_str());
    return 2;
  }
  r.candidate = *cand;
  if (args.Has("baseline")) {
    auto base = ArtifactFromFile(args.Get("baseline"));
    if (!base.ok()) {
      std::fprintf(stderr, "%s\n", base.status().ToString().c_str());
      return 2;
    }
    r.baseline = *base;
  }
  r.rounds = args.GetInt("rounds", 3);
  r.timed_calls_per_round = args.GetInt("calls", 30);
  r.seed = static_cast<uint64_t>(args.GetInt("seed", 0));
  auto d = (*v)->VerifyDetailed(r);
  if (!d.ok()) {
    std::fprintf(stderr, "verification error: %s\n", d.status().ToString().c_str());
    return 1;
  }
  std::printf("%s", FormatReportText(d->report).c_str());
  std::printf("times: compile %.0f ms%s, correctness %.0f ms, timing %.0f ms, "
              "total %.0f ms\n",
              d->times.compile_ms, d->times.compile_cache_hit ? " (cached)" : "",
              d->times.correctness_ms, d->times.timing_ms, d->times.total_ms);
  WriteJson(args, ReportJson(*d));
  return d->report.passed ? 0 : 3;
}

int RunCandidates(const Args& args) {
  auto v = Make(args);
  if (!v.ok()) return 1;
  const VerifierOptions& o = (*v)->options();
  const std::string only = args.Get("only");
  json rows = json::array();
  int total = 0, met = 0;
  std::printf("%-26s %-26s %-14s %-9s %-8s %s\n", "task", "candidate", "expected",
              "verdict", "speedup", "findings");
  for (const std::string& name : TaskList(args, o)) {
    auto task = LoadTask(o.task_dir, name);
    if (!task.ok()) {
      std::printf("%s: %s\n", name.c_str(), task.status().ToString().c_str());
      ++total;
      continue;
    }
    auto cands = LoadCandidates(o.task_dir, *task, LanguageFor(o.backend));
    if (!cands.ok()) continue;
    for (const Candidate& c : *cands) {
      if (!only.empty() && c.spec.name.rfind(only, 0) != 0) continue;
      if (args.Has("skip-hacks") && c.spec.generated) continue;
      VerificationRequest r;
      r.task = name;
      r.candidate = {c.spec.name, std::string(SourceLanguageName(c.spec.language)),
                     c.source};
      auto d = (*v)->VerifyDetailed(r);
      ++total;
      json row = {{"task", name}, {"candidate", c.spec.name},
                  {"generated", c.spec.generated}, {"note", c.spec.note},
                  {"expect_pass", c.spec.expect_pass}};
      if (!d.ok()) {
        row["error"] = d.status().ToString();
        std::printf("%-26s %-26s ERROR %s\n", name.c_str(), c.spec.name.c_str(),
                    d.status().ToString().c_str());
        rows.push_back(row);
        continue;
      }
      const bool ok = MeetsExpectation(c.spec, *d, o.static_screen);
      met += ok;
      row["met_expectation"] = ok;
      row["report"] = ReportJson(*d);
      rows.push_back(row);
      std::printf("%-26s %-26s %-14s %-9s %-8.3f %s%s\n", name.c_str(),
                  c.spec.name.c_str(), c.spec.expect_pass ? "pass" : "reject",
                  d->report.passed ? "PASSED" : "rejected", d->report.speedup.ratio,
                  Codes(d->findings).c_str(), ok ? "" : "   <-- UNEXPECTED");
      std::fflush(stdout);
    }
  }
  std::printf("candidates meeting expectation: %d / %d\n", met, total);
  WriteJson(args, {{"mode", "candidates"}, {"static_screen", o.static_screen},
                   {"total", total}, {"met", met}, {"rows", rows}});
  return met == total ? 0 : 3;
}

int RunFalsePositives(const Args& args) {
  auto v = Make(args);
  if (!v.ok()) return 1;
  const VerifierOptions& o = (*v)->options();
  const std::vector<std::string> tasks = TaskList(args, o);
  const int trials = args.GetInt("trials", 200);
  const int per_task = std::max(1, (trials + static_cast<int>(tasks.size()) - 1) /
                                       static_cast<int>(tasks.size()));
  json per = json::array();
  int total = 0, positives = 0, invalid_total = 0;
  std::printf("%-26s %6s %4s %8s %8s %10s %10s\n", "task", "trials", "fp",
              "median", "max", "cv_calls", "cv_rounds");
  for (const std::string& name : tasks) {
    auto task = LoadTask(o.task_dir, name);
    if (!task.ok()) continue;
    const std::string& ref = o.backend == Backend::kCuda ? task->reference_cuda
                                                         : task->reference_cpp;
    std::vector<double> ratios, cv_calls, round_medians;
    int fp = 0, invalid = 0;
    std::string invalid_reason;
    for (int t = 0; t < per_task; ++t) {
      VerificationRequest r;
      r.task = name;
      r.candidate = {"identical-copy",
                     std::string(SourceLanguageName(LanguageFor(o.backend))), ref};
      r.check_correctness = false;
      auto d = (*v)->VerifyDetailed(r);
      if (!d.ok()) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), d.status().ToString().c_str());
        break;
      }
      // A trial counts only if the copy reached the timing decision; a copy
      // rejected before timing (a setup fault) says nothing about noise.
      if (d->report.rounds.empty()) {
        ++invalid;
        ++invalid_total;
        if (!d->report.reasons.empty()) invalid_reason = d->report.reasons.front();
        continue;
      }
      ++total;
      if (d->report.passed) {
        ++fp;
        ++positives;
      }
      ratios.push_back(d->report.speedup.ratio);
      for (const RoundTiming& rt : d->report.rounds) {
        cv_calls.push_back(CoefficientOfVariation(rt.baseline_ms));
        round_medians.push_back(rt.baseline_median_ms);
      }
    }
    if (ratios.empty()) {
      std::printf("%-26s no valid trial (%d rejected before timing: %s)\n", name.c_str(),
                  invalid, invalid_reason.c_str());
      per.push_back({{"task", name}, {"trials", 0}, {"invalid_trials", invalid},
                     {"invalid_reason", invalid_reason}});
      continue;
    }
    const double cv_r = CoefficientOfVariation(round_medians);
    std::printf("%-26s %6zu %4d %8.4f %8.4f %10.4f %10.4f\n", name.c_str(),
                ratios.size(), fp, Median(ratios),
                *std::max_element(ratios.begin(), ratios.end()),
                Median(cv_calls), cv_r);
    std::fflush(stdout);
    per.push_back({{"task", name}, {"trials", ratios.size()}, {"invalid_trials", invalid},
                   {"false_positives", fp},
                   {"median_ratio", Median(ratios)},
                   {"max_ratio", *std::max_element(ratios.begin(), ratios.end())},
                   {"cv_within_round_median", Median(cv_calls)},
                   {"cv_round_medians", cv_r},
                   {"reference_median_ms", Median(round_medians)}});
  }
  const double rate = total > 0 ? static_cast<double>(positives) / total : NAN;
  std::printf("false positives: %d of %d valid trials (%.2f%%) at tau = %.3f; %d "
              "trials rejected before timing\n",
              positives, total, 100 * rate, o.decision.min_speedup, invalid_total);
  WriteJson(args, {{"mode", "fp"}, {"tau", o.decision.min_speedup},
                   {"trials", total}, {"invalid_trials", invalid_total},
                   {"false_positives", positives},
                   {"rate", rate}, {"tasks", per}});
  return 0;
}

int RunPower(const Args& args) {
  auto v = Make(args);
  if (!v.ok()) return 1;
  const VerifierOptions& o = (*v)->options();
  std::vector<std::string> tasks = args.Has("tasks")
                                       ? Split(args.Get("tasks"))
                                       : std::vector<std::string>{"softmax_rows_fp32"};
  const int trials = args.GetInt("trials", 200);
  const double fraction = args.GetDouble("slowdown", 0.3);
  const int per_task = std::max(1, (trials + static_cast<int>(tasks.size()) - 1) /
                                       static_cast<int>(tasks.size()));
  json per = json::array();
  int total = 0, detected = 0;
  for (const std::string& name : tasks) {
    auto task = LoadTask(o.task_dir, name);
    if (!task.ok()) continue;
    auto slowed = SlowedReference(o, *task, fraction);
    if (!slowed.ok()) {
      std::fprintf(stderr, "%s\n", slowed.status().ToString().c_str());
      return 1;
    }
    const std::string lang(SourceLanguageName(LanguageFor(o.backend)));
    const std::string& ref = o.backend == Backend::kCuda ? task->reference_cuda
                                                         : task->reference_cpp;
    std::vector<double> ratios;
    int hits = 0, invalid = 0;
    for (int t = 0; t < per_task; ++t) {
      VerificationRequest r;
      r.task = name;
      r.baseline = {"slowed-reference", lang, *slowed};
      r.candidate = {"reference", lang, ref};
      r.check_correctness = t == 0;  // the candidate is the reference
      auto d = (*v)->VerifyDetailed(r);
      if (!d.ok()) {
        std::fprintf(stderr, "%s\n", d.status().ToString().c_str());
        break;
      }
      if (d->report.rounds.empty()) {  // rejected before timing: not a trial
        ++invalid;
        continue;
      }
      ++total;
      hits += d->report.passed;
      detected += d->report.passed;
      ratios.push_back(d->report.speedup.ratio);
    }
    if (ratios.empty()) {
      std::printf("%-26s no valid trial (%d rejected before timing)\n", name.c_str(), invalid);
      per.push_back({{"task", name}, {"trials", 0}, {"invalid_trials", invalid}});
      continue;
    }
    std::printf("%-26s trials %zu detected %d (%.1f%%) median true ratio %.4f "
                "(min %.4f)\n", name.c_str(), ratios.size(), hits,
                100.0 * hits / ratios.size(), Median(ratios),
                *std::min_element(ratios.begin(), ratios.end()));
    per.push_back({{"task", name}, {"trials", ratios.size()}, {"invalid_trials", invalid},
                   {"detected", hits},
                   {"median_ratio", Median(ratios)},
                   {"min_ratio", *std::min_element(ratios.begin(), ratios.end())}});
  }
  const double rate = total > 0 ? static_cast<double>(detected) / total : NAN;
  std::printf("power: %d of %d trials detected (%.2f%%) at tau = %.3f\n",
              detected, total, 100 * rate, o.decision.min_speedup);
  WriteJson(args, {{"mode", "power"}, {"tau", o.decision.min_speedup},
                   {"slowdown_fraction", fraction}, {"trials", total},
                   {"detected", detected}, {"rate", rate}, {"tasks", per}});
  return 0;
}

int RunThroughput(const Args& args) {
  Args a = args;
  const std::string cache = args.Get("cache", "/tmp/skilldb-throughput-cache");
  a.values["cache"] = cache;
  json phases = json::array();
  for (const char* phase : {"cold", "warm"}) {
    if (std::string(phase) == "cold") internal::RemoveTree(cache);
    auto v = Make(a);
    if (!v.ok()) return 1;
    const VerifierOptions& o = (*v)->options();
    const std::string pick = args.Get("candidate", "fast");
    int n = 0, passed = 0;
    double compile_s = 0;
    json records = json::array();
    const auto t0 = Clock::now();
    for (const std::string& name : TaskList(args, o)) {
      auto task = LoadTask(o.task_dir, name);
      if (!task.ok()) continue;
      auto cands = LoadCandidates(o.task_dir, *task, LanguageFor(o.backend));
      if (!cands.ok()) continue;
      for (const Candidate& c : *cands) {
        if (c.spec.name != pick) continue;
        VerificationRequest r;
        r.task = name;
        r.candidate = {c.spec.name, std::string(SourceLanguageName(c.spec.language)),
                       c.source};
        const auto tc = Clock::now();
        auto d = (*v)->VerifyDetailed(r);
        if (!d.ok()) continue;
        ++n;
        passed += d->report.passed;
        compile_s += d->times.compile_ms / 1000;
        json codes = json::array();
        for (const Finding& f : d->findings) codes.push_back(FindingCodeName(f.code));
        records.push_back({{"task", name}, {"wall_s", SecondsSince(tc)},
                           {"compile_ms", d->times.compile_ms},
                           {"passed", d->report.passed}, {"findings", codes}});
      }
    }
    const double wall = SecondsSince(t0);
    const double per_min = n / wall * 60.0;
    std::printf("%s cache: %d candidates in %.1f s (%.1f s compiling): %.1f "
                "candidates/min per GPU, %d passed\n",
                phase, n, wall, compile_s, per_min, passed);
    phases.push_back({{"phase", phase}, {"candidates", n}, {"wall_s", wall},
                      {"compile_s", compile_s}, {"per_minute", per_min},
                      {"passed", passed}, {"records", records}});
  }
  WriteJson(args, {{"mode", "throughput"}, {"phases", phases}});
  return 0;
}

int RunDescribe(const Args& args) {
  auto v = Make(args);
  if (!v.ok()) return 1;
  auto d = (*v)->Describe();
  if (!d.ok()) {
    std::fprintf(stderr, "%s\n", d.status().ToString().c_str());
    return 1;
  }
  std::printf("device %s (%s), %d worker(s), cache %lld bytes, bandwidth %.1f "
              "GB/s, fp32 %.3f TFLOP/s, %s\n",
              d->name.c_str(), d->device_class.c_str(), d->devices,
              static_cast<long long>(d->cache_bytes),
              d->bandwidth_bytes_per_s / 1e9, d->fp32_flops_per_s / 1e12,
              d->notes.c_str());
  WriteJson(args, {{"mode", "describe"}, {"name", d->name},
                   {"device_class", d->device_class}, {"devices", d->devices},
                   {"cache_bytes", d->cache_bytes},
                   {"bandwidth_bytes_per_s", d->bandwidth_bytes_per_s},
                   {"fp32_flops_per_s", d->fp32_flops_per_s}, {"notes", d->notes}});
  return 0;
}

}  // namespace skilldb::verify::bench

namespace skilldb::verify::bench {

int RunPrecompile(const Args& args) {
  const VerifierOptions o = OptionsFrom(args);
  CompilerOptions co;
  co.nvcc_path = o.nvcc_path;
  co.cxx_path = o.cxx_path;
  co.cache_dir = o.cache_dir;
  co.protocol_dir = o.protocol_dir;
  auto compiler = Compiler::Make(co);
  if (!compiler.ok()) {
    std::fprintf(stderr, "%s\n", compiler.status().ToString().c_str());
    return 1;
  }
  const SourceLanguage lang = LanguageFor(o.backend);
  std::vector<std::string> sources;
  for (const std::string& name : TaskList(args, o)) {
    auto task = LoadTask(o.task_dir, name);
    if (!task.ok()) continue;
    sources.push_back(lang == SourceLanguage::kCuda ? task->reference_cuda
                                                    : task->reference_cpp);
    auto cands = LoadCandidates(o.task_dir, *task, lang);
    if (!cands.ok()) continue;
    for (const Candidate& c : *cands) sources.push_back(c.source);
  }
  const int threads = std::max(1, args.GetInt("threads", 8));
  std::atomic<size_t> next{0};
  std::atomic<int> failed{0};
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < sources.size(); i = next++) {
        auto r = (*compiler)->Compile(sources[i], lang);
        if (!r.ok() || !r->ok) ++failed;
      }
    });
  }
  for (std::thread& t : pool) t.join();
  std::printf("precompiled %zu sources with %d threads in %.1f s (%d did not compile)\n",
              sources.size(), threads, SecondsSince(t0), failed.load());
  return 0;
}

}  // namespace skilldb::verify::bench
