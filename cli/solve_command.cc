// skilldb solve: the Policy Agent on one task, or a rollout pool over many.
#include <iostream>
#include <map>
#include <mutex>

#include "agent_commands.h"
#include "agent_setup.h"
#include "context.h"
#include "skilldb/policy/policy_agent.h"
#include "skilldb/policy/rollout_pool.h"
#include "skilldb/rerank/listwise.h"

namespace skilldb::cli {
namespace {

Status CheckArgs(const SolveArgs& a) {
  if (a.task.empty() == a.tasks.empty()) {
    return Status::InvalidArgument("give either --task NAME or --tasks A,B,C");
  }
  if (a.turns < 1 || a.samples < 1 || a.rollouts < 1 || a.concurrency < 0) {
    return Status::InvalidArgument(
        "--turns, --samples and --rollouts must be at least 1, "
        "--concurrency at least 0");
  }
  if (a.rerank != "none" && a.rerank != "listwise") {
    return Status::InvalidArgument("--rerank must be none or listwise");
  }
  if (a.skills < 1 || a.candidates < a.skills) {
    return Status::InvalidArgument("need 1 <= --skills <= --candidates");
  }
  return Status::Ok();
}

policy::PolicyOptions OptionsFrom(const SolveArgs& a) {
  policy::PolicyOptions o;
  o.max_turns = a.turns;
  o.samples = a.samples;
  o.sampling.temperature = a.temperature;
  o.sampling.max_tokens = a.max_tokens;
  o.stop_on_speedup = !a.no_early_stop;
  o.group = a.group;
  return o;
}

Json BestJson(const policy::Trajectory& t) {
  const policy::SampleRecord* best = policy::BestSample(t);
  if (best == nullptr) return Json();
  Json j{{"turn", t.best_turn},
         {"sample", t.best_sample},
         {"verdict", std::string(policy::SampleVerdictName(best->verdict))},
         {"reward", best->reward},
         {"language", best->language},
         {"source", best->source}};
  if (best->report) {
    j["speedup"] = best->report->speedup.ratio;
    j["ci_low"] = best->report->speedup.ci_low;
    j["ci_high"] = best->report->speedup.ci_high;
  }
  return j;
}

Json TurnsJson(const policy::Trajectory& t) {
  Json turns = Json::array();
  for (const policy::TurnRecord& turn : t.turns) {
    Json verdicts = Json::array();
    for (const policy::SampleRecord& s : turn.samples)
      verdicts.push_back(std::string(policy::SampleVerdictName(s.verdict)));
    Json selected = Json::array();
    for (const policy::SkillRef& r : turn.selection.selected)
      selected.push_back(r.id);
    turns.push_back(
        Json{{"turn", turn.turn},
             {"verdicts", verdicts},
             {"reward", turn.reward},
             {"selected", selected},
             {"library_version", turn.selection.library_version},
             {"times_ms", Json::parse(policy::ToJson(turn.times))}});
  }
  return turns;
}

Json TrajectoryJson(const policy::Trajectory& t, const std::string& store) {
  Json j{{"trajectory_id", t.id},
         {"task", t.task},
         {"backend", t.backend},
         {"model", t.model},
         {"status", t.status},
         {"solved", t.solved},
         {"library_version", t.library_version},
         {"rollouts", store},
         {"best", BestJson(t)}};
  if (!t.error.empty()) j["error"] = t.error;
  const policy::SampleRecord* best = policy::BestSample(t);
  j["report"] = best && best->report ? AsJson(*best->report) : Json();
  j["turns"] = TurnsJson(t);
  return j;
}

// The model's kernel, the compiler's log and the verifier's reasons are
// untrusted text: escaped as `show` and `verify` escape them, so an ESC
// sequence in a kernel cannot act on the terminal.
void PrintText(const Io& io, const policy::Trajectory& t) {
  *io.out << "trajectory " << EscapeLine(t.id) << " (" << EscapeLine(t.task)
          << ", " << EscapeLine(t.backend)
          << "): " << (t.solved ? "solved" : "not solved") << " in "
          << t.turns.size() << " turn(s)";
  if (!t.error.empty()) *io.out << "; " << EscapeLine(t.error);
  *io.out << "\n";
  const policy::SampleRecord* best = policy::BestSample(t);
  if (best == nullptr) return;
  *io.out << "best: turn " << t.best_turn + 1 << ", sample "
          << t.best_sample + 1 << ", "
          << policy::SampleVerdictName(best->verdict) << ", reward "
          << FormatScore(best->reward) << "\n";
  if (best->report) {
    *io.out << EscapeBlock(verify::FormatReportText(*best->report));
  }
  if (!best->source.empty()) *io.out << "\n" << EscapeBlock(best->source);
}

// A trajectory that failed (the model unreachable, the store refusing a
// turn) says why on stderr, not only inside the summary on stdout.
void ReportFailure(const Io& io, const policy::Trajectory& t) {
  if (t.status != "failed" || t.error.empty()) return;
  *io.err << "skilldb: error: trajectory " << EscapeLine(t.id) << " ("
          << EscapeLine(t.task) << ") failed: " << EscapeLine(t.error) << "\n";
}

// Most threads (rollouts in flight, model requests in flight) one solve
// starts: more only queue on the same verifier workers and model server.
constexpr int kMaxThreads = 256;

// 0 when every task has a solved trajectory and no rollout failed or
// errored; 1 otherwise (the same for one task and for many).
int SolveExitCode(const std::vector<const policy::Trajectory*>& done,
                  const std::vector<std::string>& tasks, bool any_error) {
  if (any_error) return kExitUserError;
  for (const std::string& task : tasks) {
    bool solved = false;
    for (const policy::Trajectory* t : done) {
      if (t->task == task && t->solved && t->status == "finished") {
        solved = true;
      }
    }
    if (!solved) return kExitUserError;
  }
  return kExitOk;
}

// The whole run: every dependency the agent borrows, alive until the end.
struct Rig {
  std::unique_ptr<Library> library;
  std::unique_ptr<verify::TaskVerifier> verifier;
  std::unique_ptr<llm::OpenAiClient> backbone;
  std::unique_ptr<Reranker> reranker;
  std::unique_ptr<policy::SkillSelector> selector;
  std::unique_ptr<policy::RolloutStore> store;
  std::unique_ptr<policy::PolicyAgent> agent;
  std::string store_path;
};

Status Build(const GlobalArgs& g, const SolveArgs& a, const Io& io, Rig* r) {
  // Read-only: selection only reads, and usage events from a read-only
  // library are spooled, so several solves can run beside one writer.
  SKILLDB_ASSIGN_OR_RETURN(r->library, OpenLibrary(g, /*read_only=*/true, io));
  SKILLDB_ASSIGN_OR_RETURN(r->verifier,
                           MakeAgentVerifier(a.backend, a.workers));
  AgentLlmArgs llm = a.llm;
  const int jobs = static_cast<int>(
      std::min<size_t>(a.tasks.size() * static_cast<size_t>(a.rollouts),
                       static_cast<size_t>(kMaxThreads)));
  if (llm.max_in_flight == 0) llm.max_in_flight = std::max(8, jobs);
  SKILLDB_ASSIGN_OR_RETURN(r->backbone, MakeBackbone(llm, io));
  r->store_path = ResolveRolloutsPath(g, a.rollouts_path);
  SKILLDB_ASSIGN_OR_RETURN(
      r->store, OpenRollouts(r->store_path, /*read_only=*/false,
                             /*create=*/true));
  policy::SelectionOptions so;
  so.select_k = static_cast<size_t>(a.skills);
  so.retrieve_k = static_cast<size_t>(a.candidates);
  if (a.rerank == "listwise") {
    SKILLDB_ASSIGN_OR_RETURN(
        auto reranker, rerank::MakeListwiseReranker(r->backbone.get(), {}, {}));
    r->reranker = std::move(reranker);
    r->selector = std::make_unique<policy::RerankingSelector>(
        r->library.get(), r->reranker.get(), so);
  } else {
    r->selector = std::make_unique<policy::Bm25Selector>(r->library.get(), so);
  }
  policy::PolicyAgentDeps deps;
  deps.backbone = r->backbone.get();
  deps.selector = r->selector.get();
  deps.verifier = r->verifier.get();
  deps.library = r->library.get();
  deps.store = r->store.get();
  SKILLDB_ASSIGN_OR_RETURN(r->agent, policy::PolicyAgent::Make(deps));
  return Status::Ok();
}

int SolveOne(const GlobalArgs& g, const SolveArgs& a, const Io& io, Rig& r,
             const policy::PolicyTask& task) {
  if (!g.json) {
    r.agent->set_turn_observer(
        [&](const policy::Trajectory&, const policy::TurnRecord& turn) {
          *io.err << "skilldb: turn " << turn.turn + 1 << ":";
          for (const policy::SampleRecord& s : turn.samples)
            *io.err << " " << policy::SampleVerdictName(s.verdict);
          *io.err << "\n";
        });
  }
  auto t = r.agent->Solve(task, OptionsFrom(a));
  if (!t.ok()) return Fail(g, io, t.status());
  if (g.json) {
    PrintJson(io, TrajectoryJson(*t, r.store_path));
  } else {
    PrintText(io, *t);
  }
  ReportFailure(io, *t);
  // Like a rejected proposal: a completed run without a verified speedup
  // exits 1 so scripts can tell.
  return SolveExitCode({&*t}, {a.task}, /*any_error=*/false);
}

int SolveMany(const GlobalArgs& g, const SolveArgs& a, const Io& io, Rig& r,
              const std::vector<policy::PolicyTask>& tasks) {
  std::vector<policy::RolloutJob> jobs;
  for (const policy::PolicyTask& t : tasks) {
    for (int i = 0; i < a.rollouts; ++i) jobs.push_back({&t, OptionsFrom(a)});
  }
  policy::PoolOptions po;
  po.concurrency = a.concurrency > 0
                       ? std::min(a.concurrency, kMaxThreads)
                       : static_cast<int>(std::min<size_t>(
                             jobs.size(), static_cast<size_t>(kMaxThreads)));
  auto device = r.verifier->Describe();
  po.workers = device.ok() ? device->devices : 1;
  std::mutex mu;
  if (!g.json) {
    po.on_done = [&](size_t i, const Result<policy::Trajectory>& t) {
      std::lock_guard<std::mutex> lock(mu);
      *io.err << "skilldb: " << EscapeLine(jobs[i].task->task.name) << ": "
              << (t.ok() ? (t->solved ? "solved" : "not solved")
                         : EscapeLine(t.status().ToString()))
              << "\n";
    };
  }
  auto result = policy::RolloutPool(r.agent.get(), po).Run(jobs);
  if (!result.ok()) return Fail(g, io, result.status());
  std::map<std::string, Json> per_task;
  std::vector<const policy::Trajectory*> done;
  bool any_error = false;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::string& name = jobs[i].task->task.name;
    Json& entry = per_task[name];
    if (entry.is_null()) {
      entry = Json{{"task", name},
                   {"solved", 0},
                   {"trajectories", Json::array()},
                   {"best_speedup", 0.0},
                   {"best_trajectory", ""}};
    }
    const Result<policy::Trajectory>& t = result->results[i];
    if (!t.ok()) {
      any_error = true;
      continue;
    }
    done.push_back(&*t);
    ReportFailure(io, *t);
    entry["trajectories"].push_back(t->id);
    if (t->solved) entry["solved"] = entry["solved"].get<int>() + 1;
    const policy::SampleRecord* best = policy::BestSample(*t);
    const double speedup =
        best && best->report && t->solved ? best->report->speedup.ratio : 0.0;
    if (speedup > entry["best_speedup"].get<double>()) {
      entry["best_speedup"] = speedup;
      entry["best_trajectory"] = t->id;
    }
  }
  Json out{{"tasks", Json::array()},
           {"pool", Json::parse(policy::ToJson(result->counters))},
           {"rollouts", r.store_path}};
  for (const std::string& name : a.tasks)
    out["tasks"].push_back(per_task[name]);
  if (g.json) {
    PrintJson(io, out);
  } else {
    for (const Json& e : out["tasks"]) {
      *io.out << EscapeLine(e["task"].get<std::string>()) << ": "
              << e["solved"].get<int>()
              << "/" << e["trajectories"].size() << " solved, best speedup "
              << FormatScore(e["best_speedup"].get<double>()) << "\n";
    }
    const policy::PoolCounters& c = result->counters;
    *io.out << c.turns << " turns in " << FormatScore(c.wall_ms / 1000)
            << " s: " << FormatScore(c.turns_per_minute) << " turns/min, "
            << FormatScore(c.turns_per_minute_per_worker)
            << " per verifier worker (" << c.workers << ")\n";
  }
  // As one task's: 0 only when every task was solved and nothing failed.
  return SolveExitCode(done, a.tasks, any_error);
}

// Every task, loaded before anything is started or created: an unknown
// task starts no verifier and leaves no rollout store behind.
Result<std::vector<policy::PolicyTask>> LoadTasks(
    const std::vector<std::string>& names, const std::string& backend) {
  SKILLDB_ASSIGN_OR_RETURN(verify::Backend b, verify::ParseBackend(backend));
  const verify::VerifierOptions options = verify::DefaultOptions(b);
  std::vector<policy::PolicyTask> tasks;
  for (const std::string& name : names) {
    SKILLDB_ASSIGN_OR_RETURN(policy::PolicyTask task,
                             policy::LoadPolicyTask(options, name));
    tasks.push_back(std::move(task));
  }
  return tasks;
}

}  // namespace

int RunSolve(const GlobalArgs& g, const SolveArgs& args, const Io& io) {
  if (Status st = CheckArgs(args); !st.ok()) return Fail(g, io, st);
  SolveArgs a = args;
  if (!a.task.empty() && a.rollouts > 1) {  // a group of one task: the pool
    a.tasks = {a.task};
    a.task.clear();
  }
  auto tasks = LoadTasks(a.task.empty() ? a.tasks
                                         : std::vector<std::string>{a.task},
                         a.backend);
  if (!tasks.ok()) return Fail(g, io, tasks.status());
  Rig rig;
  if (Status st = Build(g, a, io, &rig); !st.ok()) return Fail(g, io, st);
  return a.task.empty() ? SolveMany(g, a, io, rig, *tasks)
                        : SolveOne(g, a, io, rig, tasks->front());
}

}  // namespace skilldb::cli
