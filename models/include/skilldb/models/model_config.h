// The architectures models/ runs, as config.json describes them: the
// Llama / Qwen2 decoder and the BERT encoder. Reading refuses what the code
// does not implement (another architecture, an activation other than SiLU,
// sliding-window attention, rope scaling other than llama3 or linear) with
// NotSupported, and inconsistent sizes with InvalidArgument, so a checkpoint
// never runs with a silently wrong shape.
//
// Plain values: safe to copy and share read-only.
#ifndef SKILLDB_MODELS_MODEL_CONFIG_H_
#define SKILLDB_MODELS_MODEL_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::models {

// Rotary position embeddings: the base and the frequency scaling.
struct RopeConfig {
  double theta = 10000.0;
  // "default", "linear" (positions divided by factor) or "llama3" (Llama
  // 3.1's long/short wavelength blend).
  std::string type = "default";
  double factor = 1.0;
  double low_freq_factor = 1.0;                     // llama3
  double high_freq_factor = 4.0;                    // llama3
  int64_t original_max_position_embeddings = 8192;  // llama3
};

struct DecoderConfig {
  std::string model_type;  // "llama" | "qwen2"
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;  // config's head_dim, else hidden_size / num_heads
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  RopeConfig rope;
  bool tie_word_embeddings = false;
  bool qkv_bias = false;    // Qwen2: always; Llama: attention_bias
  bool o_bias = false;      // Llama: attention_bias
  bool mlp_bias = false;    // Llama: mlp_bias
  std::string torch_dtype;  // as saved ("bfloat16", ...), may be empty
  std::optional<int32_t> bos_token_id;
  std::optional<int32_t> pad_token_id;
  // Generation stops at any of these: generation_config.json's
  // eos_token_id when the checkpoint has one, else config.json's.
  std::vector<int32_t> eos_token_ids;

  // Parses config.json's text. Errors: Corruption (not JSON, a field of the
  // wrong type), NotSupported (see the file comment), InvalidArgument
  // (sizes that do not fit together: heads not dividing, ...).
  static Result<DecoderConfig> FromJson(std::string_view config_json);
  // Reads dir/config.json and, if present, dir/generation_config.json.
  static Result<DecoderConfig> FromCheckpoint(const std::string& dir);
};

struct EncoderConfig {
  std::string model_type;  // "bert"
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  int64_t pad_token_id = 0;

  static Result<EncoderConfig> FromJson(std::string_view config_json);
  static Result<EncoderConfig> FromCheckpoint(const std::string& dir);
};

}  // namespace skilldb::models

#endif  // SKILLDB_MODELS_MODEL_CONFIG_H_
