#include "skilldb/models/model_config.h"

#include <nlohmann/json.hpp>

#include "file_util.h"

namespace skilldb::models {
namespace {

using Json = nlohmann::json;

int64_t IntOr(const Json& j, const char* key, int64_t fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  return j[key].get<int64_t>();
}

double DoubleOr(const Json& j, const char* key, double fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  return j[key].get<double>();
}

bool BoolOr(const Json& j, const char* key, bool fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  return j[key].get<bool>();
}

std::vector<int32_t> IdList(const Json& j) {
  std::vector<int32_t> ids;
  if (j.is_number_integer()) ids.push_back(j.get<int32_t>());
  if (j.is_array()) {
    for (const Json& id : j) ids.push_back(id.get<int32_t>());
  }
  return ids;
}

Status CheckPositive(const char* name, int64_t value) {
  if (value > 0) return Status::Ok();
  return Status::InvalidArgument(std::string("config.json: ") + name +
                                 " must be positive, is " +
                                 std::to_string(value));
}

// transformers 5 writes rope_parameters (theta inside); older checkpoints
// carry rope_theta and rope_scaling.
Status ReadRope(const Json& c, RopeConfig& rope) {
  Json params = c.value("rope_parameters", Json());
  if (params.is_null()) params = c.value("rope_scaling", Json());
  rope.theta = DoubleOr(c, "rope_theta", 10000.0);
  if (params.is_null()) return Status::Ok();
  rope.theta = DoubleOr(params, "rope_theta", rope.theta);
  rope.type =
      params.value("rope_type", params.value("type", std::string("default")));
  rope.factor = DoubleOr(params, "factor", 1.0);
  rope.low_freq_factor = DoubleOr(params, "low_freq_factor", 1.0);
  rope.high_freq_factor = DoubleOr(params, "high_freq_factor", 4.0);
  rope.original_max_position_embeddings =
      IntOr(params, "original_max_position_embeddings", 8192);
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

Status ReadDecoder(const Json& c, DecoderConfig& d) {
  d.model_type = c.value("model_type", std::string());
  if (d.model_type != "llama" && d.model_type != "qwen2") {
    return Status::NotSupported("config.json: model_type '" + d.model_type +
                                "' is not supported (llama and qwen2 are)");
  }
  if (c.contains("architectures") && c["architectures"].is_array()) {
    for (const Json& a : c["architectures"]) {
      const std::string arch = a.get<std::string>();
      if (arch != "LlamaForCausalLM" && arch != "Qwen2ForCausalLM") {
        return Status::NotSupported("config.json: architecture '" + arch +
                                    "' is not supported");
      }
    }
  }
  const std::string act = c.value("hidden_act", std::string("silu"));
  if (act != "silu") {
    return Status::NotSupported("config.json: hidden_act '" + act +
                                "' is not supported (silu is)");
  }
  if (BoolOr(c, "use_sliding_window", false)) {
    return Status::NotSupported(
        "config.json: sliding-window attention is not supported");
  }
  d.vocab_size = IntOr(c, "vocab_size", 0);
  d.hidden_size = IntOr(c, "hidden_size", 0);
  d.intermediate_size = IntOr(c, "intermediate_size", 0);
  d.num_layers = IntOr(c, "num_hidden_layers", 0);
  d.num_heads = IntOr(c, "num_attention_heads", 0);
  d.num_kv_heads = IntOr(c, "num_key_value_heads", d.num_heads);
  d.max_position_embeddings = IntOr(c, "max_position_embeddings", 2048);
  d.rms_norm_eps = DoubleOr(c, "rms_norm_eps", 1e-6);
  d.tie_word_embeddings = BoolOr(c, "tie_word_embeddings", false);
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
  d.head_dim = IntOr(c, "head_dim", 0);
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
  if (d.model_type == "qwen2") {
    d.qkv_bias = true;
  } else {
    d.qkv_bias = d.o_bias = BoolOr(c, "attention_bias", false);
    d.mlp_bias = BoolOr(c, "mlp_bias", false);
  }
  d.torch_dtype = c.value("torch_dtype", c.value("dtype", std::string()));
  if (c.contains("bos_token_id") && c["bos_token_id"].is_number_integer()) {
    d.bos_token_id = c["bos_token_id"].get<int32_t>();
  }
  if (c.contains("pad_token_id") && c["pad_token_id"].is_number_integer()) {
    d.pad_token_id = c["pad_token_id"].get<int32_t>();
  }
  d.eos_token_ids = IdList(c.value("eos_token_id", Json()));
  return ReadRope(c, d.rope);
}

}  // namespace

Result<DecoderConfig> DecoderConfig::FromJson(std::string_view config_json) {
  DecoderConfig d;
  try {
    const Json c = Json::parse(config_json);
    if (!c.is_object()) return Status::Corruption("config.json: not an object");
    SKILLDB_RETURN_IF_ERROR(ReadDecoder(c, d));
  } catch (const Json::exception& e) {
    return Status::Corruption(std::string("config.json: ") + e.what());
  }
  return d;
}

Result<DecoderConfig> DecoderConfig::FromCheckpoint(const std::string& dir) {
  SKILLDB_ASSIGN_OR_RETURN(std::string text,
                           internal::ReadFile(dir + "/config.json"));
  auto config = FromJson(text);
  if (!config.ok()) return config.status().WithContext(dir);
  const std::string gen_path = dir + "/generation_config.json";
  if (internal::IsRegularFile(gen_path)) {
    SKILLDB_ASSIGN_OR_RETURN(std::string gen, internal::ReadFile(gen_path));
    try {
      const Json g = Json::parse(gen);
      std::vector<int32_t> eos = IdList(g.value("eos_token_id", Json()));
      if (!eos.empty()) config->eos_token_ids = eos;
    } catch (const Json::exception& e) {
      return Status::Corruption(gen_path + ": " + e.what());
    }
  }
  return config;
}

Result<EncoderConfig> EncoderConfig::FromJson(std::string_view config_json) {
  EncoderConfig e;
  try {
    const Json c = Json::parse(config_json);
    e.model_type = c.value("model_type", std::string());
    if (e.model_type != "bert") {
      return Status::NotSupported("config.json: encoder model_type '" +
                                  e.model_type +
                                  "' is not supported (bert is)");
    }
    const std::string act = c.value("hidden_act", std::string("gelu"));
    if (act != "gelu") {
      return Status::NotSupported("config.json: hidden_act '" + act +
                                  "' is not supported (gelu is)");
    }
    const std::string pos =
        c.value("position_embedding_type", std::string("absolute"));
    if (pos != "absolute") {
      return Status::NotSupported("config.json: position_embedding_type '" +
                                  pos + "' is not supported");
    }
    e.vocab_size = IntOr(c, "vocab_size", 0);
    e.hidden_size = IntOr(c, "hidden_size", 0);
    e.intermediate_size = IntOr(c, "intermediate_size", 0);
    e.num_layers = IntOr(c, "num_hidden_layers", 0);
    e.num_heads = IntOr(c, "num_attention_heads", 0);
    e.max_position_embeddings = IntOr(c, "max_position_embeddings", 512);
    e.type_vocab_size = IntOr(c, "type_vocab_size", 2);
    e.layer_norm_eps = DoubleOr(c, "layer_norm_eps", 1e-12);
    e.pad_token_id = IntOr(c, "pad_token_id", 0);
  } catch (const Json::exception& ex) {
    return Status::Corruption(std::string("config.json: ") + ex.what());
  }
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
  return e;
}

Result<EncoderConfig> EncoderConfig::FromCheckpoint(const std::string& dir) {
  SKILLDB_ASSIGN_OR_RETURN(std::string text,
                           internal::ReadFile(dir + "/config.json"));
  auto config = FromJson(text);
  if (!config.ok()) return config.status().WithContext(dir);
  return config;
}

}  // namespace skilldb::models
