#include "skilldb/rerank/permutation.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
#include "build_paths.h"

namespace skilldb::rerank {
namespace {

// The 1-based order a parse produced.
std::vector<size_t> Ids(const ParsedPermutation& p) {
  std::vector<size_t> ids;
  for (size_t i : p.order) ids.push_back(i + 1);
  return ids;
}

std::vector<size_t> Parse(std::string_view answer, size_t n) {
  auto p = ParsePermutation(answer, n);
  REQUIRE(p.ok());
  return Ids(*p);
}

std::string FromHex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

TEST_CASE("a RankGPT answer is read as the permutation it writes") {
  auto p = ParsePermutation("[3] > [1] > [2]", 3);
  REQUIRE(p.ok());
  CHECK(Ids(*p) == std::vector<size_t>{3, 1, 2});
  CHECK(p->ranked == 3);
  CHECK(p->missing == 0);
  CHECK(p->format == "chain");
}

TEST_CASE("ids the answer leaves out follow in the order they were shown") {
  auto p = ParsePermutation("[5] > [3]", 6);
  REQUIRE(p.ok());
  CHECK(Ids(*p) == std::vector<size_t>{5, 3, 1, 2, 4, 6});
  CHECK(p->ranked == 2);
  CHECK(p->missing == 4);
}

TEST_CASE("repeated and out-of-range ids are dropped and counted") {
  auto p = ParsePermutation("[2] > [9] > [2] > [0] > [1]", 3);
  REQUIRE(p.ok());
  CHECK(Ids(*p) == std::vector<size_t>{2, 1, 3});
  CHECK(p->duplicates == 1);
  CHECK(p->out_of_range == 2);
}

TEST_CASE("prose that mentions ids around the ranking does not reorder it") {
  CHECK(Parse("I think [1] and [2] are weaker. Ranking: [3] > [2] > [1]. "
              "Note [1] is off-topic.",
              3) == std::vector<size_t>{3, 2, 1});
}

TEST_CASE("only the text after the model's reasoning is read") {
  CHECK(Parse("<think>[1] > [2] > [3]</think>[2] > [3] > [1]", 3) ==
        std::vector<size_t>{2, 3, 1});
  auto unfinished = ParsePermutation("<think>[1] > [2] > [3]", 3);
  CHECK(unfinished.status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("an answer without a ranking is refused, never guessed") {
  CHECK(!ParsePermutation("I cannot help with that.", 4).ok());
  CHECK(!ParsePermutation("There are 4 passages.", 4).ok());
  CHECK(!ParsePermutation("[7] > [8]", 3).ok());
  CHECK(!ParsePermutation("[1] > [2]", 0).ok());
}

TEST_CASE("numbered lists are read by their ids, not their line numbers") {
  CHECK(Parse("1. [3] tiling\n2. [1] shuffles\n3. [2] loads", 3) ==
        std::vector<size_t>{3, 1, 2});
  CHECK(Parse("1. 2\n2. 3\n3. 1", 3) == std::vector<size_t>{2, 3, 1});
}

TEST_CASE("bracketed ids are preferred to bare numbers") {
  CHECK(Parse("Of 3 options: 1 > 2 > 3 is wrong; use [3] > [2] > [1]", 3) ==
        std::vector<size_t>{3, 2, 1});
}

TEST_CASE("an answer is read only up to its byte bound") {
  std::string answer = std::string(100, 'x') + " [2] > [1]";
  CHECK(!ParsePermutation(answer, 2, /*max_answer_bytes=*/50).ok());
  CHECK(ParsePermutation(answer, 2, /*max_answer_bytes=*/200).ok());
}

TEST_CASE("ids with more digits than any window holds are out of range") {
  auto p = ParsePermutation("[18446744073709551617] > [1]", 2);
  REQUIRE(p.ok());
  CHECK(p->out_of_range == 1);
  CHECK(Ids(*p) == std::vector<size_t>{1, 2});
}

TEST_CASE("every committed adversarial answer parses to its expected order") {
  std::ifstream in(std::string(SKILLDB_RERANK_TESTDATA) + "/adversarial_outputs.jsonl");
  REQUIRE(in.good());
  std::string line;
  int cases = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line);
    const std::string answer = j.contains("answer_hex")
                                   ? FromHex(j["answer_hex"].get<std::string>())
                                   : j["answer"].get<std::string>();
    const size_t n = j["n"].get<size_t>();
    CAPTURE(j["name"].get<std::string>());
    auto p = ParsePermutation(answer, n);
    if (j["expect"].is_null()) {
      CHECK(!p.ok());
    } else {
      REQUIRE(p.ok());
      CHECK(Ids(*p) == j["expect"].get<std::vector<size_t>>());
      CHECK(p->order.size() == n);
    }
    ++cases;
  }
  CHECK(cases >= 50);
}

TEST_CASE(
    "random bytes never crash the parser and always yield a permutation "
    "or a refusal") {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const std::string alphabet =
      "[]()#>, 0123456789\n.-<think>/passage\xE2\x86\x92";
  for (int round = 0; round < 2000; ++round) {
    std::string answer;
    const size_t len = next() % 120;
    for (size_t i = 0; i < len; ++i) {
      answer += round % 3 == 0 ? static_cast<char>(next() & 0xFF)
                               : alphabet[next() % alphabet.size()];
    }
    const size_t n = 1 + next() % 25;
    auto p = ParsePermutation(answer, n);
    if (!p.ok()) continue;
    std::vector<size_t> sorted = p->order;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < n; ++i) REQUIRE(sorted[i] == i);
    CHECK(p->ranked + p->missing == n);
  }
}

}  // namespace
}  // namespace skilldb::rerank
