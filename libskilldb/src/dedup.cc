#include "dedup.h"

#include <algorithm>
#include <cstring>

namespace skilldb::internal {
namespace {

// FNV-1a, 64 bit, with a seed: stable across builds and platforms (the
// hashes are stored), unlike std::hash.
uint64_t Fnv1a(std::string_view s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// Lower-cases ASCII and turns every run of whitespace into one space.
void AppendNormalized(std::string* out, std::string_view text) {
  bool space = true;  // drop leading whitespace
  for (char c : text) {
    const bool ws = c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
                    c == '\f' || c == '\v';
    if (ws) {
      space = true;
      continue;
    }
    if (space && !out->empty() && out->back() != '\x1f') out->push_back(' ');
    space = false;
    out->push_back((c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c);
  }
}

std::string NormalizedContent(const Skill& s) {
  std::string text;
  for (std::string_view field :
       {std::string_view(s.title), std::string_view(s.summary),
        std::string_view(s.body), std::string_view(s.code)}) {
    AppendNormalized(&text, field);
    text.push_back('\x1f');
  }
  for (const auto* list : {&s.tags, &s.ops}) {
    std::vector<std::string> sorted;
    for (const auto& item : *list) {
      std::string n;
      AppendNormalized(&n, item);
      sorted.push_back(n);
    }
    std::sort(sorted.begin(), sorted.end());
    for (const auto& item : sorted) {
      text += item;
      text.push_back('\x1e');
    }
    text.push_back('\x1f');
  }
  return text;
}

}  // namespace

std::string ContentHash(const Skill& skill) {
  const std::string text = NormalizedContent(skill);
  const uint64_t parts[2] = {Fnv1a(text, 0),
                             Fnv1a(text, 0x9e3779b97f4a7c15ull)};
  std::string out(16, '\0');
  std::memcpy(out.data(), parts, 16);
  return out;
}

std::vector<uint64_t> Shingles(const Skill& skill) {
  std::string text;
  for (std::string_view field :
       {std::string_view(skill.title), std::string_view(skill.summary),
        std::string_view(skill.body), std::string_view(skill.code)}) {
    AppendNormalized(&text, field);
    text.push_back(' ');
  }
  std::vector<std::string_view> words;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = text.find_first_of(" \x1f", pos);
    const size_t stop = end == std::string::npos ? text.size() : end;
    if (stop > pos)
      words.push_back(std::string_view(text).substr(pos, stop - pos));
    pos = stop + 1;
  }
  std::vector<uint64_t> out;
  if (words.size() < 3) {
    std::string joined;
    for (auto w : words) joined.append(w).push_back(' ');
    if (!joined.empty()) out.push_back(Fnv1a(joined, 3));
    return out;
  }
  for (size_t i = 0; i + 2 < words.size(); ++i) {
    uint64_t h = Fnv1a(words[i], 3);
    h = Fnv1a(words[i + 1], h);
    h = Fnv1a(words[i + 2], h);
    out.push_back(h);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double Jaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  if (a.empty() && b.empty()) return 1.0;
  size_t i = 0, j = 0, common = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == b[j]) {
      ++common;
      ++i;
      ++j;
    } else if (a[i] < b[j]) {
      ++i;
    } else {
      ++j;
    }
  }
  return static_cast<double>(common) /
         static_cast<double>(a.size() + b.size() - common);
}

}  // namespace skilldb::internal
