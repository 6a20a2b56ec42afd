// The RL loop (see rl_loop.h). No torch here: the learner's header has none.
#include "skilldb/trainer/rl_loop.h"

#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "skilldb/json.h"
#include "skilldb/library.h"
#include "skilldb/options.h"
#include "skilldb/policy/extract.h"
#include "skilldb/policy/policy_agent.h"
#include "skilldb/policy/prompt.h"
#include "skilldb/policy/reward.h"
#include "skilldb/policy/rollout_store.h"
#include "skilldb/policy/selection.h"
#include "skilldb/policy/task_context.h"
#include "skilldb/rerank/listwise.h"
#include "skilldb/rerank/model_reranker.h"
#include "skilldb/reranker.h"
#include "skilldb/skill.h"
#include "skilldb/summarize/summary_agent.h"
#include "skilldb/trainer/advantages.h"
#include "skilldb/trainer/distributed.h"
#include "skilldb/trainer/learner.h"
#include "skilldb/trainer/param_task.h"
#include "skilldb/trainer/report.h"
#include "skilldb/trainer/rewards.h"
#include "skilldb/trainer/sft_data.h"
#include "skilldb/verify/verify.h"

#ifndef SKILLDB_TRAINER_SEED_DIR
#define SKILLDB_TRAINER_SEED_DIR ""
#endif
#ifndef SKILLDB_TRAINER_TASKS_DIR
#define SKILLDB_TRAINER_TASKS_DIR ""
#endif
#ifndef SKILLDB_TRAINER_FIXTURE_MODEL
#define SKILLDB_TRAINER_FIXTURE_MODEL ""
#endif

namespace skilldb::trainer {

using nlohmann::json;

TrainerPaths DefaultTrainerPaths() {
  auto env = [](const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return std::string(v && *v ? v : fallback);
  };
  return {env("SKILLDB_SEED_DIR", SKILLDB_TRAINER_SEED_DIR),
          env("SKILLDB_TRAINER_TASKS", SKILLDB_TRAINER_TASKS_DIR),
          env("SKILLDB_TRAINER_MODEL", SKILLDB_TRAINER_FIXTURE_MODEL)};
}

namespace {

double Ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - since)
      .count();
}

std::string Cut(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n) + " ...";
}

// The family's prompts: short (a small model's context), one system
// message with the answer format, the task, skill titles, then each earlier
// answer with the verifier's feedback.
class ParamPromptBuilder : public policy::PromptBuilder {
 public:
  explicit ParamPromptBuilder(const TaskFamily* family) : family_(family) {}
  std::vector<ChatMessage> Build(
      const policy::PromptInput& input) const override {
    std::vector<ChatMessage> out;
    out.push_back({"system", "You tune the " + family_->name +
                                 " kernel template. " +
                                 FamilyInstructions(*family_)});
    std::string user = "Task " + family_->task + " (" + family_->backend +
                       "): " + Cut(family_->description, 400);
    std::vector<policy::SelectedSkill> skills = input.new_skills;
    if (!skills.empty()) {
      user += "\nSkills:";
      for (size_t i = 0; i < skills.size() && i < 3; ++i) {
        user += "\n- " + Cut(skills[i].hit.title, 80);
      }
    }
    out.push_back({"user", user});
    for (const auto& p : input.prior) {
      out.push_back({"assistant", Cut(p.completion, 200)});
      out.push_back({"user", "Feedback: " + Cut(p.feedback, 240) +
                                 "\nAnswer with new parameters."});
    }
    return out;
  }

 private:
  const TaskFamily* family_;
};

class ParamExtractor : public policy::CompletionExtractor {
 public:
  explicit ParamExtractor(const TaskFamily* family) : family_(family) {}
  Result<policy::Extraction> Extract(
      const policy::PolicyTask&, std::string_view completion) const override {
    policy::Extraction e;
    ParsedParams p = ParseParams(*family_, completion);
    if (!p.ok) {
      e.note = "template parameters: " + p.error;
      return e;
    }
    e.found = true;
    e.source = Render(*family_, p.values);
    e.language = family_->language;
    e.note = "template parameters " + FormatParams(*family_, p.values);
    return e;
  }

 private:
  const TaskFamily* family_;
};

// The reward cache: the verifier's report on identical bytes is reused.
class CachingVerifier : public verify::TaskVerifier {
 public:
  explicit CachingVerifier(std::unique_ptr<verify::TaskVerifier> inner)
      : inner_(std::move(inner)) {}
  std::string_view Name() const override { return inner_->Name(); }
  Result<VerificationReport> Verify(const VerificationRequest& r) override {
    SKILLDB_ASSIGN_OR_RETURN(auto d, VerifyDetailed(r));
    return d.report;
  }
  Result<verify::DetailedReport> VerifyDetailed(
      const VerificationRequest& r) override {
    const std::string key = r.task + '\0' + r.candidate.language + '\0' +
                            r.candidate.source + '\0' + r.baseline.source +
                            '\0' + std::to_string(r.rounds) + '\0' +
                            std::to_string(r.timed_calls_per_round);
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = cache_.find(key);
      if (it != cache_.end()) {
        ++hits_;
        verify::DetailedReport d = it->second;
        d.times = {};  // nothing ran
        d.times.compile_cache_hit = true;
        return d;
      }
    }
    SKILLDB_ASSIGN_OR_RETURN(auto d, inner_->VerifyDetailed(r));
    std::lock_guard<std::mutex> lock(mu_);
    ++misses_;
    cache_.emplace(key, d);
    return d;
  }
  Result<verify::DeviceDescription> Describe() override {
    return inner_->Describe();
  }
  const verify::VerifierOptions& options() const override {
    return inner_->options();
  }
  std::pair<int64_t, int64_t> Counts() {
    std::lock_guard<std::mutex> lock(mu_);
    return {hits_, misses_};
  }

 private:
  std::unique_ptr<verify::TaskVerifier> inner_;
  std::mutex mu_;
  std::map<std::string, verify::DetailedReport> cache_;
  int64_t hits_ = 0, misses_ = 0;
};

// The Selection Agent of this loop: rerank/'s listwise reranker over the
// shared backbone (RankGPT-style "[2] > [1] > ..." over the numbered BM25
// candidates), fused with BM25 as in serving, but made to call the model
// for every rollout (no skip on a strong BM25 top hit, no distrust of a
// disagreeing model, no guard on BM25's top hit): each call is a decision
// the selection is trained on by its downstream return, and an answer it
// cannot read keeps BM25 order with the reason, its call recorded anyway.
Result<std::unique_ptr<Reranker>> MakeSelectionReranker(
    llm::Backbone* backbone, double temperature, uint64_t seed) {
  rerank::ListwiseOptions lo;
  lo.prompt.max_title_bytes = 80;
  lo.prompt.max_summary_bytes = 120;
  lo.prompt.max_excerpt_bytes = 0;
  lo.prompt.max_query_bytes = 300;
  lo.temperature = temperature;
  lo.seed = seed;
  lo.max_tokens = 24;  // "[3] > [1] > [2] > ..." for a window of six
  SKILLDB_ASSIGN_OR_RETURN(auto judge,
                           rerank::ListwiseJudge::Create(backbone, lo));
  rerank::RerankerOptions ro;
  ro.fusion.strong_signal_margin = 2.0;  // > 1: never skip the model
  ro.fusion.min_agreement = -1.0;        // never distrust it
  ro.fusion.guard_ranks = 0;
  SKILLDB_ASSIGN_OR_RETURN(auto reranker,
                           rerank::ModelReranker::Create(std::move(judge), ro));
  return std::unique_ptr<Reranker>(std::move(reranker));
}

Result<std::vector<std::string>> ListJsonl(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return Status::NotFound(dir + ": cannot open directory");
  std::vector<std::string> out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 6 && n.substr(n.size() - 6) == ".jsonl") {
      out.push_back(dir + "/" + n);
    }
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// The fixture with a longer context window (its rotary positions have no
// learned table: only the config's limit changes).
Result<std::string> PrepareFixture(const std::string& fixture,
                                   const std::string& out_dir) {
  const std::string dir = out_dir + "/model";
  SKILLDB_RETURN_IF_ERROR(MakeDirs(dir));
  DIR* d = ::opendir(fixture.c_str());
  if (!d) return Status::NotFound(fixture + ": no model fixture");
  std::vector<std::string> files;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') files.push_back(e->d_name);
  }
  ::closedir(d);
  for (const auto& f : files) {
    SKILLDB_ASSIGN_OR_RETURN(std::string bytes, ReadFile(fixture + "/" + f));
    if (f == "config.json") {
      json c = json::parse(bytes, nullptr, false);
      if (c.is_discarded()) return Status::Corruption(fixture + "/config.json");
      c["max_position_embeddings"] = 4096;
      bytes = c.dump(2);
    }
    SKILLDB_RETURN_IF_ERROR(WriteFile(dir + "/" + f, bytes));
  }
  return dir;
}

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

json StatsJson(const Stats& s) {
  return {{"count", s.count},
          {"mean", s.mean},
          {"std", s.std},
          {"min", s.min},
          {"max", s.max}};
}

struct PendingSummary {
  std::string task, skill_id, rollout;
  bool inserted = false;
  std::vector<GenerationRecord> generations;
};

// Pending summaries travel in a checkpoint (their decisions are trained at
// the next step, which a resumed run takes).
json PendingToJson(const std::vector<PendingSummary>& pending) {
  json out = json::array();
  for (const auto& p : pending) {
    json gens = json::array();
    for (const auto& g : p.generations) gens.push_back(json::parse(ToJson(g)));
    out.push_back({{"task", p.task},
                   {"skill_id", p.skill_id},
                   {"rollout", p.rollout},
                   {"inserted", p.inserted},
                   {"generations", std::move(gens)}});
  }
  return out;
}

Result<std::vector<PendingSummary>> PendingFromJson(const json& in) {
  const auto bad = [] {
    return Status::Corruption(
        "checkpoint: 'pending' must be a list of summaries (task, skill_id, "
        "rollout, inserted, generations)");
  };
  if (!in.is_array()) return bad();
  std::vector<PendingSummary> out;
  for (const auto& j : in) {
    if (!j.is_object() || !j.value("task", json()).is_string() ||
        !j.value("skill_id", json()).is_string() ||
        !j.value("rollout", json()).is_string() ||
        !j.value("inserted", json()).is_boolean() ||
        !j.value("generations", json()).is_array()) {
      return bad();
    }
    PendingSummary p;
    p.task = j["task"].get<std::string>();
    p.skill_id = j["skill_id"].get<std::string>();
    p.rollout = j["rollout"].get<std::string>();
    p.inserted = j["inserted"].get<bool>();
    for (const auto& g : j["generations"]) {
      SKILLDB_ASSIGN_OR_RETURN(GenerationRecord rec,
                               FromJson<GenerationRecord>(g.dump()));
      p.generations.push_back(std::move(rec));
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

class Trainer::Impl {
 public:
  TrainConfig config;
  TrainerPaths paths;
  std::shared_ptr<ProcessGroupHandle> group;
  int rank = 0;
  TaskFamily family;
  std::string model_dir;
  std::unique_ptr<Learner> learner;
  std::unique_ptr<Library> library;
  std::unique_ptr<policy::RolloutStore> store;
  std::unique_ptr<CachingVerifier> verifier;
  policy::PolicyTask task;
  ParamPromptBuilder prompts{&family};
  ParamExtractor extractor{&family};
  std::unique_ptr<summarize::SummaryAgent> summary;
  std::mt19937_64 rng;
  int step = 0;  // RL steps done
  bool resumed = false;
  std::vector<PendingSummary> pending;
  uint64_t verify_seed = 0;

  Status Init();
  Result<std::string> ColdStart();
  Result<std::string> Step();
  Status Save(const std::string& dir);
  uint64_t LibrarySize() {
    auto s = library->Stats({});
    return s.ok() ? s->num_skills : 0;
  }
};

Status Trainer::Impl::Init() {
  if (config.out_dir.empty()) {
    return Status::InvalidArgument("train: an output directory is required");
  }
  SKILLDB_RETURN_IF_ERROR(ValidateTrainConfig(config));
  rank = group ? Rank(*group) : 0;
  SKILLDB_RETURN_IF_ERROR(MakeDirs(config.out_dir));
  rng.seed(Mix(config.seed * 7919 + rank));

  std::string family_path = config.family;
  if (family_path.empty()) {
    family_path =
        paths.tasks_dir + "/sum_dim1_fp32." + config.backend + ".json";
  }
  SKILLDB_ASSIGN_OR_RETURN(family, LoadTaskFamily(family_path));
  if (family.backend != config.backend) {
    return Status::InvalidArgument("train: family " + family_path +
                                   " is for the " + family.backend +
                                   " backend, not " + config.backend);
  }

  model_dir = config.model_dir;
  if (model_dir.empty()) {
    SKILLDB_ASSIGN_OR_RETURN(
        model_dir,
        PrepareFixture(paths.fixture_model,
                       config.out_dir + "/rank" + std::to_string(rank)));
  }
  LearnerOptions lo;
  lo.device = config.device;
  lo.optim = config.optim;
  lo.seed = config.seed;
  lo.process_group = group;
  lo.model_name = "trainer:" + model_dir;
  SKILLDB_ASSIGN_OR_RETURN(learner, Learner::Create(model_dir, lo));
  SKILLDB_RETURN_IF_ERROR(learner->BroadcastParameters());

  Options lib_opts;
  lib_opts.field_weights = kSkillLibraryWeights;
  lib_opts.create_if_missing = rank == 0;
  const std::string lib_path = config.out_dir + "/library";
  if (rank != 0) {
    // Rank 0 owns the library: the others wait for it and read.
    if (group) SKILLDB_RETURN_IF_ERROR(Barrier(*group));
    lib_opts.read_only = true;
  }
  SKILLDB_ASSIGN_OR_RETURN(library, Library::Open(lib_opts, lib_path));
  if (rank == 0) {
    if (LibrarySize() == 0) {
      SKILLDB_ASSIGN_OR_RETURN(auto files, ListJsonl(paths.seed_dir));
      std::vector<Skill> skills;
      for (const auto& f : files) {
        SKILLDB_ASSIGN_OR_RETURN(std::string text, ReadFile(f));
        std::istringstream lines(text);
        std::string line;
        while (std::getline(lines, line)) {
          if (line.empty()) continue;
          auto s = ParseSkillJson(line);
          if (!s.ok()) {
            return Status::InvalidArgument(f + ": " + s.status().message());
          }
          skills.push_back(std::move(*s));
        }
      }
      if (!skills.empty())
        SKILLDB_RETURN_IF_ERROR(library->PutMany(skills).status());
    }
    if (group) SKILLDB_RETURN_IF_ERROR(Barrier(*group));
  }

  SKILLDB_ASSIGN_OR_RETURN(
      store, policy::RolloutStore::Open(config.out_dir + "/rollouts.rank" +
                                        std::to_string(rank) + ".sqlite"));

  verify::VerifierOptions vo =
      verify::DefaultOptions(config.backend == "cuda" ? verify::Backend::kCuda
                                                      : verify::Backend::kHost);
  vo.min_timed_calls_per_round =
      std::min(vo.min_timed_calls_per_round, config.timed_calls);
  vo.warmup_calls = config.warmup_calls;
  // A speedup is established over the rounds the run asks for.
  vo.decision.min_rounds =
      std::min(vo.decision.min_rounds, config.verify_rounds);
  vo.host_workers = config.host_workers;
  SKILLDB_ASSIGN_OR_RETURN(auto inner, verify::MakeVerifier(vo));
  verifier = std::make_unique<CachingVerifier>(std::move(inner));
  SKILLDB_ASSIGN_OR_RETURN(task, policy::LoadPolicyTask(vo, family.task));

  if (config.summary && rank == 0) {
    summarize::SummaryOptions so;
    so.max_attempts = 1;
    so.sampling.max_tokens = 96;
    so.sampling.temperature = config.temperature;
    so.sampling.seed = Mix(config.seed ^ 0x5e55a9e5ull);
    so.verify_rounds = config.verify_rounds;
    so.timed_calls_per_round = config.timed_calls;
    SKILLDB_ASSIGN_OR_RETURN(summary, summarize::SummaryAgent::Make(
                                          {&learner->backbone(), library.get(),
                                           verifier.get(), store.get()},
                                          so));
  }
  SKILLDB_RETURN_IF_ERROR(
      WriteFile(config.out_dir + "/config.json", TrainConfigToJson(config)));

  if (!config.resume.empty()) {
    SKILLDB_ASSIGN_OR_RETURN(auto info, learner->LoadCheckpoint(config.resume));
    // Checked whole before any step runs (config.h: ResumePointFromJson).
    SKILLDB_ASSIGN_OR_RETURN(
        ResumePoint point,
        ResumePointFromJson(info.extra_json, config.resume + "/meta.json"));
    step = point.loop_step;
    rng = point.rng;
    if (!point.pending_json.empty()) {
      SKILLDB_ASSIGN_OR_RETURN(
          pending, PendingFromJson(json::parse(point.pending_json)));
    }
    resumed = true;
  }
  return Status::Ok();
}

Result<std::string> Trainer::Impl::ColdStart() {
  json line = {{"phase", "sft"}};
  if (resumed || config.sft_epochs == 0) {
    line["skipped"] = resumed ? "resumed" : "sft_epochs is 0";
    return line.dump();
  }
  std::vector<SftRecord> records;
  if (!config.sft_data.empty()) {
    SKILLDB_ASSIGN_OR_RETURN(records, ReadSftJsonl(config.sft_data));
    line["source"] = config.sft_data;
  } else {
    // Demonstrations: valid parameter lines of the family (uniform over
    // the combinations: the format, not the answer), prompted as the policy
    // agent prompts its first turn.
    auto combos = AllCombinations(family);
    std::shuffle(combos.begin(), combos.end(), rng);
    policy::PromptInput in;
    in.task = &task;
    // The skills BM25 puts first for the task, as the agent's first turn
    // retrieves them (the reranker keeps BM25 order when it cannot judge).
    policy::SelectionRequest request;
    request.query = policy::RetrievalQuery(task);
    if (!task.task.family.empty()) request.ops = {task.task.family};
    if (task.backend == verify::Backend::kCuda) {
      request.arch = {"sm_90"};
      request.language = Language::kCuda;
    }
    policy::SelectionOptions sel;
    sel.retrieve_k = 6;
    sel.select_k = 2;
    policy::Bm25Selector bm25(library.get(), sel);
    auto picked = bm25.Select(request);
    if (picked.ok()) in.new_skills = picked->skills;
    auto chat = prompts.Build(in);
    for (int i = 0; i < config.sft_demo_records; ++i) {
      records.push_back({"policy", family.task, chat,
                         FormatParams(family, combos[i % combos.size()])});
    }
    line["source"] = "demonstrations";
  }
  SftFilterReport rep;
  SKILLDB_ASSIGN_OR_RETURN(auto kept,
                           FilterSft(records, config.sft_filter, &rep));
  line["filter"] = json::parse(rep.ToJson());
  std::vector<TrainSequence> seqs;
  for (const auto& r : kept) {
    TrainSequence s;
    s.agent = r.agent;
    SKILLDB_ASSIGN_OR_RETURN(s.prompt_ids, learner->EncodePrompt(r.messages));
    SKILLDB_ASSIGN_OR_RETURN(s.completion_ids,
                             learner->EncodeText(r.completion));
    if (!learner->EosIds().empty())
      s.completion_ids.push_back(learner->EosIds()[0]);
    s.advantage = 1.0;
    seqs.push_back(std::move(s));
  }
  if (seqs.empty()) {
    line["skipped"] = "no records";
    return line.dump();
  }
  SKILLDB_ASSIGN_OR_RETURN(double before, learner->MeanNll(seqs));
  learner->SetLearningRate(config.sft_lr);
  const auto start = std::chrono::steady_clock::now();
  int steps = 0;
  int64_t tokens = 0;
  const size_t batch = static_cast<size_t>(config.optim.micro_batch) * 2;
  for (int e = 0; e < config.sft_epochs; ++e) {
    std::shuffle(seqs.begin(), seqs.end(), rng);
    for (size_t at = 0; at < seqs.size(); at += batch) {
      std::vector<TrainSequence> b(
          seqs.begin() + at, seqs.begin() + std::min(seqs.size(), at + batch));
      SKILLDB_ASSIGN_OR_RETURN(auto st, learner->Step(b));
      tokens += st.tokens;
      ++steps;
    }
  }
  learner->SetLearningRate(config.optim.lr);
  SKILLDB_ASSIGN_OR_RETURN(double after, learner->MeanNll(seqs));
  line["nll_before"] = before;
  line["nll_after"] = after;
  line["optimizer_steps"] = steps;
  line["completion_tokens"] = tokens;
  line["seconds"] = Ms(start) / 1000.0;
  return line.dump();
}

Result<std::string> Trainer::Impl::Step() {
  const auto step_start = std::chrono::steady_clock::now();
  ++step;
  double gen_ms = 0, verify_ms = 0, library_ms = 0;
  const auto backbone_before = learner->backbone().Usage();

  // Selection stage: a listwise reranker over the shared backbone, seeded
  // per rollout so the groups explore.
  struct Rollout {
    policy::Trajectory trajectory;
    double ret = 0;  // discounted policy return
  };
  std::vector<Rollout> rollouts;
  Version version_before = library->CurrentVersion();
  for (int t = 0; t < config.tasks_per_step; ++t) {
    for (int g = 0; g < config.groups; ++g) {
      const uint64_t seed =
          Mix(config.seed ^ Mix(step * 1000003ull + t * 1009 + g) ^
              (uint64_t(rank) << 48));
      std::unique_ptr<Reranker> reranker;
      std::unique_ptr<policy::SkillSelector> selector;
      policy::SelectionOptions sel;
      sel.retrieve_k = 6;
      sel.select_k = 2;
      if (config.selection) {
        SKILLDB_ASSIGN_OR_RETURN(
            reranker, MakeSelectionReranker(&learner->backbone(),
                                            config.temperature,
                                            seed ^ 0x5e1ec7));
        selector = std::make_unique<policy::RerankingSelector>(
            library.get(), reranker.get(), sel);
      } else {
        selector = std::make_unique<policy::Bm25Selector>(library.get(), sel);
      }
      policy::PolicyAgentDeps deps;
      deps.backbone = &learner->backbone();
      deps.selector = selector.get();
      deps.verifier = verifier.get();
      deps.library = rank == 0 ? library.get() : nullptr;
      deps.store = store.get();
      deps.extractor = &extractor;
      deps.prompts = &prompts;
      deps.reward = policy::MakeDefaultReward(
          {config.rewards.correct_weight, config.rewards.speedup_weight,
           config.rewards.speedup_cap, config.rewards.hack_reward});
      SKILLDB_ASSIGN_OR_RETURN(auto agent, policy::PolicyAgent::Make(deps));
      policy::PolicyOptions po;
      po.max_turns = config.max_turns;
      po.samples = 1;
      po.sampling.temperature = config.temperature;
      po.sampling.max_tokens = config.max_new_tokens;
      po.sampling.seed = seed;
      po.verify_rounds = config.verify_rounds;
      po.timed_calls_per_round = config.timed_calls;
      po.reselect_each_turn = false;
      po.record_usage = rank == 0;
      po.group = "step" + std::to_string(step) + "/" + family.task + "/g" +
                 std::to_string(g);
      SKILLDB_ASSIGN_OR_RETURN(auto traj, agent->Solve(task, po));
      Rollout r;
      double disc = 1;
      for (const auto& turn : traj.turns) {
        r.ret += disc * turn.reward;
        disc *= config.advantages.gamma;
        gen_ms += turn.times.generation_ms + turn.times.rerank_ms;
        verify_ms += turn.times.verify_wall_ms;
        library_ms += turn.times.usage_ms;
      }
      r.trajectory = std::move(traj);
      rollouts.push_back(std::move(r));
    }
  }
  // A rollout that failed (its turn could not generate, say) has no turns
  // to learn from: counted and named in the step line; a step in which
  // every rollout failed is an error, not a step that silently trains on
  // nothing.
  int failed = 0;
  std::string first_error;
  for (const auto& r : rollouts) {
    if (r.trajectory.status != "failed") continue;
    if (failed++ == 0) first_error = r.trajectory.error;
  }
  if (!rollouts.empty() && failed == static_cast<int>(rollouts.size())) {
    return Status::Internal("step " + std::to_string(step) + ": all " +
                            std::to_string(failed) +
                            " rollouts failed; the first: " + first_error);
  }

  // Decisions: policy turns, selections, summaries (last step's, with
  // their later utility, and this step's when they wrote nothing).
  std::vector<Decision> decisions;
  std::vector<TrainSequence> seqs;
  auto add = [&](const Decision& d, const GenerationRecord& g) {
    decisions.push_back(d);
    TrainSequence s;
    s.agent = d.agent;
    s.prompt_ids = g.prompt_token_ids;
    s.completion_ids = g.completion_token_ids;
    seqs.push_back(std::move(s));
  };
  std::vector<SelectionOutcome> sel_outcomes;
  std::vector<std::pair<const Rollout*, const GenerationRecord*>> sel_gens;
  std::vector<double> speedups;
  std::map<std::string, int> verdicts;
  std::map<std::string, int> uses;  // skill id -> successful uses
  int solved = 0;
  for (const auto& r : rollouts) {
    const auto& tr = r.trajectory;
    solved += tr.solved;
    for (const auto& turn : tr.turns) {
      for (const auto& s : turn.samples) {
        ++verdicts[std::string(policy::SampleVerdictName(s.verdict))];
        if (s.report && s.report->correctness.passed &&
            !s.report->rounds.empty()) {
          speedups.push_back(s.report->speedup.ratio);
        }
      }
      if (turn.best_sample >= 0) {
        const auto& s = turn.samples[turn.best_sample];
        add({tr.task, "policy", tr.id, turn.turn, turn.reward}, s.generation);
        if (turn.reward >= config.rewards.correct_weight) {
          for (const auto& ref : turn.selection.selected) ++uses[ref.id];
        }
      }
    }
    if (!tr.turns.empty() && !tr.turns[0].selection.reused) {
      for (const auto& g : tr.turns[0].selection.generations) {
        sel_outcomes.push_back({tr.task, r.ret});
        sel_gens.push_back({&r, &g});
      }
    }
  }
  const auto sel_rewards = SelectionRewards(sel_outcomes, config.rewards);
  for (size_t i = 0; i < sel_gens.size(); ++i) {
    add({sel_gens[i].first->trajectory.task, "selection",
         sel_gens[i].first->trajectory.id + "/selection/" + std::to_string(i),
         0, sel_rewards[i]},
        *sel_gens[i].second);
  }
  int summaries_trained = 0;
  for (const auto& p : pending) {
    const int u = p.skill_id.empty() ? 0 : uses[p.skill_id];
    const double reward = SummaryReward(p.inserted, u, config.rewards);
    for (size_t k = 0; k < p.generations.size(); ++k) {
      add({p.task, "summary", p.rollout + "/summary/" + std::to_string(k), 0,
           reward},
          p.generations[k]);
      ++summaries_trained;
    }
  }
  pending.clear();

  // Summary stage on solved rollouts (rank 0 writes the library).
  int skills_added = 0, distilled = 0;
  if (summary) {
    for (const auto& r : rollouts) {
      if (!r.trajectory.solved) continue;
      const auto start = std::chrono::steady_clock::now();
      auto d = summary->Distill(r.trajectory, task);
      library_ms += Ms(start);
      if (!d.ok()) continue;
      ++distilled;
      PendingSummary p;
      p.task = r.trajectory.task;
      p.rollout = r.trajectory.id;
      p.inserted = d->outcome == "accepted";
      p.skill_id = p.inserted ? d->skill_id : "";
      p.generations = d->generations;
      skills_added += p.inserted;
      pending.push_back(std::move(p));
    }
  }

  // Advantages and the update.
  SKILLDB_ASSIGN_OR_RETURN(auto adv,
                           ComputeAdvantages(decisions, config.advantages));
  for (size_t i = 0; i < seqs.size(); ++i)
    seqs[i].advantage = adv.advantages[i];
  json line;
  line["step"] = step;
  line["rank"] = rank;
  StepStats st;
  bool trained = false;
  const auto train_start = std::chrono::steady_clock::now();
  bool any_tokens = false;
  for (const auto& s : seqs) any_tokens |= !s.completion_ids.empty();
  if (any_tokens) {
    SKILLDB_ASSIGN_OR_RETURN(st, learner->Step(seqs));
    trained = true;
  }
  const double train_ms = Ms(train_start);

  std::vector<double> rewards_raw;
  for (const auto& d : decisions) rewards_raw.push_back(d.reward);
  json reward_j = json::object(), adv_j = json::object(),
       ret_j = json::object();
  for (auto& [agent, s] : StatsPerAgent(decisions, rewards_raw)) {
    reward_j[agent] = StatsJson(s);
  }
  for (auto& [agent, s] : StatsPerAgent(decisions, adv.advantages)) {
    adv_j[agent] = StatsJson(s);
  }
  for (auto& [agent, s] : StatsPerAgent(decisions, adv.returns)) {
    ret_j[agent] = StatsJson(s);
  }
  line["reward"] = reward_j;
  line["advantage"] = adv_j;
  line["return"] = ret_j;
  line["rollouts"] = rollouts.size();
  line["failed_rollouts"] = failed;
  if (failed > 0) line["first_error"] = first_error;
  line["solved"] = solved;
  line["verdicts"] = verdicts;
  Stats sp = Summarize(speedups);
  line["speedup"] = {{"count", sp.count},
                     {"mean", sp.count ? sp.mean : 0.0},
                     {"best", sp.count ? sp.max : 0.0}};
  line["trained"] = trained;
  line["loss"] = st.loss;
  line["pg_loss"] = st.pg_loss;
  line["kl"] = st.kl;
  line["grad_norm"] = st.grad_norm;
  line["lr"] = st.lr;
  line["train_tokens"] = st.tokens;
  line["train_tokens_per_s"] = st.tokens_per_s;
  line["sequences"] = st.sequences;
  const auto usage = learner->backbone().Usage();
  const double gen_tokens = static_cast<double>(
      usage.completion_tokens - backbone_before.completion_tokens);
  line["generated_tokens"] = gen_tokens;
  line["generation_tokens_per_s"] =
      gen_ms > 0 ? gen_tokens / (gen_ms / 1000) : 0;
  line["distilled"] = distilled;
  line["summaries_trained"] = summaries_trained;
  line["skills_added"] = skills_added;
  line["library"] = {{"size", LibrarySize()},
                     {"version", library->CurrentVersion()},
                     {"version_before", version_before}};
  auto [hits, misses] = verifier->Counts();
  line["reward_cache"] = {{"hits", hits}, {"misses", misses}};
  const double total_ms = Ms(step_start);
  line["time_s"] = {{"generation", gen_ms / 1000},
                    {"verification", verify_ms / 1000},
                    {"training", train_ms / 1000},
                    {"library", library_ms / 1000},
                    {"total", total_ms / 1000}};
  const std::string text = line.dump();
  if (rank == 0) {
    std::string all;
    auto prev = ReadFile(config.out_dir + "/steps.jsonl");
    if (prev.ok()) all = *prev;
    SKILLDB_RETURN_IF_ERROR(
        WriteFile(config.out_dir + "/steps.jsonl", all + text + "\n"));
  }
  return text;
}

Status Trainer::Impl::Save(const std::string& dir) {
  if (rank != 0) return Status::Ok();
  std::ostringstream rng_state;
  rng_state << rng;
  json extra = {{"loop_step", step},
                {"rng", rng_state.str()},
                {"pending", PendingToJson(pending)}};
  return learner->SaveCheckpoint(dir,
                                 {.step = learner->step(),
                                  .library_version = library->CurrentVersion(),
                                  .extra_json = extra.dump()});
}

Trainer::Trainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Trainer::~Trainer() = default;

Result<std::unique_ptr<Trainer>> Trainer::Create(
    const TrainConfig& config, const TrainerPaths& paths,
    std::shared_ptr<ProcessGroupHandle> group) {
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->paths = paths;
  impl->group = std::move(group);
  SKILLDB_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<Trainer>(new Trainer(std::move(impl)));
}

Result<std::string> Trainer::ColdStart() { return impl_->ColdStart(); }
Result<std::string> Trainer::Step() { return impl_->Step(); }
Status Trainer::SaveCheckpoint(const std::string& dir) {
  return impl_->Save(dir);
}

Status Trainer::Run(const std::function<void(const std::string&)>& on_line) {
  SKILLDB_ASSIGN_OR_RETURN(std::string sft, ColdStart());
  on_line(sft);
  while (impl_->step < impl_->config.steps) {
    SKILLDB_ASSIGN_OR_RETURN(std::string line, Step());
    on_line(line);
    const int every = impl_->config.checkpoint_every;
    if (every > 0 && impl_->step % every == 0) {
      SKILLDB_RETURN_IF_ERROR(SaveCheckpoint(impl_->config.out_dir +
                                             "/checkpoints/step" +
                                             std::to_string(impl_->step)));
    }
  }
  return SaveCheckpoint(impl_->config.out_dir + "/checkpoints/final");
}

}  // namespace skilldb::trainer
