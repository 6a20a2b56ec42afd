// Run directories (answers by level, problem and sample), resumable
// evaluation of all of them, and KernelBench's scoring (score.py).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <thread>
#include <tuple>

#include "file_util.h"
#include "kb_internal.h"
#include "skilldb/util/clock.h"
#include "skilldb/util/parallel.h"
#include "skilldb/util/sha256.h"

namespace skilldb::verify::kb {
namespace {

using internal::json;
using internal::IsDirectory;
using internal::ListDir;
using internal::Num;
using verify::internal::JoinPath;




int Int(const std::string& s) { return std::atoi(s.c_str()); }

// What makes two results the same evaluation (for resuming).
std::string ResumeKey(int level, int problem, int sample, const std::string& hash,
                      const std::string& protocol) {
  return std::to_string(level) + "/" + std::to_string(problem) + "/" + std::to_string(sample) +
         "/" + hash + "/" + protocol;
}

}  // namespace

// ---- score.py ----------------------------------------------------------------

double FastP(const std::vector<ScoredProblem>& problems, int n, double p) {
  if (n <= 0) return 0;
  int count = 0;
  for (const ScoredProblem& s : problems) {
    if (!s.correct) continue;
    const double speedup = s.baseline_ms / s.answer_ms;
    if (speedup > p) ++count;  // strictly greater, as score.py's np.sum(speed_up > p)
  }
  return static_cast<double>(count) / n;
}

double GeomeanCorrect(const std::vector<ScoredProblem>& problems) {
  double log_sum = 0;
  int n = 0;
  bool nan = false;
  for (const ScoredProblem& s : problems) {
    if (!s.correct) continue;
    const double speedup = s.baseline_ms / s.answer_ms;
    ++n;
    if (!(speedup > 0)) nan = true;  // numpy: a negative product's root is NaN
    else log_sum += std::log(speedup);
  }
  if (n == 0) return 0;
  return nan ? NAN : std::exp(log_sum / n);
}

double GeomeanCorrectAndFaster(const std::vector<ScoredProblem>& problems) {
  double log_sum = 0;
  int n = 0;
  for (const ScoredProblem& s : problems) {
    if (!s.correct) continue;
    const double speedup = s.baseline_ms / s.answer_ms;
    if (!(speedup > 1)) continue;
    log_sum += std::log(speedup);
    ++n;
  }
  return n == 0 ? 0 : std::exp(log_sum / n);
}

double PassAtK(int n, int c, int k) {
  if (n - c < k) return 1.0;
  double prod = 1.0;
  for (int i = n - c + 1; i <= n; ++i) prod *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - prod;
}

std::vector<LevelScore> ScoreResults(const std::vector<EvalResult>& results,
                                     const std::map<int, int>& problems_per_level,
                                     const std::string& baseline, bool credit) {
  std::vector<LevelScore> out;
  for (const auto& [level, n] : problems_per_level) {
    LevelScore s;
    s.level = level;
    s.baseline = baseline;
    s.problems = n;
    std::vector<ScoredProblem> scored;
    std::map<int, std::pair<int, int>> samples;  // problem -> (n, correct)
    for (const EvalResult& r : results) {
      if (r.level != level) continue;
      const bool counts = r.verdict == "correct" || (credit && r.verdict == "not_credited");
      auto& ps = samples[r.problem];
      ++ps.first;
      ps.second += counts ? 1 : 0;
      if (r.sample != 0) continue;  // score.py reads sample 0 only
      ++s.evaluated;
      s.compiled += r.compiled ? 1 : 0;
      s.correct += counts ? 1 : 0;
      s.not_credited += r.verdict == "not_credited" ? 1 : 0;
      const std::optional<double>& sp =
          baseline == "compile" ? r.speedup_compile : r.speedup_eager;
      ScoredProblem p;
      p.correct = counts;
      // score.py's speedup is baseline / answer: the answer's time and its
      // speedup give the baseline it was measured against. A correct answer
      // without a speedup (timing failed) scores as eval.py's runtime -1.
      p.answer_ms = sp && r.candidate_ms > 0 ? r.candidate_ms : -1;
      p.baseline_ms = sp && r.candidate_ms > 0 ? *sp * r.candidate_ms : 1;
      scored.push_back(p);
    }
    for (double p : kFastPValues) s.fast_p[p] = FastP(scored, n, p);
    s.geomean_correct = GeomeanCorrect(scored);
    s.geomean_correct_and_faster = GeomeanCorrectAndFaster(scored);
    int max_samples = 0;
    for (const auto& [id, nc] : samples) max_samples = std::max(max_samples, nc.first);
    if (max_samples > 1) {
      for (int k : {1, 5, 10}) {
        if (k > max_samples) break;
        double sum = 0;
        int m = 0;
        for (const auto& [id, nc] : samples) {
          if (nc.first < k) continue;
          sum += PassAtK(nc.first, nc.second, k);
          ++m;
        }
        if (m > 0) s.pass_at_k[k] = sum / m;
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

// ---- Run directories ---------------------------------------------------------

Result<std::vector<AnswerFile>> FindAnswers(const std::string& run_dir) {
  if (!IsDirectory(run_dir)) return Status::NotFound("no run directory " + run_dir);
  static const std::regex kFlat(R"(level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py)");
  static const std::regex kLevel(R"(level(\d+))");
  static const std::regex kFile(R"((\d+)(?:_.*)?\.py)");
  static const std::regex kSample(R"(sample_(\d+)\.py)");
  std::vector<AnswerFile> out;
  std::smatch m;
  for (const std::string& e : ListDir(run_dir)) {
    const std::string path = JoinPath(run_dir, e);
    if (std::regex_match(e, m, kFlat)) {
      out.push_back({Int(m[1]), Int(m[2]), Int(m[3]), path});
      continue;
    }
    if (!std::regex_match(e, m, kLevel) || !IsDirectory(path)) continue;
    const int level = Int(m[1]);
    for (const std::string& f : ListDir(path)) {
      const std::string fp = JoinPath(path, f);
      if (std::regex_match(f, m, kFile) && !IsDirectory(fp)) {
        out.push_back({level, Int(m[1]), 0, fp});
      } else if (IsDirectory(fp) && f.find_first_not_of("0123456789") == std::string::npos) {
        for (const std::string& s : ListDir(fp)) {
          if (std::regex_match(s, m, kSample)) {
            out.push_back({level, Int(f), Int(m[1]), JoinPath(fp, s)});
          }
        }
      }
    }
  }
  if (out.empty()) {
    return Status::InvalidArgument(
        "no answers in " + run_dir +
        ": expected level_<L>_problem_<P>_sample_<S>_kernel.py (KernelBench's layout), "
        "level<L>/<P>_*.py or level<L>/<P>/sample_<S>.py");
  }
  std::sort(out.begin(), out.end(), [](const AnswerFile& a, const AnswerFile& b) {
    return std::tie(a.level, a.problem, a.sample) < std::tie(b.level, b.problem, b.sample);
  });
  return out;
}

Result<RunReport> EvaluateRunDir(const RunOptions& o, Evaluator* ev, const TaskStore& store) {
  SKILLDB_ASSIGN_OR_RETURN(std::vector<AnswerFile> all, FindAnswers(o.run_dir));
  SKILLDB_ASSIGN_OR_RETURN(std::vector<int> ids, ParseIdList(o.problems));
  const std::string protocol(ProtocolName(ev->options().protocol));
  const std::string results_path =
      o.results_path.empty() ? JoinPath(o.run_dir, "skilldb_eval.jsonl") : o.results_path;
  RunReport report;
  report.protocol = protocol;
  // Results already known (a stopped run resumes here).
  std::map<std::string, EvalResult> known;
  if (verify::internal::FileExists(results_path)) {
    SKILLDB_ASSIGN_OR_RETURN(std::string text, verify::internal::ReadFile(results_path));
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      auto r = ResultFromJson(std::string_view(text).substr(start, end - start));
      if (r.ok()) {
        known[ResumeKey(r->level, r->problem, r->sample, r->answer_hash,
                        std::string(ProtocolName(r->protocol)))] = *r;
      }
      start = end + 1;
    }
  }
  struct Work {
    AnswerFile file;
    Problem problem;
    std::string answer;
  };
  std::vector<Work> work;
  std::set<int> levels;
  for (const AnswerFile& a : all) {
    if ((o.level > 0 && a.level != o.level) || !InIdList(ids, a.problem)) continue;
    levels.insert(a.level);
    auto p = store.Get(a.level, a.problem);
    if (!p.ok()) {
      if (o.progress) o.progress("skipped " + a.path + ": " + p.status().message());
      continue;
    }
    SKILLDB_ASSIGN_OR_RETURN(std::string answer, verify::internal::ReadFile(a.path, 4 << 20));
    work.push_back({a, std::move(*p), std::move(answer)});
  }
  // Largest problems first (by their inputs' bytes; the results are still
  // reported in answer order): their answers take longest to judge, and
  // begun last they were the run's tail. In the study of 2026-12-06 on the
  // H100 (18 answers, 8 workers), level 1's problem 40 (256 MiB of inputs)
  // sorted after problem 12: its two answers were judged in 12-18 s each
  // and ended the run 20 s after the rest.
  std::vector<size_t> order(work.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return work[a].problem.input_bytes > work[b].problem.input_bytes;
  });
  // Build ahead: the pool builds in that order while the device evaluates.
  for (size_t i : order) {
    const Work& w = work[i];
    const std::string hash = util::Sha256Hex(w.answer);
    if (!known.count(ResumeKey(w.file.level, w.file.problem, w.file.sample, hash, protocol))) {
      ev->Prebuild(w.problem, w.answer, o.declared_backend);
    }
  }
  std::ofstream out(results_path, std::ios::app);
  if (!out) return Status::IOError("cannot append to " + results_path);
  // Answers judged at once: one per device of the evaluator. Results are
  // appended as they come (a stopped run resumes from any order) and
  // reported in answer order.
  std::vector<EvalResult> results(work.size());
  std::vector<bool> resumed(work.size(), false);
  std::mutex mu;  // guards out, done, first_error and the progress lines
  Status first_error;
  size_t done = 0;
  const auto started = util::SteadyClock::now();  // progress lines say when
  auto finish = [&](size_t i) {  // REQUIRES: mu held
    ++done;
    if (!o.progress) return;
    const Work& w = work[i];
    const EvalResult& r = results[i];
    std::string line =
        "[" + std::to_string(done) + "/" + std::to_string(work.size()) + " +" +
        Num(util::MsSince(started) / 1000.0, "%.1f") + "s] " + w.problem.key() +
        " sample " + std::to_string(w.file.sample) + ": " + r.verdict;
    if (r.speedup_eager) line += ", " + Num(*r.speedup_eager) + "x over eager";
    if (r.speedup_compile) line += ", " + Num(*r.speedup_compile) + "x over torch.compile";
    if (!r.findings.empty() && !r.correct) {
      line += " [" + std::string(FindingCodeName(r.findings.front().code)) + "]";
    }
    if (resumed[i]) line += " (resumed)";
    o.progress(line);
  };
  std::vector<size_t> pending;
  for (size_t i : order) {
    const Work& w = work[i];
    const std::string key = ResumeKey(w.file.level, w.file.problem, w.file.sample,
                                      util::Sha256Hex(w.answer), protocol);
    if (auto it = known.find(key); it != known.end()) {
      results[i] = it->second;
      resumed[i] = true;
      ++report.resumed;
      std::lock_guard<std::mutex> lock(mu);
      finish(i);
    } else {
      pending.push_back(i);
    }
  }
  std::atomic<size_t> next{0};
  auto evaluate = [&]() {
    for (size_t k = next++; k < pending.size(); k = next++) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!first_error.ok()) return;
      }
      const size_t i = pending[k];
      const Work& w = work[i];
      auto r = ev->Evaluate(w.problem, w.answer, o.declared_backend);
      std::lock_guard<std::mutex> lock(mu);
      if (!r.ok()) {
        if (first_error.ok()) first_error = r.status();
        return;
      }
      results[i] = std::move(*r);
      results[i].sample = w.file.sample;
      out << ResultToJson(results[i]) << "\n";
      out.flush();
      if (!out) {
        if (first_error.ok()) first_error = Status::IOError("cannot append to " + results_path);
        return;
      }
      finish(i);
    }
  };
  const size_t threads =
      std::min(pending.size(), static_cast<size_t>(std::max(1, ev->Parallelism())));
  util::RunOnThreads(threads, evaluate);
  if (!first_error.ok()) return first_error;
  report.results = std::move(results);
  // n per level: the store's problems in the selection, plus those that
  // could not be imported (KernelBench counts every problem of the level).
  std::map<int, int> per_level;
  for (int level : levels) {
    SKILLDB_ASSIGN_OR_RETURN(std::vector<Problem> ps, store.List(level));
    SKILLDB_ASSIGN_OR_RETURN(std::vector<Unimportable> bad, store.ListUnimportable(level));
    int n = 0;
    for (const Problem& p : ps) n += InIdList(ids, p.id) ? 1 : 0;
    for (const Unimportable& u : bad) n += (u.id > 0 && InIdList(ids, u.id)) ? 1 : 0;
    per_level[level] = n;
  }
  report.eager = ScoreResults(report.results, per_level, "eager", ev->options().credit_torch_ops);
  report.compile =
      ScoreResults(report.results, per_level, "compile", ev->options().credit_torch_ops);
  if (auto d = ev->Describe(); d.ok()) report.device = *d;
  return report;
}

std::string RunReportToJson(const RunReport& r) {
  auto levels = [](const std::vector<LevelScore>& v) {
    json out = json::array();
    for (const LevelScore& s : v) {
      json fp = json::object();
      for (const auto& [p, val] : s.fast_p) fp[Num(p, "%.1f")] = val;
      json pk = json::object();
      for (const auto& [k, val] : s.pass_at_k) pk[std::to_string(k)] = val;
      out.push_back({{"level", s.level},
                     {"baseline", s.baseline},
                     {"total_count", s.problems},
                     {"total_eval", s.evaluated},
                     {"compiled_count", s.compiled},
                     {"correct_count", s.correct},
                     {"not_credited_count", s.not_credited},
                     {"compilation_rate", s.problems ? double(s.compiled) / s.problems : 0.0},
                     {"correctness_rate", s.problems ? double(s.correct) / s.problems : 0.0},
                     {"fast_p", fp},
                     {"geo_mean_speedup", std::isnan(s.geomean_correct)
                                              ? json(nullptr) : json(s.geomean_correct)},
                     {"geo_mean_speedup_correct_and_faster", s.geomean_correct_and_faster},
                     {"pass_at_k", pk}});
    }
    return out;
  };
  json results = json::array();
  for (const EvalResult& e : r.results) results.push_back(json::parse(ResultToJson(e)));
  json j = {{"protocol", r.protocol},
            {"device", {{"name", r.device.name}, {"torch", r.device.torch_version},
                        {"triton", r.device.triton_version},
                        {"bandwidth_bytes_per_s", r.device.bandwidth_bytes_per_s},
                        {"fp32_flops_per_s", r.device.fp32_flops_per_s}}},
            {"resumed", r.resumed},
            {"levels_eager", levels(r.eager)},
            {"levels_compile", levels(r.compile)},
            {"results", results}};
  return internal::Dump(j);
}

std::string FormatRunReport(const RunReport& r) {
  std::string s = "protocol: " + r.protocol + ", device: " + r.device.name + ", torch " +
                  r.device.torch_version + "\n";
  std::map<std::string, int> verdicts;
  for (const EvalResult& e : r.results) ++verdicts[e.verdict];
  s += "answers: " + std::to_string(r.results.size()) + " (";
  bool first = true;
  for (const auto& [v, n] : verdicts) {
    s += (first ? "" : ", ") + std::to_string(n) + " " + v;
    first = false;
  }
  s += ")" + (r.resumed ? ", " + std::to_string(r.resumed) + " resumed" : std::string()) + "\n";
  for (const auto* set : {&r.eager, &r.compile}) {
    for (const LevelScore& l : *set) {
      s += "level " + std::to_string(l.level) + " over " + l.baseline + ": n=" +
           std::to_string(l.problems) + " correct " + std::to_string(l.correct) +
           (l.not_credited ? " (+" + std::to_string(l.not_credited) + " not credited)" : "") +
           " |";
      for (const auto& [p, v] : l.fast_p) s += " fast_" + Num(p, "%.1f") + " " + Num(v, "%.3f");
      s += " | geomean " + (std::isnan(l.geomean_correct) ? std::string("nan")
                                                            : Num(l.geomean_correct, "%.3f"));
      for (const auto& [k, v] : l.pass_at_k) s += " pass@" + std::to_string(k) + " " + Num(v, "%.3f");
      s += "\n";
    }
  }
  return s;
}

}  // namespace skilldb::verify::kb
