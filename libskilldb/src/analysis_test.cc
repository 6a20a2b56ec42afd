#include "analysis.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>

namespace skilldb::internal {
namespace {

// The definition, written the slow way: every field's terms `weight` times,
// counted in a std::map (byte order).
TermFreqs Naive(const retrieval::Analyzer& a, const FieldWeights& w, const Skill& s,
                uint32_t* length) {
  std::map<std::string, uint32_t> counts;
  *length = 0;
  auto add = [&](int weight, const std::string& text) {
    if (weight <= 0) return;  // a field of weight 0 contributes no terms
    for (const std::string& t : a.Terms(text)) {
      counts[t] += static_cast<uint32_t>(weight);
      *length += static_cast<uint32_t>(weight);
    }
  };
  add(w.title, s.title);
  add(w.summary, s.summary);
  add(w.body, s.body);
  for (const auto& t : s.tags) add(w.tags, t);
  for (const auto& o : s.ops) add(w.ops, o);
  add(w.code, s.code);
  return TermFreqs(counts.begin(), counts.end());
}

TEST_CASE("AnalyzeSkill counts weighted terms in byte order, like the definition") {
  auto analyzer = retrieval::MakeAnalyzer(retrieval::AnalyzerKind::kWhitespace);
  std::mt19937 rng(7);
  // Terms that share 8-byte prefixes, are exactly 8 bytes, or end inside the
  // first 8: the cases the prefix-key sort must order and group correctly.
  const std::vector<std::string> vocab = {
      "a", "ab", "abc", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghij", "abcdefgi",
      "abcdefgh~", "tile", "tiles", "tiled", "shared-memory", "shared-mem", "shared-me",
      "zzzzzzzzzzzz", "zzzzzzzz", "~", "0123456789", "01234567"};
  auto text = [&](int n) {
    std::string t;
    for (int i = 0; i < n; ++i) t += vocab[rng() % vocab.size()] + (rng() % 3 ? " " : "\n");
    return t;
  };
  for (int round = 0; round < 200; ++round) {
    Skill s;
    s.id = "s" + std::to_string(round);
    s.title = text(rng() % 6);
    s.summary = text(rng() % 12);
    s.body = text(rng() % 80);
    s.tags = {text(1), text(2)};
    s.ops = {text(1)};
    s.code = text(rng() % 40);
    FieldWeights w;
    if (round % 2 == 1) {
      w.title = static_cast<int>(rng() % 5);
      w.tags = static_cast<int>(rng() % 4);
      w.code = static_cast<int>(rng() % 2);
      w.body = 1 + static_cast<int>(rng() % 2);
    }
    TermFreqs got;
    const uint32_t length = AnalyzeSkill(*analyzer, w, s, &got);
    uint32_t want_length = 0;
    const TermFreqs want = Naive(*analyzer, w, s, &want_length);
    CHECK(length == want_length);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i] == want[i]);
    }
  }
}

}  // namespace
}  // namespace skilldb::internal
