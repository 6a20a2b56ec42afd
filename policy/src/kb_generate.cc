// `skilldb kernelbench run`: trajectories over KernelBench problems, each
// turn generated, extracted and verified as it arrives. Trajectories run on
// a pool of threads, so the model generates for some while the evaluator
// builds and judges others (the evaluator itself builds on its pool and
// queues evaluations for the device).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <optional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "skilldb/policy/kernelbench_run.h"
#include "skilldb/util/file.h"
#include "skilldb/util/parallel.h"
#include "skilldb/util/sha256.h"
#include "skilldb/util/text.h"

namespace skilldb::policy {
namespace kb_generate_detail {

namespace kbv = verify::kb;
using json = nlohmann::json;

struct KbTurn {
  int turn = 0;
  std::string completion;
  std::string finish_reason;
  std::string generation_error;
  KernelBenchExtraction extraction;
  std::optional<kbv::EvalResult> result;
  std::string verification_error;
  std::string feedback;
  std::string answer;  // the file written for this turn
  double generation_ms = 0;
  double verification_ms = 0;
};

struct KbTrajectory {
  kbv::Problem problem;
  int sample = 0;
  std::vector<std::string> skill_ids;
  std::vector<KernelBenchSkill> skills;  // shown in the first user message
  Version library_version = 0;
  std::string selection_error;
  std::vector<KbTurn> turns;
  int best = -1;  // index into turns of the answer written to the layout
  // The library version an earlier run's turns were shown skills from: the
  // resumed turns see the same skills.
  std::optional<Version> resumed_library_version;
};

double Ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - since)
      .count();
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

std::string FileName(int level, int problem, int sample) {
  return "level_" + std::to_string(level) + "_problem_" +
         std::to_string(problem) + "_sample_" + std::to_string(sample) +
         "_kernel.py";
}

bool Credited(const kbv::EvalResult& r) {
  return r.correct && r.credited && r.verdict == "correct";
}

// How good an answer is, for choosing the one the layout shows: credited
// and faster beats credited, which beats correct, which beats compiled.
double Merit(const KbTurn& t) {
  if (!t.result) return -1;
  const kbv::EvalResult& r = *t.result;
  if (Credited(r)) return 3 + std::min(r.speedup_eager.value_or(0), 1e6);
  if (r.correct) return 2;
  if (r.compiled) return 1;
  return 0;
}

// A result for a turn that produced nothing to run, so the layout's file
// scores as kernelbench eval would count it (not compiled) without a runner.
kbv::EvalResult Unrunnable(const KbTrajectory& t, const std::string& answer,
                           const std::string& verdict, const std::string& why,
                           kbv::Protocol protocol) {
  kbv::EvalResult r;
  r.level = t.problem.level;
  r.problem = t.problem.id;
  r.sample = t.sample;
  r.problem_name = t.problem.name;
  r.answer_hash = util::Sha256Hex(answer);
  r.protocol = protocol;
  r.verdict = verdict;
  r.error_code = "COMPILATION_ERROR";
  r.error_message = why;
  return r;
}

std::string SelectionQuery(const kbv::Problem& p) {
  std::string name = p.name;
  if (name.size() > 3 && name.compare(name.size() - 3, 3, ".py") == 0)
    name.resize(name.size() - 3);
  std::replace(name.begin(), name.end(), '_', ' ');
  return name + "\n" + p.source.substr(0, 2000);
}

class Runner {
 public:
  Runner(const KernelBenchRunOptions& o, llm::Backbone* backbone,
         kbv::Evaluator* ev)
      : o_(o), backbone_(backbone), ev_(ev) {}

  // `wanted`: the trajectories of this run (Key), the only ones read back
  // from an earlier run.
  Status Prepare(std::set<std::string> wanted) {
    SKILLDB_RETURN_IF_ERROR(util::MakeDirs(o_.out_dir));
    SKILLDB_RETURN_IF_ERROR(util::MakeDirs(o_.out_dir + "/turns"));
    auto d = ev_->Describe();
    if (!d.ok()) {
      return Status(d.status().code(),
                    "the verifier cannot describe its device: " +
                        std::string(d.status().message()));
    }
    device_ = DescribeKernelBenchDevice(*d);
    trajectories_path_ = o_.out_dir + "/trajectories.jsonl";
    // Each sample's result goes where kernelbench eval looks first, as soon
    // as the sample is done: a stopped run's results are kept, and the
    // closing table reads them back instead of recomputing.
    results_path_ = o_.out_dir + "/skilldb_eval.jsonl";
    // Every turn as it is judged, whole: a run stopped mid-way resumes its
    // unfinished trajectories from their last judged turn (the model is
    // not asked again for what it answered).
    turns_path_ = o_.out_dir + "/turns.jsonl";
    wanted_ = std::move(wanted);
    SKILLDB_RETURN_IF_ERROR(ReadEarlier());
    SKILLDB_RETURN_IF_ERROR(OpenAppend(trajectories_path_, &trajectories_));
    SKILLDB_RETURN_IF_ERROR(OpenAppend(results_path_, &results_));
    return OpenAppend(turns_path_, &turns_);
  }

  // Opens `path` to append lines; a last line a stop cut short is ended
  // first, so the next line is whole.
  static Status OpenAppend(const std::string& path, std::ofstream* out) {
    bool cut = false;
    {
      std::ifstream in(path, std::ios::binary | std::ios::ate);
      if (in && in.tellg() > 0) {
        in.seekg(-1, std::ios::end);
        cut = in.get() != '\n';
      }
    }
    out->open(path, std::ios::app);
    if (!*out) return Status::IOError("cannot append to " + path);
    if (cut) *out << "\n";
    return Status::Ok();
  }

  // What an earlier run of the same model, format and skill setting left in
  // the directory for this run's trajectories: those that ended
  // (trajectories.jsonl) and every turn judged (turns.jsonl). Lines of
  // other runs or trajectories, lines that are not what this code writes
  // (a cut last line, another program's), and lines over 64 MiB are passed
  // over. IOError if a file exists and cannot be read.
  Status ReadEarlier() {
    constexpr size_t kMaxLine = size_t{64} << 20;
    auto read = [&](const std::string& path, auto&& take) -> Status {
      if (!util::FileExists(path)) return Status::Ok();
      std::ifstream in(path);
      if (!in) return Status::IOError("cannot read " + path);
      std::string line;
      while (std::getline(in, line)) {
        if (line.size() > kMaxLine) continue;
        json j = json::parse(line, nullptr, false);
        try {
          if (!j.is_object() || !SameRun(j)) continue;
          const std::string key = Key(j);
          if (wanted_.count(key) == 0) continue;
          take(key, j);
        } catch (const json::exception&) {  // a field of another type
          continue;
        }
      }
      return Status::Ok();
    };
    SKILLDB_RETURN_IF_ERROR(read(trajectories_path_, [&](const std::string& key,
                                                         const json& j) {
      if (!j.contains("turns") || !j["turns"].is_array()) return;
      std::vector<KbTurn> turns;
      for (const json& tj : j["turns"]) {
        auto t = TurnFromJson(tj);
        if (!t) return;
        turns.push_back(std::move(*t));
      }
      Earlier& e = earlier_[key];  // a later line of the key wins
      e.ended = true;
      e.ended_turns = std::move(turns);
      e.best_turn = j.contains("best_turn") && j["best_turn"].is_number_integer()
                        ? j["best_turn"].get<int>()
                        : 0;
    }));
    return read(turns_path_, [&](const std::string& key, const json& j) {
      if (!j.contains("turn")) return;
      Earlier& e = earlier_[key];
      auto t = TurnFromJson(j["turn"]);
      // In order: a turn is the next one of its trajectory, or not used.
      if (!t || t->turn != static_cast<int>(e.recorded.size()) + 1 ||
          t->turn > o_.turns) {
        return;
      }
      if (j.contains("library_version") &&
          j["library_version"].is_number_unsigned()) {
        e.library_version = j["library_version"].get<Version>();
      }
      e.recorded.push_back(std::move(*t));
    });
  }

  // Takes what an earlier run left for `t`: true when it ended there after
  // exactly the turns this run asks for, the last not a failed generation;
  // its result and files are written, nothing more to do. Otherwise the
  // trajectory goes on after its recorded turns (turns.jsonl, up to this
  // run's --turns; a failed generation was not recorded, so it is asked
  // again), and at its end is written again.
  bool Resume(KbTrajectory* t) {
    auto it = earlier_.find(Key(t->problem.level, t->problem.id, t->sample));
    if (it == earlier_.end()) return false;
    Earlier& e = it->second;
    const bool complete =
        e.ended && !e.ended_turns.empty() &&
        e.ended_turns.back().generation_error.empty() &&
        static_cast<int>(e.ended_turns.size()) == o_.turns;
    if (complete) {
      t->turns = std::move(e.ended_turns);
      for (size_t i = 0; i < t->turns.size(); ++i) {
        if (t->turns[i].turn == e.best_turn) t->best = static_cast<int>(i);
      }
      ++resumed_ended_;
      return true;
    }
    t->turns = std::move(e.recorded);
    t->resumed_library_version = e.library_version;
    resumed_turns_ += static_cast<int>(t->turns.size());
    return false;
  }

  void RunOne(KbTrajectory* t) {
    if (Resume(t)) return;
    SelectSkills(t);
    // A failed generation ends the trajectory: the next prompt would have
    // no answer to give feedback on.
    auto ends = [](const KbTurn& turn) {
      return !turn.generation_error.empty();
    };
    bool stop = !t->turns.empty() && ends(t->turns.back());
    for (int k = static_cast<int>(t->turns.size()) + 1;
         k <= o_.turns && !stop; ++k) {
      KbTurn turn = RunTurn(*t, k);
      stop = ends(turn);
      // A failed generation is not kept for a resumed run: it asks again.
      if (!stop) Record(*t, turn);
      t->turns.push_back(std::move(turn));
    }
    Finish(t);
  }

  const std::string& trajectories_path() const { return trajectories_path_; }
  const std::string& results_path() const { return results_path_; }
  // IOError if a line could not be written to either file.
  Status WriteStatus() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!trajectories_)
      return Status::IOError("cannot append to " + trajectories_path_);
    if (!results_) return Status::IOError("cannot append to " + results_path_);
    if (!turns_) return Status::IOError("cannot append to " + turns_path_);
    return Status::Ok();
  }
  int resumed_ended() const { return resumed_ended_.load(); }
  int resumed_turns() const { return resumed_turns_.load(); }
  int generation_errors() const { return generation_errors_.load(); }
  int no_answer() const { return no_answer_.load(); }

 private:
  void Progress(const std::string& line) {
    if (!o_.progress) return;
    std::lock_guard<std::mutex> lock(mu_);
    o_.progress(line);
  }

  void SelectSkills(KbTrajectory* t) {
    if (o_.selector == nullptr) return;
    SelectionRequest req;
    req.query = SelectionQuery(t->problem);
    if (o_.format == KernelBenchFormat::kCuda) req.language = Language::kCuda;
    if (o_.format == KernelBenchFormat::kTriton)
      req.language = Language::kTriton;
    req.as_of = t->resumed_library_version ? t->resumed_library_version
                                           : o_.library_version;
    auto sel = o_.selector->Select(req);
    if (!sel.ok()) {
      t->selection_error = std::string(sel.status().message());
      return;
    }
    t->library_version = sel->record.library_version;
    for (SelectedSkill& s : sel->skills) {
      KernelBenchSkill ks;
      ks.skill = std::move(s);
      t->skill_ids.push_back(ks.skill.hit.id);
      if (o_.library != nullptr) {
        auto full = o_.library->Get(ks.skill.hit.id,
                                    ReadOptions{.as_of = t->library_version});
        if (full.ok()) ks.evidence_json = full->evidence_json;
      }
      t->skills.push_back(std::move(ks));
    }
  }

  KbTurn RunTurn(const KbTrajectory& t, int k) {
    KbTurn turn;
    turn.turn = k;
    KernelBenchPromptInput in;
    in.problem = &t.problem;
    in.format = o_.format;
    in.device = device_;
    in.skills = t.skills;
    for (const KbTurn& p : t.turns)
      in.prior.push_back({p.completion, p.feedback});
    const std::vector<ChatMessage> chat = BuildKernelBenchChat(in, o_.prompt);
    llm::Chat prompt;
    for (const ChatMessage& m : chat) prompt.push_back({m.role, m.content});
    llm::SamplingOptions sampling = o_.sampling;
    sampling.n = 1;
    if (sampling.seed) {
      *sampling.seed += static_cast<uint64_t>(t.problem.id) * 1000003u +
                        static_cast<uint64_t>(t.sample) * 1009u +
                        static_cast<uint64_t>(k);
    }
    const auto g0 = std::chrono::steady_clock::now();
    auto gen = backbone_->Generate({prompt}, sampling);
    turn.generation_ms = Ms(g0);
    const std::string where = t.problem.key() + " sample " +
                              std::to_string(t.sample) + " turn " +
                              std::to_string(k);
    if (!gen.ok() || gen->empty() || gen->front().samples.empty()) {
      turn.generation_error = gen.ok() ? "the backbone returned no sample"
                                       : std::string(gen.status().message());
      ++generation_errors_;
      Progress(where +
               ": generation failed: " + util::OneLine(turn.generation_error));
      return turn;
    }
    const llm::Sample& s = gen->front().samples.front();
    turn.completion = s.text;
    turn.finish_reason = s.finish_reason;
    turn.extraction = ExtractKernelBenchAnswer(turn.completion, o_.extract);
    if (!turn.extraction.found) {
      ++no_answer_;
      turn.feedback =
          FormatKernelBenchFeedback(turn.extraction, nullptr, o_.feedback);
      Progress(where + ": no answer (" + util::OneLine(turn.extraction.note) +
               ")");
      return turn;
    }
    turn.answer = turn.extraction.source;
    const auto v0 = std::chrono::steady_clock::now();
    auto r = ev_->Evaluate(t.problem, turn.answer, turn.extraction.backend);
    turn.verification_ms = Ms(v0);
    if (!r.ok()) {
      turn.verification_error = std::string(r.status().message());
      kbv::EvalResult e =
          Unrunnable(t, turn.answer, "error", turn.verification_error,
                     ev_->options().protocol);
      e.error_code = "SYSTEM_ERROR";
      turn.feedback =
          FormatKernelBenchFeedback(turn.extraction, &e, o_.feedback);
      Progress(where +
               ": verifier error: " + util::OneLine(turn.verification_error));
      return turn;
    }
    r->sample = t.sample;
    turn.result = *r;
    turn.feedback =
        FormatKernelBenchFeedback(turn.extraction, &*r, o_.feedback);
    std::string line = where + ": " + r->verdict;
    if (r->speedup_eager)
      line += ", " + Num(*r->speedup_eager) + "x over eager";
    if (!r->findings.empty()) {
      line += " [" +
              std::string(verify::FindingCodeName(r->findings.front().code)) +
              "]";
    }
    Progress(line);
    return turn;
  }

  // Writes the turns' files, the layout's file and its result, and the
  // trajectory line.
  void Finish(KbTrajectory* t) {
    const std::string base =
        FileName(t->problem.level, t->problem.id, t->sample);
    for (const KbTurn& turn : t->turns) {
      const std::string path = o_.out_dir + "/turns/" +
                               base.substr(0, base.size() - 10) + "_turn_" +
                               std::to_string(turn.turn) + ".py";
      if (!turn.answer.empty()) (void)util::WriteFileAtomic(path, turn.answer);
    }
    double best = -2;
    for (size_t i = 0; i < t->turns.size(); ++i) {
      const double m = Merit(t->turns[i]);
      if (m > best) {
        best = m;
        t->best = static_cast<int>(i);
      }
    }
    std::string answer;
    kbv::EvalResult result;
    const KbTurn* chosen =
        t->best >= 0 ? &t->turns[static_cast<size_t>(t->best)] : nullptr;
    if (chosen != nullptr && chosen->result) {
      answer = chosen->answer;
      result = *chosen->result;
    } else {
      // Nothing ran: the layout still has the sample (KernelBench counts
      // it), as a file saying why, with its result recorded here.
      std::string why = "no turn produced an answer";
      std::string verdict = "no_answer";
      if (chosen != nullptr && !chosen->generation_error.empty()) {
        why = "generation failed: " + util::OneLine(chosen->generation_error);
        verdict = "generation_error";
      } else if (chosen != nullptr && !chosen->extraction.found) {
        why = "nothing extracted: " + util::OneLine(chosen->extraction.note);
      } else if (chosen != nullptr && !chosen->verification_error.empty()) {
        why =
            "the verifier failed: " + util::OneLine(chosen->verification_error);
        verdict = "error";
      }
      answer = "# skilldb kernelbench run: " + why + "\n";
      result = Unrunnable(*t, answer, verdict, why, ev_->options().protocol);
    }
    result.sample = t->sample;
    (void)util::WriteFileAtomic(o_.out_dir + "/" + base, answer);
    std::lock_guard<std::mutex> lock(mu_);
    results_ << kbv::ResultToJson(result) << "\n";
    results_.flush();
    // Model text cut at a byte limit may end inside a UTF-8 sequence: such
    // bytes are replaced, never thrown on.
    trajectories_ << TrajectoryJson(*t).dump(-1, ' ', false,
                                             json::error_handler_t::replace)
                  << "\n";
    trajectories_.flush();
  }

  // A turn as JSON; its completion cut to `completion_bytes`.
  static json TurnJson(const KbTurn& turn, size_t completion_bytes) {
    json tj = {{"turn", turn.turn},
               {"completion", turn.completion.substr(0, completion_bytes)},
               {"completion_bytes", turn.completion.size()},
               {"finish_reason", turn.finish_reason},
               {"generation_ms", turn.generation_ms},
               {"verification_ms", turn.verification_ms},
               {"extraction",
                {{"found", turn.extraction.found},
                 {"note", turn.extraction.note},
                 {"unused", turn.extraction.unused},
                 {"blocks", turn.extraction.blocks},
                 {"blocks_used", turn.extraction.blocks_used},
                 {"unclosed_fence", turn.extraction.unclosed_fence},
                 {"backend", turn.extraction.backend}}},
               {"feedback", turn.feedback}};
    if (!turn.generation_error.empty())
      tj["generation_error"] = turn.generation_error;
    if (!turn.verification_error.empty())
      tj["verification_error"] = turn.verification_error;
    if (turn.result)
      tj["result"] = json::parse(kbv::ResultToJson(*turn.result));
    return tj;
  }

  // The turn TurnJson wrote (its answer is the extracted source, which
  // the verifier judged); nullopt if the JSON is not one.
  static std::optional<KbTurn> TurnFromJson(const json& tj) {
    if (!tj.is_object() || !tj.contains("turn") ||
        !tj["turn"].is_number_integer() || !tj.contains("extraction") ||
        !tj["extraction"].is_object()) {
      return std::nullopt;
    }
    try {
      KbTurn t;
      t.turn = tj["turn"].get<int>();
      t.completion = tj.value("completion", "");
      t.finish_reason = tj.value("finish_reason", "");
      t.generation_error = tj.value("generation_error", "");
      t.verification_error = tj.value("verification_error", "");
      t.feedback = tj.value("feedback", "");
      t.generation_ms = tj.value("generation_ms", 0.0);
      t.verification_ms = tj.value("verification_ms", 0.0);
      const json& x = tj["extraction"];
      t.extraction.found = x.value("found", false);
      t.extraction.note = x.value("note", "");
      t.extraction.unused = x.value("unused", std::vector<std::string>{});
      t.extraction.blocks = x.value("blocks", 0);
      t.extraction.blocks_used = x.value("blocks_used", std::vector<int>{});
      t.extraction.unclosed_fence = x.value("unclosed_fence", false);
      t.extraction.backend = x.value("backend", "");
      t.extraction.source = tj.value("answer", "");
      t.answer = t.extraction.found ? t.extraction.source : "";
      if (tj.contains("result")) {
        auto r = kbv::ResultFromJson(tj["result"].dump());
        if (!r.ok()) return std::nullopt;
        t.result = std::move(*r);
      }
      return t;
    } catch (const json::exception&) {  // a field of another type
      return std::nullopt;
    }
  }

  // Appends a judged turn to turns.jsonl, whole (the answer too), so a
  // stopped run can go on from it.
  void Record(const KbTrajectory& t, const KbTurn& turn) {
    json tj = TurnJson(turn, std::string::npos);
    tj["answer"] = turn.answer;
    json j = RunIdentity(t);
    if (o_.selector != nullptr) j["library_version"] = t.library_version;
    j["turn"] = std::move(tj);
    std::lock_guard<std::mutex> lock(mu_);
    turns_ << j.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    turns_.flush();
  }

  // The fields that say which run and trajectory a line belongs to.
  json RunIdentity(const KbTrajectory& t) const {
    return {{"level", t.problem.level},
            {"problem", t.problem.id},
            {"sample", t.sample},
            {"model", backbone_->Model()},
            {"format", std::string(KernelBenchFormatName(o_.format))},
            {"skills_on", o_.selector != nullptr}};
  }

  // Throws json::exception for fields of other types (the caller passes
  // such lines over). Lines written before "skills_on" was recorded count
  // as the same run.
  bool SameRun(const json& j) const {
    const bool skills = o_.selector != nullptr;
    return j.at("model").get<std::string>() == backbone_->Model() &&
           j.at("format").get<std::string>() ==
               KernelBenchFormatName(o_.format) &&
           (!j.contains("skills_on") ||
            j["skills_on"].get<bool>() == skills) &&
           j.at("level").is_number_integer() &&
           j.at("problem").is_number_integer() &&
           j.at("sample").is_number_integer();
  }

 public:
  // A trajectory's name in the files: "level/problem/sample".
  static std::string Key(int level, int problem, int sample) {
    return std::to_string(level) + "/" + std::to_string(problem) + "/" +
           std::to_string(sample);
  }
  static std::string Key(const json& j) {
    return Key(j.at("level").get<int>(), j.at("problem").get<int>(),
               j.at("sample").get<int>());
  }

 private:

  json TrajectoryJson(const KbTrajectory& t) const {
    json turns = json::array();
    for (const KbTurn& turn : t.turns)
      turns.push_back(TurnJson(turn, o_.stored_completion_bytes));
    json j = {{"level", t.problem.level},
              {"problem", t.problem.id},
              {"problem_name", t.problem.name},
              {"sample", t.sample},
              {"model", backbone_->Model()},
              {"format", std::string(KernelBenchFormatName(o_.format))},
              {"skills_on", o_.selector != nullptr},
              {"device", device_},
              {"skills", t.skill_ids},
              {"best_turn",
               t.best >= 0 ? t.turns[static_cast<size_t>(t.best)].turn : 0},
              {"turns", std::move(turns)}};
    if (o_.selector != nullptr) j["library_version"] = t.library_version;
    if (!t.selection_error.empty()) j["selection_error"] = t.selection_error;
    return j;
  }

 private:
  const KernelBenchRunOptions& o_;
  llm::Backbone* backbone_;
  kbv::Evaluator* ev_;
  std::string device_;
  std::string trajectories_path_;
  std::string results_path_;
  std::mutex mu_;               // guards the two streams and progress
  std::ofstream trajectories_;  // GUARDED_BY(mu_)
  std::ofstream results_;       // GUARDED_BY(mu_)
  std::string turns_path_;
  std::ofstream turns_;  // GUARDED_BY(mu_)
  // What an earlier run left, by Key (read before the pool starts; each
  // entry is taken by its own trajectory's thread only).
  struct Earlier {
    bool ended = false;  // in trajectories.jsonl
    int best_turn = 0;
    std::vector<KbTurn> ended_turns;  // as trajectories.jsonl has them
    std::vector<KbTurn> recorded;     // turns.jsonl's, in order, whole
    std::optional<Version> library_version;  // the turns' selection's
  };
  // Filled by Prepare before the pool starts; then each entry is taken by
  // its own trajectory's thread only (find, no insertion).
  std::set<std::string> wanted_;
  std::map<std::string, Earlier> earlier_;
  std::atomic<int> resumed_ended_{0};
  std::atomic<int> resumed_turns_{0};
  std::atomic<int> generation_errors_{0};
  std::atomic<int> no_answer_{0};
};

Status Validate(const KernelBenchRunOptions& o) {
  if (o.out_dir.empty()) return Status::InvalidArgument("OUT_DIR is required");
  if (o.level < 1) return Status::InvalidArgument("--level must be 1 or more");
  if (o.turns < 1 || o.turns > 100)
    return Status::InvalidArgument("--turns must be 1..100");
  if (o.samples < 1 || o.samples > 1000) {
    return Status::InvalidArgument("--samples must be 1..1000");
  }
  if (o.concurrency < 0)
    return Status::InvalidArgument("concurrency must be >= 0");
  return Status::Ok();
}

// The best-so-far answer of each trajectory after each turn.
std::vector<TurnScore> ScoreTurns(const std::vector<KbTrajectory>& all,
                                  int turns) {
  std::vector<TurnScore> out;
  for (int k = 1; k <= turns; ++k) {
    TurnScore s;
    s.turn = k;
    s.trajectories = static_cast<int>(all.size());
    for (const KbTrajectory& t : all) {
      bool answered = false, correct = false, faster = false;
      for (const KbTurn& turn : t.turns) {
        if (turn.turn > k) break;
        answered = answered || turn.extraction.found;
        if (turn.result && Credited(*turn.result)) {
          correct = true;
          faster = faster || turn.result->speedup_eager.value_or(0) > 1.0;
        }
      }
      s.answered += answered;
      s.correct += correct;
      s.faster += faster;
    }
    s.fast_1 =
        s.trajectories > 0 ? static_cast<double>(s.faster) / s.trajectories : 0;
    out.push_back(s);
  }
  return out;
}

}  // namespace kb_generate_detail

Result<KernelBenchRunReport> RunKernelBench(
    const KernelBenchRunOptions& o, llm::Backbone* backbone,
    verify::kb::Evaluator* evaluator, const verify::kb::TaskStore& store) {
  namespace gd = kb_generate_detail;
  namespace kbv = verify::kb;
  SKILLDB_RETURN_IF_ERROR(gd::Validate(o));
  SKILLDB_ASSIGN_OR_RETURN(std::vector<int> ids, kbv::ParseIdList(o.problems));
  SKILLDB_ASSIGN_OR_RETURN(std::vector<kbv::Problem> problems,
                           store.List(o.level));
  std::vector<gd::KbTrajectory> all;
  for (const kbv::Problem& p : problems) {
    if (!kbv::InIdList(ids, p.id)) continue;
    for (int s = 0; s < o.samples; ++s)
      all.push_back(gd::KbTrajectory{.problem = p, .sample = s});
  }
  if (all.empty()) {
    return Status::NotFound(
        "no problem of level " + std::to_string(o.level) +
        (o.problems.empty() ? "" : " in '" + o.problems + "'") +
        " in the task store " + store.dir() +
        " (run `skilldb kernelbench import` first)");
  }
  gd::Runner runner(o, backbone, evaluator);
  std::set<std::string> wanted;
  for (const gd::KbTrajectory& t : all)
    wanted.insert(gd::Runner::Key(t.problem.level, t.problem.id, t.sample));
  SKILLDB_RETURN_IF_ERROR(runner.Prepare(std::move(wanted)));
  const size_t workers = std::min<size_t>(
      all.size(),
      o.concurrency > 0 ? static_cast<size_t>(o.concurrency) : size_t{16});
  util::ParallelFor(all.size(), workers,
                    [&](size_t i) { runner.RunOne(&all[i]); });
  SKILLDB_RETURN_IF_ERROR(runner.WriteStatus());
  if (o.progress && (runner.resumed_ended() > 0 || runner.resumed_turns() > 0)) {
    o.progress("resumed from " + o.out_dir + ": " +
               std::to_string(runner.resumed_ended()) +
               " trajectories that had ended, " +
               std::to_string(runner.resumed_turns()) +
               " judged turns of unfinished ones");
  }
  kbv::RunOptions ro;
  ro.run_dir = o.out_dir;
  ro.level = o.level;
  ro.problems = o.problems;
  ro.results_path = runner.results_path();
  KernelBenchRunReport report;
  SKILLDB_ASSIGN_OR_RETURN(report.eval,
                           kbv::EvaluateRunDir(ro, evaluator, store));
  report.turns = gd::ScoreTurns(all, o.turns);
  report.trajectories = static_cast<int>(all.size());
  report.resumed_trajectories = runner.resumed_ended();
  report.resumed_turns = runner.resumed_turns();
  report.generation_errors = runner.generation_errors();
  report.no_answer = runner.no_answer();
  report.model = backbone->Model();
  report.format = std::string(KernelBenchFormatName(o.format));
  report.skills = o.selector != nullptr;
  report.trajectories_path = runner.trajectories_path();
  return report;
}

std::string KernelBenchRunReportToJson(const KernelBenchRunReport& r) {
  using json = nlohmann::json;
  json turns = json::array();
  for (const TurnScore& t : r.turns) {
    turns.push_back({{"turn", t.turn},
                     {"trajectories", t.trajectories},
                     {"answered", t.answered},
                     {"correct", t.correct},
                     {"faster", t.faster},
                     {"fast_1", t.fast_1}});
  }
  json j = {{"model", r.model},
            {"format", r.format},
            {"skills", r.skills},
            {"trajectories", r.trajectories},
            {"generation_errors", r.generation_errors},
            {"no_answer", r.no_answer},
            {"resumed_trajectories", r.resumed_trajectories},
            {"resumed_turns", r.resumed_turns},
            {"trajectories_path", r.trajectories_path},
            {"per_turn", std::move(turns)},
            {"eval", json::parse(verify::kb::RunReportToJson(r.eval))}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string FormatKernelBenchRunReport(const KernelBenchRunReport& r) {
  std::string s = verify::kb::FormatRunReport(r.eval);
  s += "model " + r.model + ", format " + r.format + ", skills " +
       (r.skills ? "on" : "off") + ": " + std::to_string(r.trajectories) +
       " trajectories, " + std::to_string(r.generation_errors) +
       " failed generations, " + std::to_string(r.no_answer) +
       " answers without code" +
       (r.resumed_trajectories > 0 || r.resumed_turns > 0
            ? "; resumed " + std::to_string(r.resumed_trajectories) +
                  " ended trajectories and " + std::to_string(r.resumed_turns) +
                  " judged turns"
            : std::string()) +
       "\n";
  s += "per turn (best so far, over trajectories):\n";
  for (const TurnScore& t : r.turns) {
    char buf[200];
    std::snprintf(
        buf, sizeof(buf),
        "  turn %d: answered %d, correct %d, faster %d, fast_1 %.3f\n", t.turn,
        t.answered, t.correct, t.faster, t.fast_1);
    s += buf;
  }
  s += "trajectories: " + r.trajectories_path + "\n";
  return s;
}

}  // namespace skilldb::policy
