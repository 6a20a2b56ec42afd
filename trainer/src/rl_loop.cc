// The RL loop (see rl_loop.h): building a run (Init, in phases), the SFT
// cold start, checkpoints. One step is rl_step.cc. No torch here: the
// learner's header has none.
#include "skilldb/trainer/rl_loop.h"

#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "skilldb/json.h"
#include "skilldb/options.h"
#include "skilldb/policy/reward.h"
#include "skilldb/skill.h"
#include "skilldb/trainer/distributed.h"
#include "skilldb/trainer/report.h"
#include "skilldb/trainer/sft_data.h"
#include "skilldb/util/clock.h"
#include "skilldb/verify/verify.h"
#include "trainer_impl.h"

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

using internal::Mix;

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
                                   const std::string& out_dir,
                                   int context_tokens) {
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
      c["max_position_embeddings"] = context_tokens;
      bytes = c.dump(2);
    }
    SKILLDB_RETURN_IF_ERROR(WriteFile(dir + "/" + f, bytes));
  }
  return dir;
}

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

uint64_t Trainer::Impl::LibrarySize() {
  auto s = library->Stats({});
  return s.ok() ? s->num_skills : 0;
}

policy::SelectionOptions Trainer::Impl::Selection() const {
  policy::SelectionOptions sel;
  sel.retrieve_k = static_cast<size_t>(config.loop.retrieve_k);
  sel.select_k = static_cast<size_t>(config.loop.select_k);
  return sel;
}

std::vector<SlotRef> Trainer::Impl::TrainSlots() const {
  if (!config.kernelbench.enabled()) {
    return {SlotRef{&family, &task, prompts.get(), policy.get(), summary.get(),
                    nullptr}};
  }
  std::vector<SlotRef> out;
  for (const auto& slot : kb_train) out.push_back(Ref(*slot));
  return out;
}

SlotRef Trainer::Impl::Ref(const KbSlot& slot) {
  return {&slot.family,      &slot.task,         slot.prompts.get(),
          slot.policy.get(), slot.summary.get(), slot.free_prompts.get()};
}

policy::SelectionRequest Trainer::Impl::FirstTurnRequest(
    const policy::PolicyTask& task) const {
  policy::SelectionRequest request;
  request.query = policy::RetrievalQuery(task);
  if (!task.task.family.empty()) request.ops = {task.task.family};
  if (task.backend == verify::Backend::kCuda) {
    auto arch = verifier->DeviceClass();
    if (arch.ok() && !arch->empty()) request.arch = {*arch};
    request.language = Language::kCuda;
  }
  return request;
}

Status Trainer::Impl::Init() {
  if (config.out_dir.empty()) {
    return Status::InvalidArgument("train: an output directory is required");
  }
  SKILLDB_RETURN_IF_ERROR(ValidateTrainConfig(config));
  rank = group ? Rank(*group) : 0;
  SKILLDB_RETURN_IF_ERROR(MakeDirs(config.out_dir));
  rng.seed(Mix(config.seed * config.loop.rank_stride + rank));
  SKILLDB_RETURN_IF_ERROR(LoadFamily());
  SKILLDB_RETURN_IF_ERROR(OpenLearner());
  SKILLDB_RETURN_IF_ERROR(OpenLibrary());
  SKILLDB_ASSIGN_OR_RETURN(
      store, policy::RolloutStore::Open(config.out_dir + "/rollouts.rank" +
                                        std::to_string(rank) + ".sqlite"));
  SKILLDB_RETURN_IF_ERROR(OpenVerifier());
  SKILLDB_RETURN_IF_ERROR(WireAgents());
  SKILLDB_RETURN_IF_ERROR(
      WriteFile(config.out_dir + "/config.json", TrainConfigToJson(config)));
  if (rank == 0) {
    SKILLDB_ASSIGN_OR_RETURN(events, EventWriter::Open(config.out_dir));
  }
  return Resume();
}

Status Trainer::Impl::LoadFamily() {
  if (config.kernelbench.enabled()) return Status::Ok();  // OpenKernelBench
  std::string path = config.family;
  if (path.empty()) {
    path = paths.tasks_dir + "/sum_dim1_fp32." + config.backend + ".json";
  }
  SKILLDB_ASSIGN_OR_RETURN(family, LoadTaskFamily(path));
  if (family.backend != config.backend) {
    return Status::InvalidArgument("train: family " + path + " is for the " +
                                   family.backend + " backend, not " +
                                   config.backend);
  }
  return Status::Ok();
}

Status Trainer::Impl::OpenLearner() {
  model_dir = config.model_dir;
  if (model_dir.empty()) {
    SKILLDB_ASSIGN_OR_RETURN(
        model_dir,
        PrepareFixture(paths.fixture_model,
                       config.out_dir + "/rank" + std::to_string(rank),
                       config.loop.fixture_context_tokens));
  }
  LearnerOptions lo;
  lo.device = config.device;
  lo.optim = config.optim;
  lo.seed = config.seed;
  lo.process_group = group;
  lo.model_name = "trainer:" + model_dir;
  SKILLDB_ASSIGN_OR_RETURN(learner, Learner::Create(model_dir, lo));
  return learner->BroadcastParameters();
}

// Rank 0 owns the library (creates and seeds it); the others wait for it
// and open it read-only.
Status Trainer::Impl::OpenLibrary() {
  Options lib_opts;
  lib_opts.field_weights = kSkillLibraryWeights;
  lib_opts.create_if_missing = rank == 0;
  if (rank != 0) {
    if (group) SKILLDB_RETURN_IF_ERROR(Barrier(*group));
    lib_opts.read_only = true;
  }
  SKILLDB_ASSIGN_OR_RETURN(library,
                           Library::Open(lib_opts, config.out_dir + "/library"));
  if (rank == 0) {
    if (LibrarySize() == 0) SKILLDB_RETURN_IF_ERROR(SeedLibrary());
    if (group) SKILLDB_RETURN_IF_ERROR(Barrier(*group));
  }
  return ReadRunSkills();
}

Status Trainer::Impl::ReadRunSkills() {
  return library->Scan({}, [&](const Skill& s) {
    if (s.provenance.source == "summary-agent") run_skills.insert(s.id);
    return true;
  });
}

// Every skill of paths.seed_dir/*.jsonl, in one commit.
Status Trainer::Impl::SeedLibrary() {
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
  if (skills.empty()) return Status::Ok();
  return library->PutMany(skills).status();
}

Status Trainer::Impl::OpenVerifier() {
  if (config.kernelbench.enabled()) return OpenKernelBench();
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
  verifier = std::make_unique<internal::CachingVerifier>(std::move(inner));
  SKILLDB_ASSIGN_OR_RETURN(task, policy::LoadPolicyTask(vo, family.task));
  return Status::Ok();
}

namespace {

// The problem `id` of a split, or an error naming the split's key.
Result<verify::kb::Problem> SplitProblem(const verify::kb::TaskStore& store,
                                         const KernelBenchConfig& k,
                                         const char* key, int id) {
  auto p = store.Get(k.level, id);
  if (p.ok()) return p;
  if (!p.status().IsNotFound()) return p.status();
  return Status::InvalidArgument(
      std::string("config: 'kernelbench.") + key + "' names problem " +
      std::to_string(id) + ", which the task store " + k.store +
      " does not hold at level " + std::to_string(k.level) +
      " (skilldb kernelbench import)");
}

}  // namespace

// The KernelBench task source: the store, the evaluator (the confined
// torch runner, on the CPU for cpp answers), the verifier over it behind
// the reward cache, and every problem of both splits with its answer
// template.
Status Trainer::Impl::OpenKernelBench() {
  namespace kbv = verify::kb;
  const KernelBenchConfig& k = config.kernelbench;
  SKILLDB_ASSIGN_OR_RETURN(kbv::TaskStore store, kbv::TaskStore::Open(k.store));
  const bool cpu = k.format == "cpp";
  kbv::RunnerOptions ro;
  ro.python = k.python;
  ro.device = cpu ? "cpu" : "cuda";
  if (cpu) ro.memory_bytes = int64_t{8} << 30;
  ro = kbv::WithDefaults(ro);
  kbv::EvalOptions eo;
  eo.correctness_trials = k.correctness_trials;
  eo.rounds = config.verify_rounds;
  eo.calls_per_round = config.timed_calls;
  eo.warmup_calls = config.warmup_calls;
  eo.cache_dir = k.cache_dir;
  // torch.compile's baseline is a GPU figure (and minutes on a CPU).
  eo.compile_baseline = !cpu;
  eo.seed = Mix(config.seed);
  SKILLDB_ASSIGN_OR_RETURN(std::unique_ptr<kbv::Evaluator> ev,
                           kbv::Evaluator::Make(ro, eo));
  std::shared_ptr<kbv::Evaluator> shared(std::move(ev));
  std::string device_class = "host";
  kb_device = internal::CpuDeviceLine();
  if (!cpu) {
    SKILLDB_ASSIGN_OR_RETURN(kbv::DeviceInfo d, shared->Describe());
    kb_device = policy::DescribeKernelBenchDevice(d);
    device_class = "sm_" + d.capability.substr(0, d.capability.find('.')) +
                   (d.capability.find('.') == std::string::npos
                        ? ""
                        : d.capability.substr(d.capability.find('.') + 1));
  }
  for (const auto& [key, ids, slots] :
       {std::tuple{"train", &k.train, &kb_train},
        std::tuple{"heldout", &k.heldout, &kb_heldout}}) {
    for (int id : *ids) {
      SKILLDB_ASSIGN_OR_RETURN(kbv::Problem p, SplitProblem(store, k, key, id));
      auto slot = std::make_unique<KbSlot>();
      SKILLDB_ASSIGN_OR_RETURN(slot->family,
                               internal::LoadKbFamily(k, id, config.backend));
      slot->task = internal::KbPolicyTask(p, slot->family);
      slot->problem = std::move(p);
      slots->push_back(std::move(slot));
    }
  }
  auto verifier_kb = std::make_unique<internal::KbVerifier>(
      shared, std::move(store), device_class);
  kb = verifier_kb.get();
  verifier =
      std::make_unique<internal::CachingVerifier>(std::move(verifier_kb));
  return Status::Ok();
}

// A problem's Policy Agent (its template's prompts and extractor, or with
// free-form answers the KernelBench prompt and extractor; the run's
// selector, verifier and rewards) and Summary Agent.
Status Trainer::Impl::WireKbSlot(KbSlot* slot) {
  const KernelBenchConfig& k = config.kernelbench;
  slot->prompts = std::make_unique<internal::ParamPromptBuilder>(&slot->family,
                                                                 config.loop);
  slot->extractor = std::make_unique<internal::ParamExtractor>(&slot->family);
  const policy::PromptBuilder* prompts = slot->prompts.get();
  const policy::CompletionExtractor* extractor = slot->extractor.get();
  if (k.answers == "free") {
    SKILLDB_ASSIGN_OR_RETURN(policy::KernelBenchFormat format,
                             policy::ParseKernelBenchFormat(k.format));
    slot->free_prompts = std::make_unique<internal::KbFreePromptBuilder>(
        slot->problem, format, kb_device, kb);
    slot->free_extractor =
        std::make_unique<internal::KbFreeExtractor>(k.format);
    prompts = slot->free_prompts.get();
    extractor = slot->free_extractor.get();
  }
  policy::PolicyAgentDeps deps;
  deps.backbone = &learner->backbone();
  deps.selector = selector.get();
  deps.verifier = verifier.get();
  deps.library = rank == 0 ? library.get() : nullptr;
  deps.store = store.get();
  deps.extractor = extractor;
  deps.prompts = prompts;
  deps.reward = internal::MakeKbReward(config.rewards);
  SKILLDB_ASSIGN_OR_RETURN(slot->policy, policy::PolicyAgent::Make(deps));
  return WireSummary(slot->family, &slot->distill_prompts, &slot->summary);
}

// The Summary Agent for `family` (rank 0, with summaries and skills on).
Status Trainer::Impl::WireSummary(
    const TaskFamily& family,
    std::unique_ptr<internal::ParamDistillPrompts>* prompts,
    std::unique_ptr<summarize::SummaryAgent>* agent) {
  if (!config.summary || !config.skills || rank != 0) return Status::Ok();
  if (config.loop.family_summary_prompt) {
    *prompts =
        std::make_unique<internal::ParamDistillPrompts>(&family, config.loop);
  }
  SKILLDB_ASSIGN_OR_RETURN(
      *agent, summarize::SummaryAgent::Make(
                  {&learner->backbone(), library.get(), verifier->uncached(),
                   store.get(), prompts->get()},
                  SummaryAgentOptions()));
  return Status::Ok();
}

// The Selection Agent (listwise over the backbone, or BM25 alone, or
// nothing in the no-skill arm), the Policy Agent with the family's prompts
// and extractor, and the Summary Agent (rank 0).
Status Trainer::Impl::WireAgents() {
  if (!config.skills) {
    selector = std::make_unique<internal::NoSkillSelector>();
  } else if (config.selection) {
    SKILLDB_ASSIGN_OR_RETURN(
        reranker, internal::MakeSelectionReranker(
                      &learner->backbone(), config.temperature, config.loop));
    selector = std::make_unique<policy::RerankingSelector>(
        library.get(), reranker.get(), Selection());
  } else {
    selector = std::make_unique<policy::Bm25Selector>(library.get(), Selection());
  }
  if (config.kernelbench.enabled()) {
    for (auto* slots : {&kb_train, &kb_heldout}) {
      for (auto& slot : *slots) SKILLDB_RETURN_IF_ERROR(WireKbSlot(slot.get()));
    }
    return Status::Ok();
  }
  prompts =
      std::make_unique<internal::ParamPromptBuilder>(&family, config.loop);
  extractor = std::make_unique<internal::ParamExtractor>(&family);
  policy::PolicyAgentDeps deps;
  deps.backbone = &learner->backbone();
  deps.selector = selector.get();
  deps.verifier = verifier.get();
  deps.library = rank == 0 ? library.get() : nullptr;
  deps.store = store.get();
  deps.extractor = extractor.get();
  deps.prompts = prompts.get();
  const RewardConfig& r = config.rewards;
  deps.reward = policy::MakeDefaultReward(
      {r.correct_weight, r.speedup_weight, r.speedup_cap, r.hack_reward});
  SKILLDB_ASSIGN_OR_RETURN(policy, policy::PolicyAgent::Make(deps));
  return WireSummary(family, &distill_prompts, &summary);
}

// The Summary Agent's settings: config.loop's attempts, tokens and
// temperature; verification and the insertion policy over the rounds the
// run asks for (as the verifier's own decision, OpenVerifier).
summarize::SummaryOptions Trainer::Impl::SummaryAgentOptions() const {
  summarize::SummaryOptions so;
  so.max_attempts = config.loop.summary_attempts;
  so.sampling.max_tokens = config.loop.summary_max_tokens;
  so.sampling.temperature = config.loop.summary_temperature >= 0
                                ? config.loop.summary_temperature
                                : config.temperature;
  so.sampling.seed = Mix(config.seed ^ config.loop.summary_salt);
  so.verify_rounds = config.verify_rounds;
  so.timed_calls_per_round = config.timed_calls;
  so.proposal.policy.min_rounds =
      std::min(so.proposal.policy.min_rounds, config.verify_rounds);
  return so;
}

// A checkpoint's extra state: the loop step, the shuffling RNG and the
// pending summaries (their decisions are trained at the next step),
// checked whole before any step runs (config.h: ResumePointFromJson).
Status Trainer::Impl::Resume() {
  if (config.resume.empty()) return Status::Ok();
  SKILLDB_ASSIGN_OR_RETURN(auto info, learner->LoadCheckpoint(config.resume));
  SKILLDB_ASSIGN_OR_RETURN(
      ResumePoint point,
      ResumePointFromJson(info.extra_json, config.resume + "/meta.json"));
  step = point.loop_step;
  resumed = true;
  rng = point.rng;
  if (!point.pending_json.empty()) {
    SKILLDB_ASSIGN_OR_RETURN(
        pending, PendingFromJson(json::parse(point.pending_json)));
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
    records = Demonstrations();
    line["source"] = "demonstrations";
  }
  SftFilterReport rep;
  SKILLDB_ASSIGN_OR_RETURN(auto kept,
                           FilterSft(records, config.sft_filter, &rep));
  line["filter"] = json::parse(rep.ToJson());
  SKILLDB_ASSIGN_OR_RETURN(std::vector<TrainSequence> seqs,
                           SftSequences(kept));
  if (seqs.empty()) {
    line["skipped"] = "no records";
    return line.dump();
  }
  SKILLDB_RETURN_IF_ERROR(SftEpochs(&seqs, &line));
  // The KL term (optim.kl_coef) holds RL near the fine-tuned policy.
  SKILLDB_RETURN_IF_ERROR(learner->AnchorReference());
  return line.dump();
}

// Valid parameter lines of each training task's template (uniform over
// its combinations: the format, not the answer; sft_demo_records shared
// out over the tasks), prompted as the Policy Agent prompts its first
// turn, with the skills BM25 puts first for the task (the reranker keeps
// BM25 order when it cannot judge).
std::vector<SftRecord> Trainer::Impl::Demonstrations() {
  std::vector<SftRecord> records;
  const std::vector<SlotRef> slots = TrainSlots();
  const int n = static_cast<int>(slots.size());
  for (int k = 0; k < n; ++k) {
    const int share =
        config.sft_demo_records / n + (k < config.sft_demo_records % n);
    SlotDemonstrations(slots[k], share, &records);
  }
  return records;
}

void Trainer::Impl::SlotDemonstrations(const SlotRef& slot, int count,
                                       std::vector<SftRecord>* records) {
  auto combos = AllCombinations(*slot.family);
  std::shuffle(combos.begin(), combos.end(), rng);
  policy::PromptInput in;
  in.task = slot.task;
  if (config.skills) {
    policy::Bm25Selector bm25(library.get(), Selection());
    auto picked = bm25.Select(FirstTurnRequest(*slot.task));
    if (picked.ok()) in.new_skills = picked->skills;
  }
  // Free-form answers are demonstrated as the template renders them: a
  // whole ModelNew in one fenced block, under the KernelBench prompt.
  const bool free = slot.free_prompts != nullptr;
  const auto chat =
      free ? slot.free_prompts->Build(in) : slot.prompts->Build(in);
  for (int i = 0; i < count; ++i) {
    const ParamValues& combo = combos[i % combos.size()];
    records->push_back(
        {"policy", slot.family->task, chat,
         free ? "```python\n" + Render(*slot.family, combo) + "\n```"
              : FormatParams(*slot.family, combo)});
  }
  // Without skills (the no-skill arm) nothing shows a skill and no
  // Summary Agent runs: neither is demonstrated. The skill and summary
  // demonstrations are the templates' (parameters), not free-form ones.
  if (!config.skills || free) return;
  SkillDemonstrations(slot, combos, in, records);
  SummaryDemonstrations(slot, combos, records);
}

// Policy prompts that show a skill stating parameters (first or second of
// the skills, beside BM25's first pick), answered with those parameters:
// what reading a skill looks like, over every combination alike (not
// which parameters are good).
void Trainer::Impl::SkillDemonstrations(const SlotRef& slot,
                                        const std::vector<ParamValues>& combos,
                                        const policy::PromptInput& first_turn,
                                        std::vector<SftRecord>* records) {
  for (int i = 0; i < config.loop.skill_demo_records; ++i) {
    const std::string params =
        FormatParams(*slot.family, combos[(i * 7 + 3) % combos.size()]);
    policy::PromptInput in = first_turn;
    in.new_skills.resize(std::min<size_t>(in.new_skills.size(), 1));
    const auto at = in.new_skills.begin() + (i % 2 == 0 ? 0 : in.new_skills.size());
    in.new_skills.insert(at, internal::DemoSkill(params));
    records->push_back(
        {"policy", slot.family->task, slot.prompts->Build(in), params});
  }
}

// The summary role: verified parameters in (the family's short prompt), a
// skill stating them out (DemoSkillJson).
void Trainer::Impl::SummaryDemonstrations(
    const SlotRef& slot, const std::vector<ParamValues>& combos,
    std::vector<SftRecord>* records) {
  if (config.loop.summary_demo_records == 0) return;
  const internal::ParamDistillPrompts builder(slot.family, config.loop);
  for (int i = 0; i < config.loop.summary_demo_records; ++i) {
    const std::string params =
        FormatParams(*slot.family, combos[(i * 5 + 1) % combos.size()]);
    records->push_back(
        {"summary", slot.family->task, builder.ForParams(params),
         internal::DemoSkillJson(slot.task->task.description,
                                 slot.task->task.family, params)});
  }
}

// The records as token sequences: the prompt as generation renders it,
// the completion with EOS, advantage 1 (plain likelihood).
Result<std::vector<TrainSequence>> Trainer::Impl::SftSequences(
    const std::vector<SftRecord>& records) {
  std::vector<TrainSequence> seqs;
  for (const auto& r : records) {
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
  return seqs;
}

// sft_epochs shuffled passes at sft_lr in batches of two micro-batches;
// the NLL before and after, steps, tokens and seconds go to `line`.
Status Trainer::Impl::SftEpochs(std::vector<TrainSequence>* seqs,
                                json* line) {
  SKILLDB_ASSIGN_OR_RETURN(double before, learner->MeanNll(*seqs));
  learner->SetLearningRate(config.sft_lr);
  const auto start = util::SteadyClock::now();
  int steps = 0;
  int64_t tokens = 0;
  const size_t batch = static_cast<size_t>(config.optim.micro_batch) * 2;
  for (int e = 0; e < config.sft_epochs; ++e) {
    std::shuffle(seqs->begin(), seqs->end(), rng);
    for (size_t at = 0; at < seqs->size(); at += batch) {
      std::vector<TrainSequence> b(
          seqs->begin() + at,
          seqs->begin() + std::min(seqs->size(), at + batch));
      SKILLDB_ASSIGN_OR_RETURN(auto st, learner->Step(b));
      tokens += st.tokens;
      ++steps;
    }
  }
  learner->SetLearningRate(config.optim.lr);
  SKILLDB_ASSIGN_OR_RETURN(double after, learner->MeanNll(*seqs));
  (*line)["nll_before"] = before;
  (*line)["nll_after"] = after;
  (*line)["optimizer_steps"] = steps;
  (*line)["completion_tokens"] = tokens;
  (*line)["seconds"] = util::MsSince(start) / 1000.0;
  return Status::Ok();
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
