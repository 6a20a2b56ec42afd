#include "analysis.h"

#include <algorithm>
#include <charconv>

namespace skilldb::internal {

namespace {

// The first 8 bytes of a term as a big-endian number, zero-padded. Terms
// hold no byte below 0x20, so comparing keys, then the bytes after the
// eighth, is byte order: most comparisons never touch the strings.
uint64_t PrefixKey(std::string_view t) {
  uint64_t key = 0;
  const size_t n = std::min<size_t>(t.size(), 8);
  for (size_t i = 0; i < n; ++i) {
    key |= static_cast<uint64_t>(static_cast<unsigned char>(t[i])) << (56 - 8 * i);
  }
  return key;
}

struct Token {
  uint64_t key;
  uint32_t index;  // into the analyzed terms
  uint32_t weight;
};

}  // namespace

uint32_t AnalyzeSkill(const retrieval::Analyzer& analyzer,
                      const FieldWeights& weights, const Skill& skill,
                      TermFreqs* freqs) {
  std::vector<std::string> terms;
  std::vector<Token> tokens;
  uint32_t length = 0;
  auto add = [&](int weight, std::string_view text) {
    if (weight <= 0 || text.empty()) return;
    const size_t first = terms.size();
    analyzer.Analyze(text, &terms);
    for (size_t i = first; i < terms.size(); ++i) {
      tokens.push_back({PrefixKey(terms[i]), static_cast<uint32_t>(i),
                        static_cast<uint32_t>(weight)});
    }
    length += static_cast<uint32_t>((terms.size() - first) * weight);
  };
  // Fields are analyzed separately: analysis never joins words across a
  // field boundary, so this equals analyzing the space-joined text.
  add(weights.title, skill.title);
  add(weights.summary, skill.summary);
  add(weights.body, skill.body);
  for (const auto& tag : skill.tags) add(weights.tags, tag);
  for (const auto& op : skill.ops) add(weights.ops, op);
  add(weights.code, skill.code);
  auto rest = [&](const Token& t) {
    const std::string& s = terms[t.index];
    return s.size() > 8 ? std::string_view(s).substr(8) : std::string_view();
  };
  std::sort(tokens.begin(), tokens.end(), [&](const Token& a, const Token& b) {
    if (a.key != b.key) return a.key < b.key;
    return rest(a) < rest(b);
  });
  freqs->clear();
  for (size_t i = 0; i < tokens.size();) {
    size_t j = i;
    uint32_t tf = 0;
    for (; j < tokens.size() && tokens[j].key == tokens[i].key &&
           rest(tokens[j]) == rest(tokens[i]);
         ++j) {
      tf += tokens[j].weight;
    }
    freqs->emplace_back(std::move(terms[tokens[i].index]), tf);
    i = j;
  }
  return length;
}

}  // namespace skilldb::internal
