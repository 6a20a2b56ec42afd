#include "skilldb/trainer/config.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

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

// An integer range, inclusive.
struct IntRange {
  int64_t lo, hi;
};
constexpr IntRange kSteps{0, 1000000};
constexpr IntRange kMaxPer{0, 1000000000};
// The loop object's counts and byte cuts: most must be positive (a cut of
// 0 bytes would show nothing).
constexpr IntRange kLoopPositive{1, 1 << 20};
constexpr IntRange kLoopCount{0, 1 << 20};

// An integer key of the configuration: its path, where it lives in a
// TrainConfig and its range.
struct IntField {
  const char* path;  // "steps", "optim.micro_batch"
  std::variant<int*, size_t*> field;
  IntRange range;
};

// Every integer key of `c` (pointers into it): the one table both the JSON
// reader and ValidateTrainConfig (configs built in code, e.g. `train
// demo`'s flags) check against. The bounds say what a run can mean, and
// keep the sizes they drive (threads, worker processes, tensors) from
// exhausting memory long before the run could start.
std::vector<IntField> IntFields(TrainConfig& c) {
  auto& l = c.loop;
  auto& s = c.sft_filter;
  return {
      {"steps", &c.steps, kSteps},
      {"tasks_per_step", &c.tasks_per_step, {1, 1024}},
      {"groups", &c.groups, {1, 4096}},
      {"max_turns", &c.max_turns, {1, 64}},
      {"max_new_tokens", &c.max_new_tokens, {1, 1 << 20}},
      {"verify_rounds", &c.verify_rounds, {1, 100}},
      {"timed_calls", &c.timed_calls, {1, 10000}},
      {"warmup_calls", &c.warmup_calls, {0, 1000}},
      // As the verifier accepts (verify::kMaxHostWorkers).
      {"host_workers", &c.host_workers, {1, 256}},
      {"sft_demo_records", &c.sft_demo_records, {0, 1000000}},
      {"sft_epochs", &c.sft_epochs, {0, 1000}},
      {"checkpoint_every", &c.checkpoint_every, {0, 1000000}},
      {"optim.warmup_steps", &c.optim.warmup_steps, {0, 1000000}},
      {"optim.micro_batch", &c.optim.micro_batch, {1, 4096}},
      {"rewards.summary_utility_cap",
       &c.rewards.summary_utility_cap,
       {0, 1000000}},
      {"sft_filter.shingle_chars", &s.shingle_chars, {1, 64}},
      {"sft_filter.num_hashes", &s.num_hashes, {1, 1024}},
      {"sft_filter.bands", &s.bands, {1, 1024}},
      {"sft_filter.max_per_task", &s.max_per_task, kMaxPer},
      {"sft_filter.max_per_agent", &s.max_per_agent, kMaxPer},
      {"loop.retrieve_k", &l.retrieve_k, kLoopPositive},
      {"loop.select_k", &l.select_k, kLoopPositive},
      {"loop.description_bytes", &l.description_bytes, kLoopPositive},
      {"loop.skills_shown", &l.skills_shown, kLoopPositive},
      {"loop.skill_title_bytes", &l.skill_title_bytes, kLoopPositive},
      {"loop.answer_bytes", &l.answer_bytes, kLoopPositive},
      {"loop.feedback_bytes", &l.feedback_bytes, kLoopPositive},
      {"loop.rerank_title_bytes", &l.rerank_title_bytes, kLoopPositive},
      {"loop.rerank_summary_bytes", &l.rerank_summary_bytes, kLoopPositive},
      {"loop.rerank_query_bytes", &l.rerank_query_bytes, kLoopPositive},
      {"loop.rerank_max_tokens", &l.rerank_max_tokens, kLoopPositive},
      {"loop.summary_attempts", &l.summary_attempts, kLoopPositive},
      {"loop.summary_max_tokens", &l.summary_max_tokens, kLoopPositive},
      {"loop.fixture_context_tokens", &l.fixture_context_tokens, kLoopPositive},
      {"loop.skill_code_bytes", &l.skill_code_bytes, kLoopCount},
      {"loop.skill_demo_records", &l.skill_demo_records, kLoopCount},
      {"loop.summary_demo_records", &l.summary_demo_records, kLoopCount},
      {"loop.summaries_per_step", &l.summaries_per_step, kLoopCount},
      {"kernelbench.level", &c.kernelbench.level, {1, 1000}},
      {"kernelbench.eval_every", &c.kernelbench.eval_every, kSteps},
      {"kernelbench.correctness_trials",
       &c.kernelbench.correctness_trials,
       {1, 1000}},
  };
}

// The field's value (a size above INT64_MAX as INT64_MAX: out of range
// all the same).
int64_t Value(const IntField& f) {
  if (size_t* const* size = std::get_if<size_t*>(&f.field)) {
    return static_cast<int64_t>(
        std::min<size_t>(**size, std::numeric_limits<int64_t>::max()));
  }
  return *std::get<int*>(f.field);
}

std::string KeyName(const std::string& key) { return "config: '" + key + "'"; }

Status TypeError(const std::string& key, const char* want) {
  return Status::InvalidArgument(KeyName(key) + " must be " + want);
}

Reader Int(const IntField& f) {
  return [f](const json& v, const std::string& k) {
    int64_t x = 0;
    SKILLDB_RETURN_IF_ERROR(
        util::ReadInt64(v, KeyName(k), f.range.lo, f.range.hi, &x));
    std::visit(
        [x](auto* out) { *out = static_cast<std::decay_t<decltype(*out)>>(x); },
        f.field);
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

// A list of problem ids: positive integers.
Reader Ids(std::vector<int>* out) {
  return [out](const json& v, const std::string& k) -> Status {
    if (!v.is_array()) return TypeError(k, "a list of problem ids");
    out->clear();
    for (const json& id : v) {
      int64_t x = 0;
      SKILLDB_RETURN_IF_ERROR(
          util::ReadInt64(id, KeyName(k) + " ids", 1, 1000000, &x));
      out->push_back(static_cast<int>(x));
    }
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

// Retrieval needs select_k <= retrieve_k (the ranges are IntFields').
Status ValidateLoopConfig(const LoopConfig& l) {
  if (l.select_k > l.retrieve_k) {
    return Status::InvalidArgument(
        "config: 'loop.select_k' must be <= 'loop.retrieve_k'");
  }
  return Status::Ok();
}

// Every key's reader: the integers from IntFields, the others here, each
// in the object it sits in ("" for the top level).
std::map<std::string, Reader> Fields(TrainConfig& c) {
  auto& a = c.advantages;
  auto& r = c.rewards;
  auto& o = c.optim;
  auto& l = c.loop;
  auto& s = c.sft_filter;
  std::map<std::string, std::map<std::string, Reader>> in = {
      {"",
       {{"model_dir", Str(&c.model_dir)},
        {"backend", Str(&c.backend)},
        {"device", Str(&c.device)},
        {"family", Str(&c.family)},
        {"out_dir", Str(&c.out_dir)},
        {"seed", U64(&c.seed)},
        {"temperature", Dbl(&c.temperature, 0.0)},
        {"selection", Bool(&c.selection)},
        {"summary", Bool(&c.summary)},
        {"skills", Bool(&c.skills)},
        {"sft_data", Str(&c.sft_data)},
        {"sft_lr", Dbl(&c.sft_lr, 0.0)},
        {"resume", Str(&c.resume)}}},
      {"advantages",
       {{"gamma", Dbl(&a.gamma)},
        {"baseline", Enum(&a.baseline, &ParseBaseline)},
        {"normalization", Enum(&a.normalization, &ParseNormalization)},
        {"std_epsilon", Dbl(&a.std_epsilon)}}},
      {"rewards",
       {{"correct_weight", Dbl(&r.correct_weight)},
        {"speedup_weight", Dbl(&r.speedup_weight)},
        {"speedup_cap", Dbl(&r.speedup_cap)},
        {"hack_reward", Dbl(&r.hack_reward)},
        {"selection_relative", Bool(&r.selection_relative)},
        {"selection_weight", Dbl(&r.selection_weight)},
        {"summary_inserted", Dbl(&r.summary_inserted)},
        {"summary_rejected", Dbl(&r.summary_rejected)},
        {"summary_utility", Dbl(&r.summary_utility)}}},
      {"optim",
       {{"lr", Dbl(&o.lr, 0.0)},
        {"weight_decay", Dbl(&o.weight_decay)},
        {"beta1", Dbl(&o.beta1)},
        {"beta2", Dbl(&o.beta2)},
        {"eps", Dbl(&o.eps)},
        {"max_grad_norm", Dbl(&o.max_grad_norm)},
        {"aggregation", Enum(&o.aggregation, &ParseLossAggregation)},
        {"kl_coef", Dbl(&o.kl_coef, 0.0)},
        {"bf16_autocast", Bool(&o.bf16_autocast)},
        {"share_prefix", Bool(&o.share_prefix)}}},
      {"loop",
       {{"rollout_step_stride", U64(&l.rollout_step_stride)},
        {"rollout_task_stride", U64(&l.rollout_task_stride)},
        {"selection_salt", U64(&l.selection_salt)},
        {"summary_salt", U64(&l.summary_salt)},
        {"rank_stride", U64(&l.rank_stride)},
        {"family_summary_prompt", Bool(&l.family_summary_prompt)},
        {"summary_temperature", Dbl(&l.summary_temperature)}}},
      {"kernelbench",
       {{"store", Str(&c.kernelbench.store)},
        {"train", Ids(&c.kernelbench.train)},
        {"heldout", Ids(&c.kernelbench.heldout)},
        {"format", Str(&c.kernelbench.format)},
        {"families", Str(&c.kernelbench.families)},
        {"answers", Str(&c.kernelbench.answers)},
        {"python", Str(&c.kernelbench.python)},
        {"cache_dir", Str(&c.kernelbench.cache_dir)}}},
      {"sft_filter",
       {{"max_similarity", Dbl(&s.max_similarity, 0.0)},
        {"seed", U64(&s.seed)},
        {"compare_prompts", Bool(&s.compare_prompts)}}},
  };
  for (const IntField& f : IntFields(c)) {
    const std::string_view path = f.path;
    const size_t dot = path.find('.');
    if (dot == std::string_view::npos) {
      in[""][f.path] = Int(f);
    } else {
      in[std::string(path.substr(0, dot))][std::string(path.substr(dot + 1))] =
          Int(f);
    }
  }
  std::map<std::string, Reader> top = std::move(in[""]);
  for (auto& [object, fields] : in) {
    if (!object.empty()) top[object] = Nested(std::move(fields));
  }
  return top;
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

// By value: the table points into a config it could write.
Status CheckRanges(TrainConfig c) {
  for (const IntField& f : IntFields(c)) {
    SKILLDB_RETURN_IF_ERROR(InRange(f.path, Value(f), f.range));
  }
  return Status::Ok();
}

// The KernelBench task source (off without a store): both splits stated,
// each id once, no id in both (a held-out problem trained on would make
// the held-out figures meaningless), a format the backend can run.
Status ValidateKernelBench(const TrainConfig& c) {
  const KernelBenchConfig& k = c.kernelbench;
  if (!k.enabled()) return Status::Ok();
  auto bad = [](const std::string& m) {
    return Status::InvalidArgument("config: " + m);
  };
  if (k.train.empty()) return bad("'kernelbench.train' must name problems");
  if (k.heldout.empty()) {
    return bad("'kernelbench.heldout' must name problems");
  }
  std::set<int> train(k.train.begin(), k.train.end());
  if (train.size() != k.train.size()) {
    return bad("'kernelbench.train' names a problem twice");
  }
  std::set<int> heldout;
  for (int id : k.heldout) {
    if (!heldout.insert(id).second) {
      return bad("'kernelbench.heldout' names problem " + std::to_string(id) +
                 " twice");
    }
    if (train.count(id)) {
      return bad(
          "'kernelbench.heldout' and 'kernelbench.train' both name "
          "problem " +
          std::to_string(id) +
          " (the splits must be "
          "disjoint)");
    }
  }
  const std::string want = k.format == "cpp" ? "host" : "cuda";
  if (k.format != "cpp" && k.format != "cuda" && k.format != "triton") {
    return bad("'kernelbench.format' must be cpp, cuda or triton");
  }
  if (c.backend != want) {
    return bad("'kernelbench.format' " + k.format + " needs 'backend' " + want +
               " (cpp answers run on CPU tensors, cuda and triton on "
               "the GPU)");
  }
  if (k.answers != "template" && k.answers != "free") {
    return bad("'kernelbench.answers' must be template or free");
  }
  if (k.answers == "free" && c.loop.family_summary_prompt) {
    return bad(
        "'loop.family_summary_prompt' reads an answer's template "
        "parameters: it needs 'kernelbench.answers' template");
  }
  if (k.families.empty()) {
    return bad(
        "'kernelbench.families' (the answer templates' directory) is "
        "required with 'kernelbench.store'");
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
  return ValidateKernelBench(c);
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

std::span<const KernelBenchFlag> KernelBenchFlags() {
  static constexpr KernelBenchFlag kFlags[] = {
      {"--kb-store", "store"},     {"--kb-level", "level"},
      {"--kb-train", "train"},     {"--kb-heldout", "heldout"},
      {"--kb-format", "format"},   {"--kb-families", "families"},
      {"--kb-answers", "answers"}, {"--kb-eval-every", "eval_every"},
      {"--kb-python", "python"},   {"--kb-cache-dir", "cache_dir"},
  };
  return kFlags;
}

bool IsKernelBenchFlag(std::string_view arg) {
  for (const KernelBenchFlag& f : KernelBenchFlags()) {
    if (arg == f.flag) return true;
  }
  return false;
}

Result<TrainCommandLine> SplitTrainCommand(
    const std::vector<std::string>& args) {
  // Options that take a value: their value is never the command word.
  static const std::set<std::string> kWithValue = {
      "--config",  "--out",      "--resume",        "--steps",
      "--backend", "--device",   "--seed",          "--groups",
      "--turns",   "--baseline", "--normalization", "--sft-epochs"};
  TrainCommandLine out;
  bool has_config = false;
  bool help = false;
  std::string first_word;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if ((kWithValue.count(a) || IsKernelBenchFlag(a)) && i + 1 < args.size()) {
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
        {"bf16_autocast", o.bf16_autocast},
        {"share_prefix", o.share_prefix}}},
      {"loop", LoopJson(c.loop)},
      {"kernelbench",
       {{"store", c.kernelbench.store},
        {"level", c.kernelbench.level},
        {"train", c.kernelbench.train},
        {"heldout", c.kernelbench.heldout},
        {"format", c.kernelbench.format},
        {"families", c.kernelbench.families},
        {"answers", c.kernelbench.answers},
        {"eval_every", c.kernelbench.eval_every},
        {"python", c.kernelbench.python},
        {"cache_dir", c.kernelbench.cache_dir},
        {"correctness_trials", c.kernelbench.correctness_trials}}},
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
