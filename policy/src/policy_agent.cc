// The Policy Agent's turn loop (see policy_agent.h).
#include "skilldb/policy/policy_agent.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "skilldb/policy/rollout_store.h"
#include "skilldb/util/clock.h"
#include "skilldb/util/parallel.h"

namespace skilldb::policy {
namespace {

using Clock = std::chrono::steady_clock;

// Words added to later turns' queries: what the last verdict calls for.
const char* VerdictTerms(SampleVerdict v) {
  switch (v) {
    case SampleVerdict::kCompileError:
    case SampleVerdict::kLoadError:
      return "compile error pitfalls";
    case SampleVerdict::kWrong:
      return "correctness precision accumulation pitfalls";
    case SampleVerdict::kRuntimeError:
      return "out of bounds indexing pitfalls";
    case SampleVerdict::kNotFaster:
      return "faster memory bandwidth occupancy";
    default:
      return "";
  }
}

int BestIndex(const std::vector<SampleRecord>& samples) {
  int best = -1;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (best < 0 || samples[i].reward > samples[best].reward)
      best = static_cast<int>(i);
  }
  return best;
}

llm::Chat ToChat(const std::vector<ChatMessage>& messages) {
  llm::Chat chat;
  for (const ChatMessage& m : messages) chat.push_back({m.role, m.content});
  return chat;
}

}  // namespace

llm::SamplingOptions PolicyOptions::DefaultSampling() {
  llm::SamplingOptions s;
  s.max_tokens = 4096;
  s.temperature = 0.8;
  return s;
}

Status ValidatePolicyOptions(const PolicyOptions& o) {
  if (o.max_turns < 1 || o.max_turns > 64)
    return Status::InvalidArgument("max_turns must be in [1, 64]");
  if (o.samples < 1 || o.samples > 1024)
    return Status::InvalidArgument("samples must be in [1, 1024]");
  if (o.verify_rounds < 1)
    return Status::InvalidArgument("verify_rounds must be at least 1");
  if (o.timed_calls_per_round < 1)
    return Status::InvalidArgument("timed_calls_per_round must be at least 1");
  if (o.verify_parallelism < 0)
    return Status::InvalidArgument("verify_parallelism must be >= 0");
  if (o.sampling.max_tokens < 1)
    return Status::InvalidArgument("sampling.max_tokens must be at least 1");
  return Status::Ok();
}

std::vector<UsageRecord> TurnUsage(const TurnRecord& turn) {
  std::map<std::pair<std::string, UsageEvent>, uint64_t> counts;
  const SelectionRecord& sel = turn.selection;
  if (!sel.reused) {
    for (const SkillRef& r : sel.retrieved)
      ++counts[{r.id, UsageEvent::kRetrieved}];
    for (const SkillRef& r : sel.selected)
      ++counts[{r.id, UsageEvent::kSelected}];
  }
  for (const SampleRecord& s : turn.samples) {
    if (s.verdict == SampleVerdict::kNoCode ||
        s.verdict == SampleVerdict::kTooLarge ||
        s.verdict == SampleVerdict::kVerifierError) {
      continue;  // nothing was applied, or nothing is known of it
    }
    const UsageEvent outcome = s.verdict == SampleVerdict::kFaster
                                   ? UsageEvent::kSucceeded
                                   : UsageEvent::kFailed;
    for (const SkillRef& r : sel.selected) {
      ++counts[{r.id, UsageEvent::kApplied}];
      ++counts[{r.id, outcome}];
    }
  }
  std::vector<UsageRecord> out;
  out.reserve(counts.size());
  for (const auto& [key, n] : counts) out.push_back({key.first, key.second, n});
  return out;
}

// One Solve: the state of a trajectory between turns.
class PolicyAgent::Run {
 public:
  Run(const PolicyAgent& agent, const PolicyTask& task,
      const PolicyOptions& options)
      : agent_(agent), deps_(agent.deps_), task_(task), options_(options) {}

  Result<Trajectory> Go();

 private:
  Status Turn(int index, TurnRecord* rec);
  Status Select(int index, TurnRecord* rec);
  Status Generate(TurnRecord* rec, const std::vector<ChatMessage>& prompt);
  void Extract(TurnRecord* rec);
  void Verify(TurnRecord* rec);
  void VerifyOne(SampleRecord* s);
  Status RecordUsage(TurnRecord* rec);
  void Conclude(const TurnRecord& rec);

  const PolicyAgent& agent_;
  const PolicyAgentDeps& deps_;
  const PolicyTask& task_;
  const PolicyOptions& options_;
  Trajectory t_;
  Selection selection_;
  std::set<std::string> shown_;
  std::vector<PriorTurn> prior_;
  std::vector<SelectedSkill> new_skills_;
};

Result<Trajectory> PolicyAgent::Run::Go() {
  t_.id = NewTrajectoryId();
  t_.group = options_.group;
  t_.task = task_.task.name;
  t_.backend = std::string(verify::BackendName(task_.backend));
  t_.model = deps_.backbone->Model();
  t_.library_version =
      options_.library_version.value_or(
          deps_.library ? deps_.library->CurrentVersion() : 0);
  t_.max_turns = options_.max_turns;
  t_.samples_per_turn = options_.samples;
  t_.started_ms = util::NowUnixMs();
  if (deps_.store) SKILLDB_RETURN_IF_ERROR(deps_.store->BeginTrajectory(t_));
  for (int i = 0; i < options_.max_turns; ++i) {
    TurnRecord rec;
    rec.turn = i;
    const auto start = Clock::now();
    Status st = Turn(i, &rec);
    if (!st.ok()) {
      t_.status = "failed";
      t_.error = "turn " + std::to_string(i + 1) + ": " + st.ToString();
      break;
    }
    rec.times.total_ms = util::MsSince(start);
    t_.turns.push_back(rec);
    Conclude(t_.turns.back());
    // The turn is stored before its usage reaches the library: the
    // library never counts an application no stored trajectory records.
    if (deps_.store) {
      Status stored = deps_.store->AppendTurn(t_, t_.turns.back());
      if (!stored.ok()) {
        // The header says what the store holds: the turns before this one.
        Trajectory header = t_;
        header.turns.pop_back();
        if (header.best_turn >= static_cast<int>(header.turns.size())) {
          header.best_turn = header.best_sample = -1;
        }
        header.status = "failed";
        header.error = "turn " + std::to_string(i + 1) +
                       ": the rollout store refused it: " + stored.ToString();
        header.finished_ms = util::NowUnixMs();
        (void)deps_.store->FinishTrajectory(header);  // best effort
        return stored;
      }
    }
    const auto usage_start = Clock::now();
    Status used = RecordUsage(&t_.turns.back());
    t_.turns.back().times.usage_ms = util::MsSince(usage_start);
    if (!used.ok()) {
      t_.status = "failed";
      t_.error = "turn " + std::to_string(i + 1) + ": " + used.ToString();
      break;
    }
    if (agent_.observer_) agent_.observer_(t_, t_.turns.back());
    if (t_.solved && options_.stop_on_speedup) break;
  }
  t_.finished_ms = util::NowUnixMs();
  if (deps_.store) SKILLDB_RETURN_IF_ERROR(deps_.store->FinishTrajectory(t_));
  return std::move(t_);
}

// Best-so-far bookkeeping and what the next turn is shown.
void PolicyAgent::Run::Conclude(const TurnRecord& rec) {
  if (rec.best_sample < 0) return;
  const SampleRecord& best = rec.samples[rec.best_sample];
  const SampleRecord* so_far = BestSample(t_);
  if (so_far == nullptr || best.reward > so_far->reward) {
    t_.best_turn = rec.turn;
    t_.best_sample = rec.best_sample;
  }
  for (const SampleRecord& s : rec.samples) {
    if (s.verdict == SampleVerdict::kFaster) t_.solved = true;
  }
  prior_.push_back(PriorTurn{std::move(new_skills_), best.generation.completion,
                             best.feedback});
  new_skills_.clear();
}

Status PolicyAgent::Run::Turn(int index, TurnRecord* rec) {
  SKILLDB_RETURN_IF_ERROR(Select(index, rec));
  auto start = Clock::now();
  PromptInput input;
  input.task = &task_;
  input.prior = prior_;
  input.new_skills = new_skills_;
  if (task_.backend == verify::Backend::kCuda) {
    input.device_class = agent_.DeviceClass();
  }
  const std::vector<ChatMessage> prompt = deps_.prompts->Build(input);
  rec->times.prompt_ms = util::MsSince(start);
  SKILLDB_RETURN_IF_ERROR(Generate(rec, prompt));
  start = Clock::now();
  Extract(rec);
  rec->times.extraction_ms = util::MsSince(start);
  start = Clock::now();
  Verify(rec);
  rec->times.verify_wall_ms = util::MsSince(start);
  for (SampleRecord& s : rec->samples) {
    rec->times.compile_ms += s.times.compile_ms;
    rec->times.correctness_ms += s.times.correctness_ms;
    rec->times.timing_ms += s.times.timing_ms;
  }
  rec->best_sample = BestIndex(rec->samples);
  if (rec->best_sample >= 0)
    rec->reward = rec->samples[rec->best_sample].reward;
  return Status::Ok();
}

Status PolicyAgent::Run::Select(int index, TurnRecord* rec) {
  if (index > 0 && !options_.reselect_each_turn) {
    rec->selection = selection_.record;
    rec->selection.reused = true;
    rec->selection.generations.clear();
    return Status::Ok();
  }
  SelectionRequest request;
  request.query = RetrievalQuery(task_);
  request.as_of = options_.library_version;
  request.seed = options_.selection_seed;
  if (index > 0 && !t_.turns.empty() && t_.turns.back().best_sample >= 0) {
    const TurnRecord& last = t_.turns.back();
    const std::string terms =
        VerdictTerms(last.samples[last.best_sample].verdict);
    if (!terms.empty()) request.query += " " + terms;
  }
  const bool cuda = task_.backend == verify::Backend::kCuda;
  if (options_.filter_ops && !task_.task.family.empty())
    request.ops = {task_.task.family};
  if (options_.filter_arch && cuda) {
    if (std::string arch = agent_.DeviceClass(); !arch.empty())
      request.arch = {arch};
  }
  if (options_.filter_language && cuda) request.language = Language::kCuda;
  SKILLDB_ASSIGN_OR_RETURN(selection_, deps_.selector->Select(request));
  rec->selection = selection_.record;
  rec->times.retrieval_ms = selection_.retrieval_ms;
  rec->times.rerank_ms = selection_.rerank_ms;
  for (const SelectedSkill& s : selection_.skills) {
    if (shown_.insert(s.hit.id).second) new_skills_.push_back(s);
  }
  return Status::Ok();
}

Status PolicyAgent::Run::Generate(TurnRecord* rec,
                                  const std::vector<ChatMessage>& prompt) {
  llm::SamplingOptions sampling = options_.sampling;
  sampling.n = options_.samples;
  const auto start = Clock::now();
  SKILLDB_ASSIGN_OR_RETURN(
      std::vector<llm::Generation> gens,
      deps_.backbone->Generate({ToChat(prompt)}, sampling));
  rec->times.generation_ms = util::MsSince(start);
  if (gens.size() != 1 || gens[0].samples.empty()) {
    return Status::Internal("the backbone returned no samples for the prompt");
  }
  if (t_.model.empty()) t_.model = deps_.backbone->Model();
  llm::Generation& g = gens[0];
  for (size_t i = 0; i < g.samples.size(); ++i) {
    llm::Sample& sample = g.samples[i];
    SampleRecord s;
    s.index = static_cast<int>(i);
    s.generation.model = t_.model;
    s.generation.prompt = prompt;
    s.generation.prompt_text = g.prompt_text;
    s.generation.prompt_token_ids = g.prompt_token_ids;
    s.generation.completion = std::move(sample.text);
    s.generation.completion_token_ids = std::move(sample.token_ids);
    s.generation.completion_logprobs = std::move(sample.token_logprobs);
    s.finish_reason = sample.finish_reason;
    rec->samples.push_back(std::move(s));
  }
  return Status::Ok();
}

void PolicyAgent::Run::Extract(TurnRecord* rec) {
  const int64_t limit = deps_.verifier->MaxSourceBytes();
  for (SampleRecord& s : rec->samples) {
    auto e = deps_.extractor->Extract(task_, s.generation.completion);
    if (!e.ok()) {
      s.extraction = "extractor failed: " + e.status().ToString();
      s.verdict = SampleVerdict::kNoCode;
      continue;
    }
    s.extraction = e->note;
    s.language = e->language;
    if (!e->found) {
      s.verdict = SampleVerdict::kNoCode;
      continue;
    }
    s.source = std::move(e->source);
    // Marks the sample for verification; Verify() sets the real verdict.
    s.verdict = static_cast<int64_t>(s.source.size()) > limit
                    ? SampleVerdict::kTooLarge
                    : SampleVerdict::kVerifierError;
  }
}

void PolicyAgent::Run::Verify(TurnRecord* rec) {
  std::vector<SampleRecord*> todo;
  for (SampleRecord& s : rec->samples) {
    if (s.verdict == SampleVerdict::kVerifierError) todo.push_back(&s);
  }
  const size_t width = options_.verify_parallelism > 0
                           ? static_cast<size_t>(options_.verify_parallelism)
                           : todo.size();
  util::ParallelFor(todo.size(), width, [&](size_t i) { VerifyOne(todo[i]); });
  for (SampleRecord& s : rec->samples) {
    RewardInput in{s.verdict, s.report ? &*s.report : nullptr, &s.findings};
    s.reward = deps_.reward ? deps_.reward(in) : DefaultReward(in);
    if (s.feedback.empty()) s.feedback = FormatFeedback(s, options_.feedback);
  }
}

void PolicyAgent::Run::VerifyOne(SampleRecord* s) {
  VerificationRequest req;
  req.task = task_.task.name;
  req.candidate.name = s->language == "cuda" ? "candidate.cu" : "candidate.cc";
  req.candidate.language = s->language;
  req.candidate.source = s->source;
  req.rounds = options_.verify_rounds;
  req.timed_calls_per_round = options_.timed_calls_per_round;
  req.seed = options_.verify_seed;
  const auto start = Clock::now();
  auto r = deps_.verifier->Verify(req);
  s->times.verify_ms = util::MsSince(start);
  if (!r.ok()) {
    s->verdict = SampleVerdict::kVerifierError;
    s->feedback = "The verifier could not judge this candidate: " +
                  r.status().ToString() + "\n";
    return;
  }
  s->findings = r->findings;
  s->times.compile_ms = r->times.compile_ms;
  s->times.correctness_ms = r->times.correctness_ms;
  s->times.timing_ms = r->times.timing_ms;
  s->times.compile_cache_hit = r->times.compile_cache_hit;
  s->verdict = VerdictFor(*r, s->findings);
  s->report = std::move(*r);
}

Status PolicyAgent::Run::RecordUsage(TurnRecord* rec) {
  if (deps_.library == nullptr || !options_.record_usage) return Status::Ok();
  const std::vector<UsageRecord> usage = TurnUsage(*rec);
  if (usage.empty()) return Status::Ok();
  Status st = deps_.library->RecordUsage(usage);
  if (!st.IsNotFound()) return st;
  // A skill left the head since it was retrieved (pruned, superseded):
  // record the others one by one.
  for (const UsageRecord& u : usage) {
    Status one = deps_.library->RecordUsage(u.id, u.event, u.count);
    if (!one.ok() && !one.IsNotFound()) return one;
  }
  return Status::Ok();
}

PolicyAgent::PolicyAgent(PolicyAgentDeps deps) : deps_(std::move(deps)) {
  if (deps_.extractor == nullptr) {
    own_extractor_ = std::make_unique<CodeExtractor>();
    deps_.extractor = own_extractor_.get();
  }
  if (deps_.prompts == nullptr) {
    own_prompts_ = std::make_unique<KernelPromptBuilder>();
    deps_.prompts = own_prompts_.get();
  }
}

std::string PolicyAgent::DeviceClass() const {
  std::call_once(device_once_, [this] {
    auto c = deps_.verifier->DeviceClass();
    if (c.ok()) device_class_ = *c;
  });
  return device_class_;
}

Result<std::unique_ptr<PolicyAgent>> PolicyAgent::Make(PolicyAgentDeps deps) {
  if (deps.backbone == nullptr || deps.selector == nullptr ||
      deps.verifier == nullptr) {
    return Status::InvalidArgument(
        "a PolicyAgent needs a backbone, a selector and a verifier");
  }
  return std::unique_ptr<PolicyAgent>(new PolicyAgent(std::move(deps)));
}

Result<Trajectory> PolicyAgent::Solve(const PolicyTask& task,
                                      const PolicyOptions& options) const {
  SKILLDB_RETURN_IF_ERROR(ValidatePolicyOptions(options));
  Run run(*this, task, options);
  return run.Go();
}

}  // namespace skilldb::policy
