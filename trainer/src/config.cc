#include "skilldb/trainer/config.h"

#include <functional>
#include <map>
#include <nlohmann/json.hpp>

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

Status TypeError(const std::string& key, const char* want) {
  return Status::InvalidArgument("config: '" + key + "' must be " + want);
}

Reader Int(int* out) {
  return [out](const json& v, const std::string& k) {
    if (!v.is_number_integer()) return TypeError(k, "an integer");
    *out = v.get<int>();
    return Status::Ok();
  };
}
Reader U64(uint64_t* out) {
  return [out](const json& v, const std::string& k) {
    if (!v.is_number_unsigned() &&
        !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
      return TypeError(k, "a non-negative integer");
    }
    *out = v.get<uint64_t>();
    return Status::Ok();
  };
}
Reader Size(size_t* out) {
  return [out](const json& v, const std::string& k) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0) {
      return TypeError(k, "a non-negative integer");
    }
    *out = v.get<size_t>();
    return Status::Ok();
  };
}
Reader Dbl(double* out) {
  return [out](const json& v, const std::string& k) {
    if (!v.is_number()) return TypeError(k, "a number");
    *out = v.get<double>();
    return Status::Ok();
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
      return Status::InvalidArgument("config: '" + k +
                                     "': " + r.status().message());
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
  return Nested({{"retrieve_k", Int(&l.retrieve_k)},
                 {"select_k", Int(&l.select_k)},
                 {"description_bytes", Int(&l.description_bytes)},
                 {"skills_shown", Int(&l.skills_shown)},
                 {"skill_title_bytes", Int(&l.skill_title_bytes)},
                 {"answer_bytes", Int(&l.answer_bytes)},
                 {"feedback_bytes", Int(&l.feedback_bytes)},
                 {"rerank_title_bytes", Int(&l.rerank_title_bytes)},
                 {"rerank_summary_bytes", Int(&l.rerank_summary_bytes)},
                 {"rerank_query_bytes", Int(&l.rerank_query_bytes)},
                 {"rerank_max_tokens", Int(&l.rerank_max_tokens)},
                 {"summary_attempts", Int(&l.summary_attempts)},
                 {"summary_max_tokens", Int(&l.summary_max_tokens)},
                 {"fixture_context_tokens", Int(&l.fixture_context_tokens)},
                 {"rollout_step_stride", U64(&l.rollout_step_stride)},
                 {"rollout_task_stride", U64(&l.rollout_task_stride)},
                 {"selection_salt", U64(&l.selection_salt)},
                 {"summary_salt", U64(&l.summary_salt)},
                 {"rank_stride", U64(&l.rank_stride)},
                 {"skill_code_bytes", Int(&l.skill_code_bytes)},
                 {"skill_demo_records", Int(&l.skill_demo_records)},
                 {"summary_demo_records", Int(&l.summary_demo_records)},
                 {"family_summary_prompt", Bool(&l.family_summary_prompt)},
                 {"summaries_per_step", Int(&l.summaries_per_step)},
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
      {"steps", Int(&c.steps)},
      {"tasks_per_step", Int(&c.tasks_per_step)},
      {"groups", Int(&c.groups)},
      {"max_turns", Int(&c.max_turns)},
      {"max_new_tokens", Int(&c.max_new_tokens)},
      {"temperature", Dbl(&c.temperature)},
      {"selection", Bool(&c.selection)},
      {"summary", Bool(&c.summary)},
      {"skills", Bool(&c.skills)},
      {"verify_rounds", Int(&c.verify_rounds)},
      {"timed_calls", Int(&c.timed_calls)},
      {"warmup_calls", Int(&c.warmup_calls)},
      {"host_workers", Int(&c.host_workers)},
      {"sft_data", Str(&c.sft_data)},
      {"sft_demo_records", Int(&c.sft_demo_records)},
      {"sft_epochs", Int(&c.sft_epochs)},
      {"sft_lr", Dbl(&c.sft_lr)},
      {"checkpoint_every", Int(&c.checkpoint_every)},
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
               {"summary_utility_cap", Int(&r.summary_utility_cap)}})},
      {"optim",
       Nested({{"lr", Dbl(&o.lr)},
               {"warmup_steps", Int(&o.warmup_steps)},
               {"weight_decay", Dbl(&o.weight_decay)},
               {"beta1", Dbl(&o.beta1)},
               {"beta2", Dbl(&o.beta2)},
               {"eps", Dbl(&o.eps)},
               {"max_grad_norm", Dbl(&o.max_grad_norm)},
               {"micro_batch", Int(&o.micro_batch)},
               {"aggregation", Enum(&o.aggregation, &ParseLossAggregation)},
               {"kl_coef", Dbl(&o.kl_coef)},
               {"bf16_autocast", Bool(&o.bf16_autocast)}})},
      {"loop", LoopFields(c.loop)},
      {"sft_filter", Nested({{"max_similarity", Dbl(&s.max_similarity)},
                             {"shingle_chars", Int(&s.shingle_chars)},
                             {"num_hashes", Int(&s.num_hashes)},
                             {"bands", Int(&s.bands)},
                             {"max_per_task", Size(&s.max_per_task)},
                             {"max_per_agent", Size(&s.max_per_agent)},
                             {"seed", U64(&s.seed)},
                             {"compare_prompts", Bool(&s.compare_prompts)}})},
  };
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
  if (c.steps < 0) return bad("'steps' must be >= 0");
  if (c.tasks_per_step < 1) return bad("'tasks_per_step' must be >= 1");
  if (c.groups < 1) return bad("'groups' must be >= 1");
  if (c.max_turns < 1) return bad("'max_turns' must be >= 1");
  if (c.max_new_tokens < 1) return bad("'max_new_tokens' must be >= 1");
  if (!(c.temperature >= 0)) return bad("'temperature' must be >= 0");
  if (c.verify_rounds < 1) return bad("'verify_rounds' must be >= 1");
  if (c.timed_calls < 1) return bad("'timed_calls' must be >= 1");
  if (c.warmup_calls < 0) return bad("'warmup_calls' must be >= 0");
  if (c.host_workers < 1) return bad("'host_workers' must be >= 1");
  if (c.sft_demo_records < 0) return bad("'sft_demo_records' must be >= 0");
  if (c.sft_epochs < 0) return bad("'sft_epochs' must be >= 0");
  if (!(c.sft_lr >= 0)) return bad("'sft_lr' must be >= 0");
  if (c.checkpoint_every < 0) return bad("'checkpoint_every' must be >= 0");
  const auto& o = c.optim;
  if (!(o.lr >= 0)) return bad("'optim.lr' must be >= 0");
  if (o.warmup_steps < 0) return bad("'optim.warmup_steps' must be >= 0");
  if (o.micro_batch < 1) return bad("'optim.micro_batch' must be >= 1");
  if (!(o.kl_coef >= 0)) return bad("'optim.kl_coef' must be >= 0");
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
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    return Status::InvalidArgument("config: not valid JSON");
  }
  TrainConfig c;
  SKILLDB_RETURN_IF_ERROR(ReadObject(j, "", Fields(c)));
  SKILLDB_RETURN_IF_ERROR(ValidateTrainConfig(c));
  return c;
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
  return j.dump();
}

}  // namespace skilldb::trainer
