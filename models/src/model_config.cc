#include "skilldb/models/model_config.h"
#include "skilldb/models/tokenizer.h"

#include <nlohmann/json.hpp>

#include "skilldb/util/file.h"
#include "skilldb/util/json.h"

namespace skilldb::models {
namespace {

using Json = nlohmann::json;

// The bounds of a config's numbers: every size a checkpoint can mean, and
// none that would make libtorch allocate without end or divide by zero (a
// config is the user's input; its errors are InvalidArgument naming the
// key, never an exception from inside libtorch).
constexpr int64_t kMaxSize = int64_t{1} << 20;        // hidden, intermediate
constexpr int64_t kMaxCount = 4096;                   // layers, heads
constexpr int64_t kMaxPositions = int64_t{1} << 24;
constexpr double kMaxReal = 1e12;

std::string Name(const char* key) { return std::string("config.json: ") + key; }

Status CheckPositive(const char* name, int64_t value) {
  if (value > 0) return Status::Ok();
  return Status::InvalidArgument(std::string("config.json: ") + name +
                                 " must be positive, is " +
                                 std::to_string(value));
}

// Reads the optional member `key` of `j` into *out, within [lo, hi]; an
// absent or null member leaves *out (the default).
Status Int(const Json& j, const char* key, int64_t lo, int64_t hi,
           int64_t* out) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) {
    return Status::Ok();
  }
  return util::ReadInt64(j[key], Name(key), lo, hi, out);
}

// A finite number in (lo, hi] (every real of a config is a positive
// quantity: epsilons, rope theta and factors).
Status Positive(const Json& j, const char* key, double hi, double* out) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) {
    return Status::Ok();
  }
  double v = 0;
  SKILLDB_RETURN_IF_ERROR(util::ReadDouble(j[key], Name(key), 0.0, hi, &v));
  if (!(v > 0)) {
    return Status::InvalidArgument(Name(key) + " must be positive");
  }
  *out = v;
  return Status::Ok();
}

Status Bool(const Json& j, const char* key, bool* out) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) {
    return Status::Ok();
  }
  if (!j[key].is_boolean()) {
    return Status::InvalidArgument(Name(key) + " must be true or false");
  }
  *out = j[key].get<bool>();
  return Status::Ok();
}

Status String(const Json& j, const char* key, std::string* out) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) {
    return Status::Ok();
  }
  if (!j[key].is_string()) {
    return Status::InvalidArgument(Name(key) + " must be a string");
  }
  *out = j[key].get<std::string>();
  return Status::Ok();
}

// One token id or a list of them, each a token of the vocabulary.
Status IdList(const Json& j, const char* key, int64_t vocab_size,
              std::vector<int32_t>* out) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) {
    return Status::Ok();
  }
  const Json& v = j[key];
  std::vector<int32_t> ids;
  for (const Json& id : v.is_array() ? v : Json::array({v})) {
    int64_t x = 0;
    SKILLDB_RETURN_IF_ERROR(
        util::ReadInt64(id, Name(key), 0, vocab_size - 1, &x));
    ids.push_back(static_cast<int32_t>(x));
  }
  *out = std::move(ids);
  return Status::Ok();
}

Status OptionalId(const Json& j, const char* key, int64_t vocab_size,
                  std::optional<int32_t>* out) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) {
    return Status::Ok();
  }
  int64_t x = 0;
  SKILLDB_RETURN_IF_ERROR(
      util::ReadInt64(j[key], Name(key), 0, vocab_size - 1, &x));
  *out = static_cast<int32_t>(x);
  return Status::Ok();
}

Result<Json> ParseConfig(std::string_view text, const char* what) {
  SKILLDB_ASSIGN_OR_RETURN(
      Json c, util::ParseUntrustedJson(text, what,
                                       {.max_bytes = size_t{16} << 20}));
  if (!c.is_object()) {
    return Status::InvalidArgument(std::string(what) + ": not an object");
  }
  return c;
}

// transformers 5 writes rope_parameters (theta inside); older checkpoints
// carry rope_theta and rope_scaling.
Status ReadRope(const Json& c, RopeConfig& rope) {
  Json params = c.value("rope_parameters", Json());
  if (params.is_null()) params = c.value("rope_scaling", Json());
  SKILLDB_RETURN_IF_ERROR(Positive(c, "rope_theta", kMaxReal, &rope.theta));
  if (params.is_null()) return Status::Ok();
  if (!params.is_object()) {
    return Status::InvalidArgument(
        "config.json: rope_parameters / rope_scaling must be an object");
  }
  SKILLDB_RETURN_IF_ERROR(
      Positive(params, "rope_theta", kMaxReal, &rope.theta));
  rope.type = "default";
  SKILLDB_RETURN_IF_ERROR(String(params, "type", &rope.type));
  SKILLDB_RETURN_IF_ERROR(String(params, "rope_type", &rope.type));
  SKILLDB_RETURN_IF_ERROR(Positive(params, "factor", kMaxReal, &rope.factor));
  SKILLDB_RETURN_IF_ERROR(
      Positive(params, "low_freq_factor", kMaxReal, &rope.low_freq_factor));
  SKILLDB_RETURN_IF_ERROR(
      Positive(params, "high_freq_factor", kMaxReal, &rope.high_freq_factor));
  SKILLDB_RETURN_IF_ERROR(Int(params, "original_max_position_embeddings", 1,
                              kMaxPositions,
                              &rope.original_max_position_embeddings));
  if (rope.type != "default" && rope.type != "linear" &&
      rope.type != "llama3") {
    return Status::NotSupported("config.json: rope type '" + rope.type +
                                "' is not supported (default, linear and "
                                "llama3 are)");
  }
  if (rope.type == "llama3" && rope.low_freq_factor == rope.high_freq_factor) {
    return Status::InvalidArgument(
        "config.json: llama3 rope needs low_freq_factor != high_freq_factor");
  }
  return Status::Ok();
}

Status ReadDecoderSizes(const Json& c, DecoderConfig& d) {
  SKILLDB_RETURN_IF_ERROR(
      Int(c, "vocab_size", 1, kMaxVocabulary, &d.vocab_size));
  SKILLDB_RETURN_IF_ERROR(Int(c, "hidden_size", 1, kMaxSize, &d.hidden_size));
  SKILLDB_RETURN_IF_ERROR(
      Int(c, "intermediate_size", 1, kMaxSize, &d.intermediate_size));
  SKILLDB_RETURN_IF_ERROR(
      Int(c, "num_hidden_layers", 1, kMaxCount, &d.num_layers));
  SKILLDB_RETURN_IF_ERROR(
      Int(c, "num_attention_heads", 1, kMaxCount, &d.num_heads));
  d.num_kv_heads = d.num_heads;
  SKILLDB_RETURN_IF_ERROR(
      Int(c, "num_key_value_heads", 1, kMaxCount, &d.num_kv_heads));
  d.max_position_embeddings = 2048;
  SKILLDB_RETURN_IF_ERROR(Int(c, "max_position_embeddings", 1, kMaxPositions,
                              &d.max_position_embeddings));
  SKILLDB_RETURN_IF_ERROR(
      Positive(c, "rms_norm_eps", 1.0, &d.rms_norm_eps));
  using Sizes = std::initializer_list<std::pair<const char*, int64_t>>;
  for (const auto& [name, value] :
       Sizes{{"vocab_size", d.vocab_size},
             {"hidden_size", d.hidden_size},
             {"intermediate_size", d.intermediate_size},
             {"num_hidden_layers", d.num_layers},
             {"num_attention_heads", d.num_heads},
             {"num_key_value_heads", d.num_kv_heads}}) {
    SKILLDB_RETURN_IF_ERROR(CheckPositive(name, value));
  }
  d.head_dim = 0;
  SKILLDB_RETURN_IF_ERROR(Int(c, "head_dim", 1, kMaxSize, &d.head_dim));
  if (d.head_dim == 0) {
    if (d.hidden_size % d.num_heads != 0) {
      return Status::InvalidArgument(
          "config.json: hidden_size is not a multiple of num_attention_heads");
    }
    d.head_dim = d.hidden_size / d.num_heads;
  }
  if (d.head_dim % 2 != 0) {
    return Status::InvalidArgument("config.json: head_dim must be even");
  }
  if (d.num_heads % d.num_kv_heads != 0) {
    return Status::InvalidArgument(
        "config.json: num_attention_heads is not a multiple of "
        "num_key_value_heads");
  }
  return Status::Ok();
}

Status ReadDecoder(const Json& c, DecoderConfig& d) {
  SKILLDB_RETURN_IF_ERROR(String(c, "model_type", &d.model_type));
  if (d.model_type != "llama" && d.model_type != "qwen2") {
    return Status::NotSupported("config.json: model_type '" + d.model_type +
                                "' is not supported (llama and qwen2 are)");
  }
  if (c.contains("architectures") && c["architectures"].is_array()) {
    for (const Json& a : c["architectures"]) {
      const std::string arch = a.is_string() ? a.get<std::string>() : "?";
      if (arch != "LlamaForCausalLM" && arch != "Qwen2ForCausalLM") {
        return Status::NotSupported("config.json: architecture '" + arch +
                                    "' is not supported");
      }
    }
  }
  std::string act = "silu";
  SKILLDB_RETURN_IF_ERROR(String(c, "hidden_act", &act));
  if (act != "silu") {
    return Status::NotSupported("config.json: hidden_act '" + act +
                                "' is not supported (silu is)");
  }
  bool sliding = false;
  SKILLDB_RETURN_IF_ERROR(Bool(c, "use_sliding_window", &sliding));
  if (sliding) {
    return Status::NotSupported(
        "config.json: sliding-window attention is not supported");
  }
  SKILLDB_RETURN_IF_ERROR(ReadDecoderSizes(c, d));
  SKILLDB_RETURN_IF_ERROR(
      Bool(c, "tie_word_embeddings", &d.tie_word_embeddings));
  if (d.model_type == "qwen2") {
    d.qkv_bias = true;
  } else {
    bool bias = false;
    SKILLDB_RETURN_IF_ERROR(Bool(c, "attention_bias", &bias));
    d.qkv_bias = d.o_bias = bias;
    SKILLDB_RETURN_IF_ERROR(Bool(c, "mlp_bias", &d.mlp_bias));
  }
  SKILLDB_RETURN_IF_ERROR(String(c, "dtype", &d.torch_dtype));
  SKILLDB_RETURN_IF_ERROR(String(c, "torch_dtype", &d.torch_dtype));
  SKILLDB_RETURN_IF_ERROR(
      OptionalId(c, "bos_token_id", d.vocab_size, &d.bos_token_id));
  SKILLDB_RETURN_IF_ERROR(
      OptionalId(c, "pad_token_id", d.vocab_size, &d.pad_token_id));
  SKILLDB_RETURN_IF_ERROR(
      IdList(c, "eos_token_id", d.vocab_size, &d.eos_token_ids));
  return ReadRope(c, d.rope);
}

}  // namespace

Result<DecoderConfig> DecoderConfig::FromJson(std::string_view config_json) {
  DecoderConfig d;
  SKILLDB_ASSIGN_OR_RETURN(const Json c,
                           ParseConfig(config_json, "config.json"));
  try {
    SKILLDB_RETURN_IF_ERROR(ReadDecoder(c, d));
  } catch (const Json::exception& e) {
    return Status::InvalidArgument(std::string("config.json: ") + e.what());
  }
  return d;
}

Result<DecoderConfig> DecoderConfig::FromCheckpoint(const std::string& dir) {
  SKILLDB_ASSIGN_OR_RETURN(std::string text,
                           util::ReadFile(dir + "/config.json"));
  auto config = FromJson(text);
  if (!config.ok()) return config.status().WithContext(dir);
  const std::string gen_path = dir + "/generation_config.json";
  if (util::IsRegularFile(gen_path)) {
    SKILLDB_ASSIGN_OR_RETURN(std::string gen, util::ReadFile(gen_path));
    SKILLDB_ASSIGN_OR_RETURN(const Json g,
                             ParseConfig(gen, "generation_config.json"));
    std::vector<int32_t> eos;
    Status read = IdList(g, "eos_token_id", config->vocab_size, &eos);
    if (!read.ok()) return read.WithContext(gen_path);
    if (!eos.empty()) config->eos_token_ids = eos;
  }
  return config;
}

Result<EncoderConfig> EncoderConfig::FromJson(std::string_view config_json) {
  EncoderConfig e;
  SKILLDB_ASSIGN_OR_RETURN(const Json c,
                           ParseConfig(config_json, "config.json"));
  SKILLDB_RETURN_IF_ERROR(String(c, "model_type", &e.model_type));
  if (e.model_type != "bert") {
    return Status::NotSupported("config.json: encoder model_type '" +
                                e.model_type + "' is not supported (bert is)");
  }
  std::string act = "gelu";
  SKILLDB_RETURN_IF_ERROR(String(c, "hidden_act", &act));
  if (act != "gelu") {
    return Status::NotSupported("config.json: hidden_act '" + act +
                                "' is not supported (gelu is)");
  }
  std::string pos = "absolute";
  SKILLDB_RETURN_IF_ERROR(String(c, "position_embedding_type", &pos));
  if (pos != "absolute") {
    return Status::NotSupported("config.json: position_embedding_type '" +
                                pos + "' is not supported");
  }
  SKILLDB_RETURN_IF_ERROR(
      Int(c, "vocab_size", 1, kMaxVocabulary, &e.vocab_size));
  SKILLDB_RETURN_IF_ERROR(Int(c, "hidden_size", 1, kMaxSize, &e.hidden_size));
  SKILLDB_RETURN_IF_ERROR(
      Int(c, "intermediate_size", 1, kMaxSize, &e.intermediate_size));
  SKILLDB_RETURN_IF_ERROR(
      Int(c, "num_hidden_layers", 1, kMaxCount, &e.num_layers));
  SKILLDB_RETURN_IF_ERROR(
      Int(c, "num_attention_heads", 1, kMaxCount, &e.num_heads));
  // Two positions at least: the encoder wraps every text in [CLS] ... [SEP].
  SKILLDB_RETURN_IF_ERROR(Int(c, "max_position_embeddings", 2, kMaxPositions,
                              &e.max_position_embeddings));
  SKILLDB_RETURN_IF_ERROR(
      Int(c, "type_vocab_size", 1, kMaxCount, &e.type_vocab_size));
  SKILLDB_RETURN_IF_ERROR(
      Positive(c, "layer_norm_eps", 1.0, &e.layer_norm_eps));
  using Sizes = std::initializer_list<std::pair<const char*, int64_t>>;
  for (const auto& [name, value] :
       Sizes{{"vocab_size", e.vocab_size},
             {"hidden_size", e.hidden_size},
             {"intermediate_size", e.intermediate_size},
             {"num_hidden_layers", e.num_layers},
             {"num_attention_heads", e.num_heads}}) {
    SKILLDB_RETURN_IF_ERROR(CheckPositive(name, value));
  }
  if (e.hidden_size % e.num_heads != 0) {
    return Status::InvalidArgument(
        "config.json: hidden_size is not a multiple of num_attention_heads");
  }
  // An input id: a token of the vocabulary.
  SKILLDB_RETURN_IF_ERROR(
      Int(c, "pad_token_id", 0, e.vocab_size - 1, &e.pad_token_id));
  return e;
}

Result<EncoderConfig> EncoderConfig::FromCheckpoint(const std::string& dir) {
  SKILLDB_ASSIGN_OR_RETURN(std::string text,
                           util::ReadFile(dir + "/config.json"));
  auto config = FromJson(text);
  if (!config.ok()) return config.status().WithContext(dir);
  return config;
}

}  // namespace skilldb::models
