#include "skilldb/models/safetensors.h"

#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <string>

#include "skilldb/models/model_config.h"
#include "test_fixtures.h"

namespace skilldb::models {
namespace {

using testing::TempDir;

// Writes a safetensors file: the 8-byte little-endian header length, the
// header, the data.
void WriteSafetensors(const std::string& path, const std::string& header,
                      const std::string& data, uint64_t declared_length = 0) {
  std::ofstream out(path, std::ios::binary);
  uint64_t n = declared_length ? declared_length : header.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xFF));
  out << header << data;
}

std::string Bytes(size_t n, char fill = 0) { return std::string(n, fill); }

TEST_CASE("a valid file maps its tensors in every supported dtype") {
  TempDir dir;
  const std::string header =
      R"({"__metadata__":{"format":"pt"},)"
      R"("a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
      R"("b":{"dtype":"BF16","shape":[3],"data_offsets":[16,22]},)"
      R"("c":{"dtype":"F16","shape":[1],"data_offsets":[22,24]},)"
      R"("d":{"dtype":"I64","shape":[],"data_offsets":[24,32]}})";
  std::string data = Bytes(32);
  const float one = 1.0f;
  std::memcpy(&data[0], &one, 4);
  WriteSafetensors(dir.File("m.safetensors"), header, data);
  auto file = SafetensorsFile::Open(dir.File("m.safetensors"));
  REQUIRE_MESSAGE(file.ok(), file.status().ToString());
  REQUIRE((*file)->tensors().size() == 4);
  const TensorView* a = (*file)->Find("a");
  REQUIRE(a != nullptr);
  CHECK(a->dtype == DType::kF32);
  CHECK(a->shape == std::vector<int64_t>{2, 2});
  CHECK(a->numel() == 4);
  float first;
  std::memcpy(&first, a->data, 4);
  CHECK(first == 1.0f);
  CHECK((*file)->Find("b")->dtype == DType::kBF16);
  CHECK((*file)->Find("c")->dtype == DType::kF16);
  CHECK((*file)->Find("d")->numel() == 1);
  CHECK((*file)->Find("zz") == nullptr);
  CHECK((*file)->metadata().at("format") == "pt");
}

TEST_CASE("malformed headers are invalid input, never a crash") {
  TempDir dir;
  struct Case {
    const char* what;
    std::string header;
    std::string data;
    uint64_t declared = 0;
  };
  const std::string ok_entry =
      R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  const std::vector<Case> cases = {
      {"header longer than the file", "{}", "", 1000},
      {"header over the size limit", "{}", "",
       SafetensorsFile::kMaxHeaderBytes + 1},
      {"not JSON", "{\"a\":", ""},
      {"not an object", "[1,2]", ""},
      {"missing fields", R"({"a":{"dtype":"F32"}})", ""},
      {"unknown dtype",
       R"({"a":{"dtype":"F99","shape":[1],"data_offsets":[0,4]}})", Bytes(4)},
      {"offsets past the data",
       R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", Bytes(4)},
      {"reversed offsets",
       R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}})", Bytes(4)},
      {"bytes disagree with shape",
       R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", Bytes(8)},
      {"negative dimension",
       R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", Bytes(8)},
      {"overflowing shape",
       R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]}})",
       Bytes(8)},
      {"overlapping tensors",
       "{" + ok_entry +
           R"(,"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
       Bytes(8)},
      {"a gap before a tensor",
       R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", Bytes(8)},
      {"data left over", "{" + ok_entry + "}", Bytes(12)},
      {"metadata not strings", R"({"__metadata__":{"k":1}})", ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    WriteSafetensors(dir.File("bad.safetensors"), c.header, c.data, c.declared);
    auto file = SafetensorsFile::Open(dir.File("bad.safetensors"));
    CHECK(file.status().code() == StatusCode::kInvalidArgument);
  }
  std::ofstream(dir.File("short.safetensors")) << "abc";
  CHECK(SafetensorsFile::Open(dir.File("short.safetensors")).status().code() ==
        StatusCode::kInvalidArgument);
  WriteSafetensors(
      dir.File("f8.safetensors"),
      R"({"a":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})",
      Bytes(1));
  CHECK(SafetensorsFile::Open(dir.File("f8.safetensors")).status().code() ==
        StatusCode::kNotSupported);
  CHECK(SafetensorsFile::Open(dir.File("absent.safetensors")).status().code() ==
        StatusCode::kNotFound);
}

TEST_CASE("a sharded checkpoint is read through its index") {
  auto w = CheckpointWeights::Open(testing::FixtureDir() + "/qwen2-tiny");
  REQUIRE_MESSAGE(w.ok(), w.status().ToString());
  CHECK(w->Files().size() == 3);
  auto embed = w->Get("model.embed_tokens.weight");
  REQUIRE(embed.ok());
  CHECK((*embed)->dtype == DType::kF32);
  CHECK((*embed)->shape[1] == 64);
  CHECK(w->Get("model.layers.9.mlp.up_proj.weight").status().code() ==
        StatusCode::kNotFound);
  CHECK(w->FileOf("model.norm.weight") != nullptr);
}

TEST_CASE("an index naming a missing tensor is invalid input") {
  TempDir dir;
  WriteSafetensors(dir.File("s1.safetensors"),
                   R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                   Bytes(4));
  std::ofstream(dir.File("model.safetensors.index.json"))
      << R"({"weight_map":{"a":"s1.safetensors","b":"s1.safetensors"}})";
  CHECK(CheckpointWeights::Open(dir.path()).status().code() ==
        StatusCode::kInvalidArgument);
  std::ofstream(dir.File("model.safetensors.index.json"))
      << R"({"weight_map":{"a":"../s1.safetensors"}})";
  CHECK(CheckpointWeights::Open(dir.path()).status().code() ==
        StatusCode::kInvalidArgument);
  TempDir empty;
  CHECK(CheckpointWeights::Open(empty.path()).status().code() ==
        StatusCode::kNotFound);
}

TEST_CASE("decoder configs are read in both the old and the new layout") {
  auto qwen =
      DecoderConfig::FromCheckpoint(testing::FixtureDir() + "/qwen2-tiny");
  REQUIRE_MESSAGE(qwen.ok(), qwen.status().ToString());
  CHECK(qwen->model_type == "qwen2");
  CHECK(qwen->rope.theta == 1000000.0);
  CHECK(qwen->qkv_bias);
  CHECK(qwen->tie_word_embeddings);
  CHECK(qwen->eos_token_ids.size() == 2);  // from generation_config.json
  auto llama =
      DecoderConfig::FromCheckpoint(testing::FixtureDir() + "/llama-tiny");
  REQUIRE_MESSAGE(llama.ok(), llama.status().ToString());
  CHECK(llama->head_dim == 24);
  CHECK(llama->num_kv_heads == 1);
  CHECK(llama->rope.type == "llama3");
  CHECK(llama->rope.theta == 500000.0);
  CHECK_FALSE(llama->tie_word_embeddings);
}

TEST_CASE("unsupported or inconsistent configs are refused with the reason") {
  const std::string base =
      R"("vocab_size":10,"hidden_size":8,"intermediate_size":16,"num_hidden_layers":1,"num_attention_heads":2)";
  CHECK(DecoderConfig::FromJson("{\"model_type\":\"gpt2\"," + base + "}")
            .status()
            .code() == StatusCode::kNotSupported);
  CHECK(DecoderConfig::FromJson(
            "{\"model_type\":\"llama\",\"hidden_act\":\"gelu\"," + base + "}")
            .status()
            .code() == StatusCode::kNotSupported);
  CHECK(
      DecoderConfig::FromJson(
          "{\"model_type\":\"qwen2\",\"use_sliding_window\":true," + base + "}")
          .status()
          .code() == StatusCode::kNotSupported);
  CHECK(DecoderConfig::FromJson("{\"model_type\":\"llama\",\"rope_scaling\":{"
                                "\"rope_type\":\"yarn\"}," +
                                base + "}")
            .status()
            .code() == StatusCode::kNotSupported);
  CHECK(DecoderConfig::FromJson(
            "{\"model_type\":\"llama\",\"num_key_value_heads\":3," + base + "}")
            .status()
            .code() == StatusCode::kInvalidArgument);
  CHECK(DecoderConfig::FromJson("{\"model_type\":\"llama\"}").status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(DecoderConfig::FromJson(
            "{\"model_type\":\"llama\",\"hidden_size\":\"x\"}")
            .status()
            .code() == StatusCode::kInvalidArgument);
  CHECK(
      DecoderConfig::FromJson("{\"model_type\":\"llama\"," + base + "}").ok());
}

}  // namespace
}  // namespace skilldb::models
