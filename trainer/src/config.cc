#include "skilldb/trainer/config.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>

#include "skilldb/util/json.h"

namespace skilldb::trainer {

using nlohmann::json;

std::string_view LossAggregationName(LossAggregation a) {
  return a == LossAggregation::kTokenMean ? "token_mean" : "sequence_mean";
}

Result<LossAggregation> ParseLossAggregation(std::string_view name) {
  if (name == "token_mean") return LossAggregation::kTokenMean;
  if (name == "sequence_mean") return LossAggregation::kSequenceMean;
  return Status::InvalidArgument("unknown loss aggregation '" +
                                 std::string(name) +
                                 "' (expected token_mean or sequence_mean)");
}

namespace {

// A field reader: (json value, key path) -> Status.
using Reader = std::function<Status(const json&, const std::string&)>;

// The range of every integer key: the one table both the JSON reader and
// ValidateTrainConfig (configs built in code, e.g. `train demo`'s flags)
// check against. The bounds say what a run can mean, and keep the sizes
// they drive (threads, worker processes, tensors) from exhausting memory
// long before the run could start.
struct IntRange {
  int64_t lo, hi;
};
constexpr IntRange kSteps{0, 1000000};
constexpr IntRange kTasksPerStep{1, 1024};
constexpr IntRange kGroups{1, 4096};
constexpr IntRange kMaxTurns{1, 64};
constexpr IntRange kMaxNewTokens{1, 1 << 20};
constexpr IntRange kVerifyRounds{1, 100};
constexpr IntRange kTimedCalls{1, 10000};
constexpr IntRange kWarmupCalls{0, 1000};
// As the verifier accepts (verify::kMaxHostWorkers).
constexpr IntRange kHostWorkers{1, 256};
constexpr IntRange kSftDemoRecords{0, 1000000};
constexpr IntRange kSftEpochs{0, 1000};
constexpr IntRange kCheckpointEvery{0, 1000000};
constexpr IntRange kWarmupSteps{0, 1000000};
constexpr IntRange kMicroBatch{1, 4096};
constexpr IntRange kUtilityCap{0, 1000000};
constexpr IntRange kShingleChars{1, 64};
constexpr IntRange kNumHashes{1, 1024};
constexpr IntRange kBands{1, 1024};
constexpr IntRange kMaxPer{0, 1000000000};
// The loop object's counts and byte cuts (ValidateLoopConfig says which
// must be positive).
constexpr IntRange kLoopPositive{1, 1 << 20};
constexpr IntRange kLoopCount{0, 1 << 20};

std::string KeyName(const std::string& key) { return "config: '" + key + "'"; }

Status TypeError(const std::string& key, const char* want) {
  return Status::InvalidArgument(KeyName(key) + " must be " + want);
}

template <typename T>
Reader Int(T* out, IntRange range) {
  return [out, range](const json& v, const std::string& k) {
    int64_t x = 0;
    SKILLDB_RETURN_IF_ERROR(
        util::ReadInt64(v, KeyName(k), range.lo, range.hi, &x));
    *out = static_cast<T>(x);
    return Status::Ok();
  };
}
Reader U64(uint64_t* out) {
  return [out](const json& v, const std::string& k) {
    return util::ReadUint64(v, KeyName(k), 0,
                            std::numeric_limits<uint64_t>::max(), out);
  };
}
// A finite number in [lo, hi] (nlohmann reads 1e400 as infinity).
Reader Dbl(double* out, double lo = -std::numeric_limits<double>::max(),
           double hi = std::numeric_limits<double>::max()) {
  return [out, lo, hi](const json& v, const std::string& k) {
    return util::ReadDouble(v, KeyName(k), lo, hi, out);
  };
}
Reader Bool(bool* out) {
  return [out](const json& v, const std::string& k) {
    if (!v.is_boolean()) return TypeError(k, "true or false");
    *out = v.get<bool>();
    return Status::Ok();
  };
}
Reader Str(std::string* out) {
  return [out](const json& v, const std::string& k) {
    if (!v.is_string()) return TypeError(k, "a string");
    *out = v.get<std::string>();
    return Status::Ok();
  };
}
template <typename E>
Reader Enum(E* out, Result<E> (*parse)(std::string_view)) {
  return [out, parse](const json& v, const std::string& k) -> Status {
    if (!v.is_string()) return TypeError(k, "a string");
    auto r = parse(v.get<std::string>());
    if (!r.ok()) {
      return Status::InvalidArgument(KeyName(k) + ": " + r.status().message());
    }
    *out = *r;
    return Status::Ok();
  };
}

Status ReadObject(const json& j, const std::string& prefix,
                  const std::map<std::string, Reader>& fields) {
  if (!j.is_object()) {
    return Status::InvalidArgument("config: '" +
                                   (prefix.empty() ? "(top)" : prefix) +
                                   "' must be an object");
  }
  for (auto& [key, value] : j.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    auto it = fields.find(key);
    if (it == fields.end()) {
      return Status::InvalidArgument("config: unknown key '" + path + "'");
    }
    SKILLDB_RETURN_IF_ERROR(it->second(value, path));
  }
  return Status::Ok();
}

Reader Nested(std::map<std::string, Reader> fields) {
  return [fields = std::move(fields)](const json& v, const std::string& k) {
    return ReadObject(v, k, fields);
  };
}

Reader LoopFields(LoopConfig& l) {
  return Nested({{"retrieve_k", Int(&l.retrieve_k, kLoopPositive)},
                 {"select_k", Int(&l.select_k, kLoopPositive)},
                 {"description_bytes", Int(&l.description_bytes, kLoopPositive)},
                 {"skills_shown", Int(&l.skills_shown, kLoopPositive)},
                 {"skill_title_bytes", Int(&l.skill_title_bytes, kLoopPositive)},
                 {"answer_bytes", Int(&l.answer_bytes, kLoopPositive)},
                 {"feedback_bytes", Int(&l.feedback_bytes, kLoopPositive)},
                 {"rerank_title_bytes", Int(&l.rerank_title_bytes, kLoopPositive)},
                 {"rerank_summary_bytes", Int(&l.rerank_summary_bytes, kLoopPositive)},
                 {"rerank_query_bytes", Int(&l.rerank_query_bytes, kLoopPositive)},
                 {"rerank_max_tokens", Int(&l.rerank_max_tokens, kLoopPositive)},
                 {"summary_attempts", Int(&l.summary_attempts, kLoopPositive)},
                 {"summary_max_tokens", Int(&l.summary_max_tokens, kLoopPositive)},
                 {"fixture_context_tokens", Int(&l.fixture_context_tokens, kLoopPositive)},
                 {"rollout_step_stride", U64(&l.rollout_step_stride)},
                 {"rollout_task_stride", U64(&l.rollout_task_stride)},
                 {"selection_salt", U64(&l.selection_salt)},
                 {"summary_salt", U64(&l.summary_salt)},
                 {"rank_stride", U64(&l.rank_stride)},
                 {"skill_code_bytes", Int(&l.skill_code_bytes, kLoopCount)},
                 {"skill_demo_records", Int(&l.skill_demo_records, kLoopCount)},
                 {"summary_demo_records", Int(&l.summary_demo_records, kLoopCount)},
                 {"family_summary_prompt", Bool(&l.family_summary_prompt)},
                 {"summaries_per_step", Int(&l.summaries_per_step, kLoopCount)},
                 {"summary_temperature", Dbl(&l.summary_temperature)}});
}

json LoopJson(const LoopConfig& l) {
  return {{"retrieve_k", l.retrieve_k},
          {"select_k", l.select_k},
          {"description_bytes", l.description_bytes},
          {"skills_shown", l.skills_shown},
          {"skill_title_bytes", l.skill_title_bytes},
          {"answer_bytes", l.answer_bytes},
          {"feedback_bytes", l.feedback_bytes},
          {"rerank_title_bytes", l.rerank_title_bytes},
          {"rerank_summary_bytes", l.rerank_summary_bytes},
          {"rerank_query_bytes", l.rerank_query_bytes},
          {"rerank_max_tokens", l.rerank_max_tokens},
          {"summary_attempts", l.summary_attempts},
          {"summary_max_tokens", l.summary_max_tokens},
          {"fixture_context_tokens", l.fixture_context_tokens},
          {"rollout_step_stride", l.rollout_step_stride},
          {"rollout_task_stride", l.rollout_task_stride},
          {"selection_salt", l.selection_salt},
          {"summary_salt", l.summary_salt},
          {"rank_stride", l.rank_stride},
          {"skill_code_bytes", l.skill_code_bytes},
          {"skill_demo_records", l.skill_demo_records},
          {"summary_demo_records", l.summary_demo_records},
          {"family_summary_prompt", l.family_summary_prompt},
          {"summaries_per_step", l.summaries_per_step},
          {"summary_temperature", l.summary_temperature}};
}

// Every count of the loop is at least 1 (a cut of 0 bytes would show
// nothing; retrieval needs select_k <= retrieve_k).
Status ValidateLoopConfig(const LoopConfig& l) {
  const std::pair<const char*, int> positive[] = {
      {"retrieve_k", l.retrieve_k},
      {"select_k", l.select_k},
      {"description_bytes", l.description_bytes},
      {"skills_shown", l.skills_shown},
      {"skill_title_bytes", l.skill_title_bytes},
      {"answer_bytes", l.answer_bytes},
      {"feedback_bytes", l.feedback_bytes},
      {"rerank_title_bytes", l.rerank_title_bytes},
      {"rerank_summary_bytes", l.rerank_summary_bytes},
      {"rerank_query_bytes", l.rerank_query_bytes},
      {"rerank_max_tokens", l.rerank_max_tokens},
      {"summary_attempts", l.summary_attempts},
      {"summary_max_tokens", l.summary_max_tokens},
      {"fixture_context_tokens", l.fixture_context_tokens}};
  for (const auto& [key, value] : positive) {
    if (value < 1) {
      return Status::InvalidArgument(std::string("config: 'loop.") + key +
                                     "' must be >= 1");
    }
  }
  const std::pair<const char*, int> counts[] = {
      {"skill_code_bytes", l.skill_code_bytes},
      {"skill_demo_records", l.skill_demo_records},
      {"summary_demo_records", l.summary_demo_records},
      {"summaries_per_step", l.summaries_per_step}};
  for (const auto& [key, value] : counts) {
    if (value < 0) {
      return Status::InvalidArgument(std::string("config: 'loop.") + key +
                                     "' must be >= 0");
    }
  }
  if (l.select_k > l.retrieve_k) {
    return Status::InvalidArgument(
        "config: 'loop.select_k' must be <= 'loop.retrieve_k'");
  }
  return Status::Ok();
}

std::map<std::string, Reader> Fields(TrainConfig& c) {
  auto& a = c.advantages;
  auto& r = c.rewards;
  auto& o = c.optim;
  auto& s = c.sft_filter;
  return {
      {"model_dir", Str(&c.model_dir)},
      {"backend", Str(&c.backend)},
      {"device", Str(&c.device)},
      {"family", Str(&c.family)},
      {"out_dir", Str(&c.out_dir)},
      {"seed", U64(&c.seed)},
      {"steps", Int(&c.steps, kSteps)},
      {"tasks_per_step", Int(&c.tasks_per_step, kTasksPerStep)},
      {"groups", Int(&c.groups, kGroups)},
      {"max_turns", Int(&c.max_turns, kMaxTurns)},
      {"max_new_tokens", Int(&c.max_new_tokens, kMaxNewTokens)},
      {"temperature", Dbl(&c.temperature, 0.0)},
      {"selection", Bool(&c.selection)},
      {"summary", Bool(&c.summary)},
      {"skills", Bool(&c.skills)},
      {"verify_rounds", Int(&c.verify_rounds, kVerifyRounds)},
      {"timed_calls", Int(&c.timed_calls, kTimedCalls)},
      {"warmup_calls", Int(&c.warmup_calls, kWarmupCalls)},
      {"host_workers", Int(&c.host_workers, kHostWorkers)},
      {"sft_data", Str(&c.sft_data)},
      {"sft_demo_records", Int(&c.sft_demo_records, kSftDemoRecords)},
      {"sft_epochs", Int(&c.sft_epochs, kSftEpochs)},
      {"sft_lr", Dbl(&c.sft_lr, 0.0)},
      {"checkpoint_every", Int(&c.checkpoint_every, kCheckpointEvery)},
      {"resume", Str(&c.resume)},
      {"advantages",
       Nested({{"gamma", Dbl(&a.gamma)},
               {"baseline", Enum(&a.baseline, &ParseBaseline)},
               {"normalization", Enum(&a.normalization, &ParseNormalization)},
               {"std_epsilon", Dbl(&a.std_epsilon)}})},
      {"rewards",
       Nested({{"correct_weight", Dbl(&r.correct_weight)},
               {"speedup_weight", Dbl(&r.speedup_weight)},
               {"speedup_cap", Dbl(&r.speedup_cap)},
               {"hack_reward", Dbl(&r.hack_reward)},
               {"selection_relative", Bool(&r.selection_relative)},
               {"selection_weight", Dbl(&r.selection_weight)},
               {"summary_inserted", Dbl(&r.summary_inserted)},
               {"summary_rejected", Dbl(&r.summary_rejected)},
               {"summary_utility", Dbl(&r.summary_utility)},
               {"summary_utility_cap", Int(&r.summary_utility_cap, kUtilityCap)}})},
      {"optim",
       Nested({{"lr", Dbl(&o.lr, 0.0)},
               {"warmup_steps", Int(&o.warmup_steps, kWarmupSteps)},
               {"weight_decay", Dbl(&o.weight_decay)},
               {"beta1", Dbl(&o.beta1)},
               {"beta2", Dbl(&o.beta2)},
               {"eps", Dbl(&o.eps)},
               {"max_grad_norm", Dbl(&o.max_grad_norm)},
               {"micro_batch", Int(&o.micro_batch, kMicroBatch)},
               {"aggregation", Enum(&o.aggregation, &ParseLossAggregation)},
               {"kl_coef", Dbl(&o.kl_coef, 0.0)},
               {"bf16_autocast", Bool(&o.bf16_autocast)}})},
      {"loop", LoopFields(c.loop)},
      {"sft_filter", Nested({{"max_similarity", Dbl(&s.max_similarity, 0.0)},
                             {"shingle_chars", Int(&s.shingle_chars, kShingleChars)},
                             {"num_hashes", Int(&s.num_hashes, kNumHashes)},
                             {"bands", Int(&s.bands, kBands)},
                             {"max_per_task", Int(&s.max_per_task, kMaxPer)},
                             {"max_per_agent", Int(&s.max_per_agent, kMaxPer)},
                             {"seed", U64(&s.seed)},
                             {"compare_prompts", Bool(&s.compare_prompts)}})},
  };
}

// InvalidArgument "config: 'key' must be between lo and hi" unless `value`
// is in `range`.
Status InRange(const char* key, int64_t value, IntRange range) {
  if (value >= range.lo && value <= range.hi) return Status::Ok();
  return Status::InvalidArgument(KeyName(key) + " must be between " +
                                 std::to_string(range.lo) + " and " +
                                 std::to_string(range.hi) + ", got " +
                                 std::to_string(value));
}

Status CheckRanges(const TrainConfig& c) {
  const std::pair<const char*, std::pair<int64_t, IntRange>> checks[] = {
      {"steps", {c.steps, kSteps}},
      {"tasks_per_step", {c.tasks_per_step, kTasksPerStep}},
      {"groups", {c.groups, kGroups}},
      {"max_turns", {c.max_turns, kMaxTurns}},
      {"max_new_tokens", {c.max_new_tokens, kMaxNewTokens}},
      {"verify_rounds", {c.verify_rounds, kVerifyRounds}},
      {"timed_calls", {c.timed_calls, kTimedCalls}},
      {"warmup_calls", {c.warmup_calls, kWarmupCalls}},
      {"host_workers", {c.host_workers, kHostWorkers}},
      {"sft_demo_records", {c.sft_demo_records, kSftDemoRecords}},
      {"sft_epochs", {c.sft_epochs, kSftEpochs}},
      {"checkpoint_every", {c.checkpoint_every, kCheckpointEvery}},
      {"optim.warmup_steps", {c.optim.warmup_steps, kWarmupSteps}},
      {"optim.micro_batch", {c.optim.micro_batch, kMicroBatch}},
      {"rewards.summary_utility_cap",
       {c.rewards.summary_utility_cap, kUtilityCap}},
      {"sft_filter.shingle_chars", {c.sft_filter.shingle_chars, kShingleChars}},
      {"sft_filter.num_hashes", {c.sft_filter.num_hashes, kNumHashes}},
      {"sft_filter.bands", {c.sft_filter.bands, kBands}},
      {"sft_filter.max_per_task",
       {static_cast<int64_t>(std::min<size_t>(c.sft_filter.max_per_task,
                                               INT64_MAX)),
        kMaxPer}},
      {"sft_filter.max_per_agent",
       {static_cast<int64_t>(std::min<size_t>(c.sft_filter.max_per_agent,
                                               INT64_MAX)),
        kMaxPer}},
  };
  for (const auto& [key, check] : checks) {
    SKILLDB_RETURN_IF_ERROR(InRange(key, check.first, check.second));
  }
  return Status::Ok();
}

}  // namespace

Status ValidateTrainConfig(const TrainConfig& c) {
  auto bad = [](const std::string& m) {
    return Status::InvalidArgument("config: " + m);
  };
  if (c.backend != "host" && c.backend != "cuda") {
    return bad("'backend' must be host or cuda");
  }
  if (c.device != "cpu" && c.device != "cuda") {
    return bad("'device' must be cpu or cuda");
  }
  SKILLDB_RETURN_IF_ERROR(CheckRanges(c));
  if (!(c.temperature >= 0) || !std::isfinite(c.temperature)) {
    return bad("'temperature' must be a finite number >= 0");
  }
  if (!(c.sft_lr >= 0) || !std::isfinite(c.sft_lr)) {
    return bad("'sft_lr' must be a finite number >= 0");
  }
  const auto& o = c.optim;
  if (!(o.lr >= 0) || !std::isfinite(o.lr)) {
    return bad("'optim.lr' must be a finite number >= 0");
  }
  if (!(o.kl_coef >= 0) || !std::isfinite(o.kl_coef)) {
    return bad("'optim.kl_coef' must be a finite number >= 0");
  }
  if (!(o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 && o.beta2 < 1)) {
    return bad("'optim.beta1' and 'optim.beta2' must be in [0, 1)");
  }
  SKILLDB_RETURN_IF_ERROR(ValidateAdvantageOptions(c.advantages));
  SKILLDB_RETURN_IF_ERROR(ValidateRewardConfig(c.rewards));
  SKILLDB_RETURN_IF_ERROR(ValidateSftFilterOptions(c.sft_filter));
  SKILLDB_RETURN_IF_ERROR(ValidateLoopConfig(c.loop));
  return Status::Ok();
}

Result<TrainConfig> TrainConfigFromJson(std::string_view text) {
  // Repeated keys are refused (a second "steps" would silently win).
  SKILLDB_ASSIGN_OR_RETURN(
      json j, util::ParseUntrustedJson(text, "config",
                                       {.max_bytes = size_t{1} << 20}));
  TrainConfig c;
  SKILLDB_RETURN_IF_ERROR(ReadObject(j, "", Fields(c)));
  SKILLDB_RETURN_IF_ERROR(ValidateTrainConfig(c));
  return c;
}

Result<ResumePoint> ResumePointFromJson(std::string_view extra_json,
                                        const std::string& where) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(where + ": " + why +
                                   " (not a checkpoint of this trainer?)");
  };
  auto parsed = util::ParseUntrustedJson(extra_json, where + " extra");
  if (!parsed.ok()) return bad(parsed.status().message());
  const json& extra = *parsed;
  if (!extra.is_object()) return bad("'extra' is not an object");
  util::FieldReader in(extra, where);
  SKILLDB_RETURN_IF_ERROR(in.Require("loop_step"));
  SKILLDB_RETURN_IF_ERROR(in.Require("rng"));
  ResumePoint point;
  SKILLDB_RETURN_IF_ERROR(
      in.Int("loop_step", &point.loop_step, kSteps.lo, kSteps.hi));
  std::string rng;
  SKILLDB_RETURN_IF_ERROR(in.String("rng", &rng));
  std::istringstream state(rng);
  state >> point.rng;
  if (state.fail() || !(state >> std::ws).eof()) {
    return bad("'rng' is not a whole generator state");
  }
  if (const json* pending = in.Find("pending")) {
    point.pending_json = util::DumpLossy(*pending);
  }
  return point;
}

Result<TrainCommandLine> SplitTrainCommand(
    const std::vector<std::string>& args) {
  // Options that take a value: their value is never the command word.
  static const std::set<std::string> kWithValue = {
      "--config", "--out",   "--resume", "--steps",         "--backend",
      "--device", "--seed",  "--groups", "--turns",         "--baseline",
      "--normalization",     "--sft-epochs"};
  TrainCommandLine out;
  bool has_config = false;
  bool help = false;
  std::string first_word;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (kWithValue.count(a) && i + 1 < args.size()) {
      has_config = has_config || a == "--config";
      out.rest.push_back(a);
      out.rest.push_back(args[++i]);
      continue;
    }
    if (a == "--help" || a == "-h") help = true;
    const bool word = !a.empty() && a[0] != '-';
    if (word && out.command.empty() && (a == "demo" || a == "report")) {
      out.command = a;
      continue;
    }
    if (word && first_word.empty()) first_word = a;
    out.rest.push_back(a);
  }
  if (!out.command.empty()) return out;
  if (help) {
    out.command = "help";
  } else if (has_config) {
    out.command = "config";
  } else if (!first_word.empty()) {
    return Status::InvalidArgument("unknown command '" + first_word +
                                   "' (expected demo, report or --config)");
  } else {
    return Status::InvalidArgument(
        "a command is required (demo, report RUN_DIR or --config FILE)");
  }
  return out;
}

std::string TrainConfigToJson(const TrainConfig& c) {
  const auto& a = c.advantages;
  const auto& r = c.rewards;
  const auto& o = c.optim;
  const auto& s = c.sft_filter;
  json j = {
      {"model_dir", c.model_dir},
      {"backend", c.backend},
      {"device", c.device},
      {"family", c.family},
      {"out_dir", c.out_dir},
      {"seed", c.seed},
      {"steps", c.steps},
      {"tasks_per_step", c.tasks_per_step},
      {"groups", c.groups},
      {"max_turns", c.max_turns},
      {"max_new_tokens", c.max_new_tokens},
      {"temperature", c.temperature},
      {"selection", c.selection},
      {"summary", c.summary},
      {"skills", c.skills},
      {"verify_rounds", c.verify_rounds},
      {"timed_calls", c.timed_calls},
      {"warmup_calls", c.warmup_calls},
      {"host_workers", c.host_workers},
      {"sft_data", c.sft_data},
      {"sft_demo_records", c.sft_demo_records},
      {"sft_epochs", c.sft_epochs},
      {"sft_lr", c.sft_lr},
      {"checkpoint_every", c.checkpoint_every},
      {"resume", c.resume},
      {"advantages",
       {{"gamma", a.gamma},
        {"baseline", BaselineName(a.baseline)},
        {"normalization", NormalizationName(a.normalization)},
        {"std_epsilon", a.std_epsilon}}},
      {"rewards",
       {{"correct_weight", r.correct_weight},
        {"speedup_weight", r.speedup_weight},
        {"speedup_cap", r.speedup_cap},
        {"hack_reward", r.hack_reward},
        {"selection_relative", r.selection_relative},
        {"selection_weight", r.selection_weight},
        {"summary_inserted", r.summary_inserted},
        {"summary_rejected", r.summary_rejected},
        {"summary_utility", r.summary_utility},
        {"summary_utility_cap", r.summary_utility_cap}}},
      {"optim",
       {{"lr", o.lr},
        {"warmup_steps", o.warmup_steps},
        {"weight_decay", o.weight_decay},
        {"beta1", o.beta1},
        {"beta2", o.beta2},
        {"eps", o.eps},
        {"max_grad_norm", o.max_grad_norm},
        {"micro_batch", o.micro_batch},
        {"aggregation", LossAggregationName(o.aggregation)},
        {"kl_coef", o.kl_coef},
        {"bf16_autocast", o.bf16_autocast}}},
      {"loop", LoopJson(c.loop)},
      {"sft_filter",
       {{"max_similarity", s.max_similarity},
        {"shingle_chars", s.shingle_chars},
        {"num_hashes", s.num_hashes},
        {"bands", s.bands},
        {"max_per_task", s.max_per_task},
        {"max_per_agent", s.max_per_agent},
        {"seed", s.seed},
        {"compare_prompts", s.compare_prompts}}},
  };
  return util::DumpLossy(j);
}

}  // namespace skilldb::trainer
