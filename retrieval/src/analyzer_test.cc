#include "skilldb/retrieval/analyzer.h"

#include <doctest/doctest.h>

#include <algorithm>

namespace skilldb::retrieval {
namespace {

std::vector<std::string> Terms(AnalyzerKind kind, std::string_view text) {
  return MakeAnalyzer(kind)->Terms(text);
}

bool Has(const std::vector<std::string>& terms, std::string_view t) {
  return std::find(terms.begin(), terms.end(), t) != terms.end();
}

TEST_CASE("analyzer names round-trip and unknown names are rejected") {
  for (auto kind : {AnalyzerKind::kWhitespace, AnalyzerKind::kStandard,
                    AnalyzerKind::kCode}) {
    auto parsed = ParseAnalyzerKind(AnalyzerName(kind));
    REQUIRE(parsed.ok());
    CHECK(*parsed == kind);
  }
  CHECK(ParseAnalyzerKind("porter").status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("whitespace analyzer splits on whitespace and folds ASCII only") {
  auto terms =
      Terms(AnalyzerKind::kWhitespace, "  Shared\tMEMORY\nTiling, ÄB ");
  CHECK(terms == std::vector<std::string>{"shared", "memory", "tiling,", "Äb"});
}

TEST_CASE("whitespace analyzer treats control bytes as separators") {
  auto terms = Terms(AnalyzerKind::kWhitespace,
                     "a\x01"
                     "b\x1f"
                     "c");
  CHECK(terms == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("standard analyzer segments words, folds case and stems") {
  auto terms = Terms(AnalyzerKind::kStandard, "Tiling the K-loops; TILES!");
  CHECK(terms == std::vector<std::string>{"tile", "the", "k", "loop", "tile"});
}

TEST_CASE("standard analyzer folds non-ASCII case") {
  auto terms = Terms(AnalyzerKind::kStandard, "ÜBER Straße");
  REQUIRE(terms.size() == 2);
  CHECK(terms[0] == "über");
  CHECK(terms[1] == "strass");  // ß folds to ss, then stemmed
}

TEST_CASE("standard analyzer keeps identifiers whole") {
  auto terms = Terms(AnalyzerKind::kStandard, "__shfl_down_sync sm_90");
  CHECK(Has(terms, "__shfl_down_sync"));
  CHECK(Has(terms, "sm_90"));
  CHECK_FALSE(Has(terms, "shfl"));
}

TEST_CASE("code analyzer splits snake_case and keeps the joined identifier") {
  auto terms = Terms(AnalyzerKind::kCode, "__shfl_down_sync(mask, v, 16)");
  CHECK(Has(terms, "shfl_down_sync"));
  CHECK(Has(terms, "shfl"));
  CHECK(Has(terms, "down"));
  CHECK(Has(terms, "sync"));
  CHECK(Has(terms, "mask"));
}

TEST_CASE("code analyzer splits camelCase, acronyms and digits") {
  auto terms = Terms(AnalyzerKind::kCode, "cudaMemcpyAsync HTTPServer float4");
  CHECK(Has(terms, "cudamemcpyasync"));
  CHECK(Has(terms, "cuda"));
  CHECK(Has(terms, "async"));
  CHECK(Has(terms, "httpserver"));
  CHECK(Has(terms, "http"));
  CHECK(Has(terms, "server"));
  CHECK(Has(terms, "float4"));
  CHECK(Has(terms, "float"));
  CHECK(Has(terms, "4"));
}

TEST_CASE("code analyzer keeps sm_90 and dotted names as terms") {
  auto terms = Terms(AnalyzerKind::kCode, "sm_90 cp.async tl.dot");
  CHECK(Has(terms, "sm_90"));
  CHECK(Has(terms, "sm"));
  CHECK(Has(terms, "90"));
  CHECK(Has(terms, "cp.async"));
  CHECK(Has(terms, "async"));
  CHECK(Has(terms, "tl.dot"));
  CHECK(Has(terms, "dot"));
}

TEST_CASE("code analyzer stems identifier parts so prose queries match") {
  auto doc = Terms(AnalyzerKind::kCode, "load_tiles");
  auto query = Terms(AnalyzerKind::kCode, "tiling");
  REQUIRE(query.size() == 1);
  CHECK(Has(doc, query[0]));
}

TEST_CASE("code analyzer gives plain words the standard analysis") {
  CHECK(Terms(AnalyzerKind::kCode, "Reductions over warps") ==
        Terms(AnalyzerKind::kStandard, "Reductions over warps"));
}

TEST_CASE("analyzers skip invalid UTF-8 without failing") {
  for (auto kind : {AnalyzerKind::kStandard, AnalyzerKind::kCode}) {
    auto terms = Terms(kind, "good \xff\xfe bytes");
    CHECK(Has(terms, "good"));
  }
}

TEST_CASE("terms longer than the limit are dropped") {
  std::string huge(kMaxTermBytes + 1, 'a');
  CHECK(Terms(AnalyzerKind::kWhitespace, huge + " ok") ==
        std::vector<std::string>{"ok"});
}

}  // namespace
}  // namespace skilldb::retrieval
