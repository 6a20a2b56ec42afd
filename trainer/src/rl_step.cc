// One RL step (see rl_loop.h), cut into its phases the way CommitBuild and
// PolicyAgent::Run are: rollouts through the agents wired once at Init,
// the decisions of the three agents with their rewards, the Summary
// Agent's distillations, the update, and the step line appended to
// steps.jsonl.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "skilldb/trainer/advantages.h"
#include "skilldb/trainer/rewards.h"
#include "skilldb/util/clock.h"
#include "trainer_impl.h"

namespace skilldb::trainer {
namespace {

using nlohmann::json;

json StatsJson(const Stats& s) {
  return {{"count", s.count},
          {"mean", s.mean},
          {"std", s.std},
          {"min", s.min},
          {"max", s.max}};
}

// Appends `line` and a newline to `path` in one write (O_APPEND): a step
// costs its own line, not a rewrite of the run's.
Status AppendLine(const std::string& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                        0644);
  if (fd < 0) return Status::IOError(path + ": " + std::strerror(errno));
  const std::string bytes = line + "\n";
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      return Status::IOError(path + ": append failed: " + why);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return Status::IOError(path + ": " + std::strerror(errno));
  return Status::Ok();
}

// One rollout: its trajectory and discounted policy return.
struct Rollout {
  SlotRef slot;  // its task and agents
  policy::Trajectory trajectory;
  double ret = 0;
};

// The state of one step between its phases.
class StepRun {
 public:
  explicit StepRun(Trainer::Impl& run) : run_(run), config_(run.config) {}

  Result<std::string> Go();

 private:
  Status Rollouts();
  Status CheckFailures();
  void Decisions();
  void PolicyDecisions(const Rollout& r);
  void SelectionDecisions();
  void SummaryDecisions();
  void Distill();
  void Count(const policy::DistillationRecord& d);
  Status TagStep();
  Status HeldOut();
  Status Update();
  std::string Line();
  json RewardsJson() const;
  json SkillsJson() const;
  json RunSkillsJson();
  Status WriteEvents(const json& line);
  void AddDecision(const Decision& d, const GenerationRecord& g);
  policy::PolicyOptions RolloutOptions(int task_index, int group,
                                       const std::string& task) const;

  Trainer::Impl& run_;
  const TrainConfig& config_;
  util::SteadyClock::time_point start_ = util::SteadyClock::now();
  llm::TokenUsage usage_before_;
  Version version_before_ = 0;  // the version every rollout reads (pinned)
  double gen_ms_ = 0, verify_ms_ = 0, library_ms_ = 0, train_ms_ = 0;

  std::vector<Rollout> rollouts_;
  int failed_ = 0;
  std::string first_error_;

  std::vector<Decision> decisions_;  // in the order of seqs_
  std::vector<TrainSequence> seqs_;
  AdvantageResult advantages_;
  std::vector<SelectionOutcome> sel_outcomes_;
  std::vector<std::pair<const Rollout*, const GenerationRecord*>> sel_gens_;
  std::vector<double> speedups_;
  std::map<std::string, int> verdicts_;
  std::map<std::string, int> uses_;  // skill id -> successful uses
  int solved_ = 0;
  int summaries_trained_ = 0;
  int skills_added_ = 0, distilled_ = 0;
  // Distillations whose candidate was valid and proposed, those rejected
  // (by reason: duplicates, failed evidence, ...) and those whose answer
  // was no valid skill.
  int proposed_ = 0, rejected_ = 0, invalid_ = 0;
  std::map<std::string, int> rejected_reasons_;

  StepStats stats_;
  bool trained_ = false;
  json heldout_;  // the held-out evaluation's figures, when it ran
  std::map<std::string, int> drawn_;  // task -> rollouts (KernelBench)
};

Result<std::string> StepRun::Go() {
  ++run_.step;
  usage_before_ = run_.learner->backbone().Usage();
  SKILLDB_RETURN_IF_ERROR(Rollouts());
  SKILLDB_RETURN_IF_ERROR(CheckFailures());
  Decisions();
  Distill();
  SKILLDB_RETURN_IF_ERROR(TagStep());
  SKILLDB_RETURN_IF_ERROR(Update());
  SKILLDB_RETURN_IF_ERROR(HeldOut());
  std::string text = Line();
  if (run_.rank == 0) {
    SKILLDB_RETURN_IF_ERROR(
        AppendLine(config_.out_dir + "/steps.jsonl", text));
  }
  return text;
}

// The options of one rollout: its seeds (policy sampling, the selection's
// listwise judgment) and its group name; the rest is the run's.
policy::PolicyOptions StepRun::RolloutOptions(int t, int g,
                                              const std::string& task) const {
  const LoopConfig& loop = config_.loop;
  const uint64_t seed =
      internal::Mix(config_.seed ^
                    internal::Mix(run_.step * loop.rollout_step_stride +
                                  t * loop.rollout_task_stride + g) ^
                    (uint64_t(run_.rank) << 48));
  policy::PolicyOptions po;
  po.max_turns = config_.max_turns;
  po.samples = 1;
  po.sampling.temperature = config_.temperature;
  po.sampling.max_tokens = config_.max_new_tokens;
  po.sampling.seed = seed;
  po.selection_seed = seed ^ loop.selection_salt;
  po.verify_rounds = config_.verify_rounds;
  po.timed_calls_per_round = config_.timed_calls;
  po.reselect_each_turn = false;
  po.record_usage = run_.rank == 0;
  po.group = "step" + std::to_string(run_.step) + "/" + task + "/g" +
             std::to_string(g);
  // Every rollout of the step reads the library as the step found it: the
  // Summary Agent's commits land after the rollouts, between steps.
  po.library_version = version_before_;
  return po;
}

// tasks_per_step x groups rollouts through the Selection and Policy
// agents, one after the other (the backbone is the learner's). The tasks:
// the family's, or train problems drawn with replacement (the loop's
// generator); every group of a task is the same problem.
Status StepRun::Rollouts() {
  version_before_ = run_.library->CurrentVersion();
  const std::vector<SlotRef> slots = run_.TrainSlots();
  int index = 0;
  for (int t = 0; t < config_.tasks_per_step; ++t) {
    const SlotRef& slot = slots.size() == 1
                              ? slots[0]
                              : slots[std::uniform_int_distribution<size_t>(
                                    0, slots.size() - 1)(run_.rng)];
    for (int g = 0; g < config_.groups; ++g) {
      if (run_.before_rollout) run_.before_rollout(run_.step, index);
      ++index;
      SKILLDB_ASSIGN_OR_RETURN(
          auto traj, slot.policy->Solve(
                         *slot.task, RolloutOptions(t, g, slot.family->task)));
      if (run_.after_rollout) run_.after_rollout(traj);
      if (config_.kernelbench.enabled()) ++drawn_[slot.family->task];
      Rollout r;
      r.slot = slot;
      double disc = 1;
      for (const auto& turn : traj.turns) {
        r.ret += disc * turn.reward;
        disc *= config_.advantages.gamma;
        gen_ms_ += turn.times.generation_ms + turn.times.rerank_ms;
        verify_ms_ += turn.times.verify_wall_ms;
        library_ms_ += turn.times.usage_ms;
      }
      r.trajectory = std::move(traj);
      rollouts_.push_back(std::move(r));
    }
  }
  return Status::Ok();
}

// A rollout that failed (its turn could not generate, say) has no turns to
// learn from: counted and named in the step line; a step in which every
// rollout failed is an error, not a step that silently trains on nothing.
Status StepRun::CheckFailures() {
  for (const auto& r : rollouts_) {
    if (r.trajectory.status != "failed") continue;
    if (failed_++ == 0) first_error_ = r.trajectory.error;
  }
  if (!rollouts_.empty() && failed_ == static_cast<int>(rollouts_.size())) {
    return Status::Internal("step " + std::to_string(run_.step) + ": all " +
                            std::to_string(failed_) +
                            " rollouts failed; the first: " + first_error_);
  }
  return Status::Ok();
}

void StepRun::AddDecision(const Decision& d, const GenerationRecord& g) {
  decisions_.push_back(d);
  TrainSequence s;
  s.agent = d.agent;
  s.prompt_ids = g.prompt_token_ids;
  s.completion_ids = g.completion_token_ids;
  seqs_.push_back(std::move(s));
}

// Decisions: policy turns, selections, and the summaries of the step
// before with the later utility of what they wrote.
void StepRun::Decisions() {
  for (const auto& r : rollouts_) PolicyDecisions(r);
  SelectionDecisions();
  SummaryDecisions();
}

void StepRun::PolicyDecisions(const Rollout& r) {
  const auto& tr = r.trajectory;
  solved_ += tr.solved;
  for (const auto& turn : tr.turns) {
    for (const auto& s : turn.samples) {
      ++verdicts_[std::string(policy::SampleVerdictName(s.verdict))];
      if (s.report && s.report->correctness.passed &&
          !s.report->rounds.empty()) {
        speedups_.push_back(s.report->speedup.ratio);
      }
    }
    if (turn.best_sample < 0) continue;
    const auto& s = turn.samples[turn.best_sample];
    AddDecision({tr.task, "policy", tr.id, turn.turn, turn.reward},
                s.generation);
    if (turn.reward >= config_.rewards.correct_weight) {
      for (const auto& ref : turn.selection.selected) ++uses_[ref.id];
    }
  }
  if (!tr.turns.empty() && !tr.turns[0].selection.reused) {
    for (const auto& g : tr.turns[0].selection.generations) {
      sel_outcomes_.push_back({tr.task, r.ret});
      sel_gens_.push_back({&r, &g});
    }
  }
}

void StepRun::SelectionDecisions() {
  const auto rewards = SelectionRewards(sel_outcomes_, config_.rewards);
  for (size_t i = 0; i < sel_gens_.size(); ++i) {
    const policy::Trajectory& tr = sel_gens_[i].first->trajectory;
    AddDecision({tr.task, "selection",
                 tr.id + "/selection/" + std::to_string(i), 0, rewards[i]},
                *sel_gens_[i].second);
  }
}

void StepRun::SummaryDecisions() {
  for (const auto& p : run_.pending) {
    const int u = p.skill_id.empty() ? 0 : uses_[p.skill_id];
    const double reward = SummaryReward(p.inserted, u, config_.rewards);
    for (size_t k = 0; k < p.generations.size(); ++k) {
      AddDecision({p.task, "summary", p.rollout + "/summary/" +
                                          std::to_string(k),
                   0, reward},
                  p.generations[k]);
      ++summaries_trained_;
    }
  }
  run_.pending.clear();
}

// The Summary Agent on solved rollouts (at most loop.summaries_per_step;
// rank 0 writes the library); its decisions wait for the next step
// (pending).
void StepRun::Distill() {
  const int cap = config_.loop.summaries_per_step;
  for (const auto& r : rollouts_) {
    if (!r.slot.summary || !r.trajectory.solved) continue;
    if (cap > 0 && distilled_ >= cap) break;
    const auto start = util::SteadyClock::now();
    auto d = r.slot.summary->Distill(r.trajectory, *r.slot.task);
    library_ms_ += util::MsSince(start);
    if (!d.ok()) continue;
    ++distilled_;
    Count(*d);
    PendingSummary p;
    p.task = r.trajectory.task;
    p.rollout = r.trajectory.id;
    p.inserted = d->outcome == "accepted";
    p.skill_id = p.inserted ? d->skill_id : "";
    p.generations = d->generations;
    skills_added_ += p.inserted;
    if (p.inserted) run_.run_skills.insert(p.skill_id);
    run_.pending.push_back(std::move(p));
  }
}

// Counts a distillation's outcome for the step line: a rejection by each
// of its reasons (cut: reasons name figures and ids), leaving out "no
// verification report" beside another (a duplicate is refused before the
// verifier runs, so every duplicate also names the missing report).
void StepRun::Count(const policy::DistillationRecord& d) {
  if (d.outcome == "invalid") {
    ++invalid_;
    return;
  }
  if (d.outcome == "error") return;
  ++proposed_;
  if (d.outcome == "accepted") return;
  ++rejected_;
  if (d.reasons.empty()) ++rejected_reasons_[d.outcome];
  for (const std::string& reason : d.reasons) {
    if (reason == "no verification report" && d.reasons.size() > 1) continue;
    ++rejected_reasons_[internal::Cut(reason, 80)];
  }
}

// Names the library version the next step will read "step-N" (rank 0; an
// empty library has no version to name).
Status StepRun::TagStep() {
  if (run_.rank != 0 || !config_.skills) return Status::Ok();
  const Version v = run_.library->CurrentVersion();
  if (v == 0) return Status::Ok();
  Status st = run_.library->Tag("step-" + std::to_string(run_.step), v);
  return st.code() == StatusCode::kAlreadyExists ? Status::Ok() : st;
}

// Every kernelbench.eval_every steps (rank 0), one trajectory per held-out
// problem (greedy, its own seed, no usage recorded, nothing trained on),
// reading the library version the next step will read; scored as KernelBench's
// score.py scores a level (verify/kernelbench: fast_p over all held-out
// problems, PyTorch eager the baseline, torch-only answers not credited).
Status StepRun::HeldOut() {
  const KernelBenchConfig& k = config_.kernelbench;
  // Rank 0 alone: the held-out figures are the run's, not each rank's.
  if (!k.enabled() || k.eval_every == 0 || run_.step % k.eval_every != 0 ||
      run_.rank != 0) {
    return Status::Ok();
  }
  const auto start = util::SteadyClock::now();
  std::vector<verify::kb::EvalResult> results;
  int failed = 0;
  for (size_t i = 0; i < run_.kb_heldout.size(); ++i) {
    const KbSlot& slot = *run_.kb_heldout[i];
    policy::PolicyOptions po =
        RolloutOptions(static_cast<int>(i), 0, slot.family.task);
    po.sampling.temperature = 0;
    const uint64_t seed = internal::Mix(config_.seed ^ (0x4e1d0u + i));
    po.sampling.seed = seed;
    po.selection_seed = seed ^ config_.loop.selection_salt;
    po.record_usage = false;
    po.group =
        "heldout/step" + std::to_string(run_.step) + "/" + slot.family.task;
    po.library_version = run_.library->CurrentVersion();
    SKILLDB_ASSIGN_OR_RETURN(auto traj, slot.policy->Solve(slot.task, po));
    if (traj.status == "failed") ++failed;
    auto best = internal::BestResult(run_.kb, traj);
    if (best) results.push_back(std::move(*best));
  }
  const int n = static_cast<int>(run_.kb_heldout.size());
  const auto scores =
      verify::kb::ScoreResults(results, {{k.level, n}}, "eager", false);
  json fast_p = json::object();
  int correct = 0;
  if (!scores.empty()) {
    for (const auto& [p, v] : scores[0].fast_p) {
      char key[32];
      std::snprintf(key, sizeof key, "%g", p);
      fast_p[key] = v;
    }
    correct = scores[0].correct;
  }
  heldout_ = {
      {"problems", n},
      {"answered", results.size()},
      {"failed_rollouts", failed},
      {"correct", correct},
      {"pass_rate", n ? static_cast<double>(correct) / n : 0.0},
      {"fast_p", fast_p},
      {"geomean_correct", scores.empty() ? 0.0 : scores[0].geomean_correct},
      {"time_s", util::MsSince(start) / 1000}};
  return Status::Ok();
}

// Advantages, then one learner step on every decision's completion tokens
// (skipped when no decision has any, unless other ranks train beside this
// one: then its zero gradient joins theirs, or they would wait for it).
Status StepRun::Update() {
  SKILLDB_ASSIGN_OR_RETURN(advantages_,
                           ComputeAdvantages(decisions_, config_.advantages));
  bool any_tokens = false;
  for (size_t i = 0; i < seqs_.size(); ++i) {
    seqs_[i].advantage = advantages_.advantages[i];
    any_tokens |= !seqs_[i].completion_ids.empty();
  }
  const auto start = util::SteadyClock::now();
  if (any_tokens || run_.group) {
    SKILLDB_ASSIGN_OR_RETURN(stats_, run_.learner->Step(seqs_));
    trained_ = stats_.applied;
  }
  train_ms_ = util::MsSince(start);
  return Status::Ok();
}

// reward / advantage / return, each {agent: stats}.
json StepRun::RewardsJson() const {
  std::vector<double> raw;
  for (const auto& d : decisions_) raw.push_back(d.reward);
  json out = {{"reward", json::object()},
              {"advantage", json::object()},
              {"return", json::object()}};
  for (auto& [agent, s] : StatsPerAgent(decisions_, raw)) {
    out["reward"][agent] = StatsJson(s);
  }
  for (auto& [agent, s] : StatsPerAgent(decisions_, advantages_.advantages)) {
    out["advantage"][agent] = StatsJson(s);
  }
  for (auto& [agent, s] : StatsPerAgent(decisions_, advantages_.returns)) {
    out["return"][agent] = StatsJson(s);
  }
  return out;
}

json StepRun::SkillsJson() const {
  return {{"proposed", proposed_},
          {"rejected", rejected_},
          {"rejected_reasons", rejected_reasons_},
          {"invalid", invalid_},
          {"added", skills_added_}};
}

// The skills this run's Summary Agent wrote, as this step used them: the
// rollouts whose selection held one and their mean policy return against
// the others', and each skill's usage counters so far (the library's:
// retrieved, selected, applied, succeeded, failed).
json StepRun::RunSkillsJson() {
  int with = 0, without = 0;
  double sum_with = 0, sum_without = 0;
  for (const auto& r : rollouts_) {
    const auto& turns = r.trajectory.turns;
    bool used = false;
    if (!turns.empty()) {
      for (const auto& ref : turns[0].selection.selected)
        used |= run_.run_skills.count(ref.id) > 0;
    }
    (used ? with : without) += 1;
    (used ? sum_with : sum_without) += r.ret;
  }
  json utility = json::object();
  for (const std::string& id : run_.run_skills) {
    auto u = run_.library->GetUsage(id);
    if (!u.ok()) continue;
    utility[id] = {{"retrieved", u->count(UsageEvent::kRetrieved)},
                   {"selected", u->count(UsageEvent::kSelected)},
                   {"applied", u->count(UsageEvent::kApplied)},
                   {"succeeded", u->count(UsageEvent::kSucceeded)},
                   {"failed", u->count(UsageEvent::kFailed)}};
  }
  return {{"count", run_.run_skills.size()},
          {"rollouts_with", with},
          {"rollouts_without", without},
          {"return_with", with ? sum_with / with : 0.0},
          {"return_without", without ? sum_without / without : 0.0},
          {"utility", utility}};
}

// The step line (trainer/README.md lists its fields).
std::string StepRun::Line() {
  json line;
  line["step"] = run_.step;
  line["rank"] = run_.rank;
  line.update(RewardsJson());
  line["rollouts"] = rollouts_.size();
  line["failed_rollouts"] = failed_;
  if (failed_ > 0) line["first_error"] = first_error_;
  line["solved"] = solved_;
  line["verdicts"] = verdicts_;
  Stats sp = Summarize(speedups_);
  line["speedup"] = {{"count", sp.count},
                     {"mean", sp.count ? sp.mean : 0.0},
                     {"best", sp.count ? sp.max : 0.0}};
  line["trained"] = trained_;
  line["loss"] = stats_.loss;
  line["pg_loss"] = stats_.pg_loss;
  line["kl"] = stats_.kl;
  line["grad_norm"] = stats_.grad_norm;
  line["lr"] = stats_.lr;
  line["train_tokens"] = stats_.tokens;
  line["train_tokens_per_s"] = stats_.tokens_per_s;
  line["train_shared_positions"] = stats_.shared_positions;
  line["sequences"] = stats_.sequences;
  const auto usage = run_.learner->backbone().Usage();
  const double gen_tokens = static_cast<double>(
      usage.completion_tokens - usage_before_.completion_tokens);
  line["generated_tokens"] = gen_tokens;
  line["generation_tokens_per_s"] =
      gen_ms_ > 0 ? gen_tokens / (gen_ms_ / 1000) : 0;
  line["distilled"] = distilled_;
  line["summaries_trained"] = summaries_trained_;
  line["skills_added"] = skills_added_;
  line["skills"] = SkillsJson();
  line["run_skills"] = RunSkillsJson();
  if (!drawn_.empty()) line["tasks"] = drawn_;
  if (!heldout_.is_null()) line["heldout"] = heldout_;
  line["library"] = {{"size", run_.LibrarySize()},
                     {"version", run_.library->CurrentVersion()},
                     {"version_before", version_before_},
                     {"pinned", config_.skills ? version_before_ : 0}};
  auto [hits, misses] = run_.verifier->Counts();
  line["reward_cache"] = {{"hits", hits}, {"misses", misses}};
  line["time_s"] = {{"generation", gen_ms_ / 1000},
                    {"verification", verify_ms_ / 1000},
                    {"training", train_ms_ / 1000},
                    {"library", library_ms_ / 1000},
                    {"total", util::MsSince(start_) / 1000}};
  if (run_.events) {
    Status st = WriteEvents(line);
    if (!st.ok()) line["events_error"] = st.ToString();
  }
  return line.dump();
}

// The step's scalars for TensorBoard: per agent (reward, return), the
// update, the library and the run's skills.
Status StepRun::WriteEvents(const json& line) {
  std::vector<std::pair<std::string, double>> scalars;
  for (const char* group : {"reward", "return"}) {
    for (auto& [agent, stats] : line[group].items()) {
      scalars.push_back({std::string(group) + "/" + agent,
                         stats["mean"].get<double>()});
    }
  }
  const auto num = [&](const char* tag, const json& v) {
    if (v.is_number()) scalars.push_back({tag, v.get<double>()});
  };
  num("policy/solved", line["solved"]);
  num("policy/speedup_best", line["speedup"]["best"]);
  num("train/loss", line["loss"]);
  num("train/pg_loss", line["pg_loss"]);
  num("train/kl", line["kl"]);
  num("train/grad_norm", line["grad_norm"]);
  num("train/lr", line["lr"]);
  num("skills/proposed", line["skills"]["proposed"]);
  num("skills/rejected", line["skills"]["rejected"]);
  num("skills/added", line["skills"]["added"]);
  num("library/size", line["library"]["size"]);
  num("library/version", line["library"]["version"]);
  num("run_skills/count", line["run_skills"]["count"]);
  num("run_skills/rollouts_with", line["run_skills"]["rollouts_with"]);
  num("run_skills/return_with", line["run_skills"]["return_with"]);
  num("run_skills/return_without", line["run_skills"]["return_without"]);
  num("time/total_s", line["time_s"]["total"]);
  return run_.events->AddScalars(run_.step, scalars);
}

}  // namespace

Result<std::string> Trainer::Impl::Step() {
  StepRun run(*this);
  return run.Go();
}

}  // namespace skilldb::trainer
