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

namespace skilldb {
namespace {

struct Field {
  const char* name;
  int FieldWeights::*weight;
};
constexpr Field kFields[] = {
    {"title", &FieldWeights::title}, {"summary", &FieldWeights::summary},
    {"body", &FieldWeights::body},   {"tags", &FieldWeights::tags},
    {"ops", &FieldWeights::ops},     {"code", &FieldWeights::code},
};

}  // namespace

Status ValidateFieldWeights(const FieldWeights& weights) {
  bool any = false;
  for (const Field& f : kFields) {
    const int w = weights.*(f.weight);
    if (w < 0 || w > 16) {
      return Status::InvalidArgument(std::string("field weight '") + f.name +
                                     "' must be in [0, 16], got " +
                                     std::to_string(w));
    }
    any = any || w > 0;
  }
  if (!any)
    return Status::InvalidArgument(
        "at least one field weight must be positive");
  return Status::Ok();
}

std::string FormatFieldWeights(const FieldWeights& weights) {
  std::string out;
  for (const Field& f : kFields) {
    if (!out.empty()) out += ",";
    out += f.name;
    out += "=" + std::to_string(weights.*(f.weight));
  }
  return out;
}

Result<FieldWeights> ParseFieldWeights(std::string_view text) {
  FieldWeights weights;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(pos, end - pos);
    pos = end + 1;
    const size_t eq = item.find('=');
    const Field* field = nullptr;
    for (const Field& f : kFields) {
      if (eq != std::string_view::npos && item.substr(0, eq) == f.name)
        field = &f;
    }
    int value = -1;
    if (field != nullptr) {
      auto [p, ec] = std::from_chars(item.data() + eq + 1,
                                     item.data() + item.size(), value);
      if (ec != std::errc() || p != item.data() + item.size()) field = nullptr;
    }
    if (field == nullptr) {
      return Status::InvalidArgument(
          "bad field weight '" + std::string(item) +
          "' (expected NAME=INTEGER with NAME one of title, summary, body, "
          "tags, ops, code)");
    }
    weights.*(field->weight) = value;
  }
  SKILLDB_RETURN_IF_ERROR(ValidateFieldWeights(weights));
  return weights;
}

}  // namespace skilldb
