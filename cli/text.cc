#include "text.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace skilldb::cli {
namespace {

// Optimal string alignment distance (Levenshtein plus adjacent swaps).
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1,
                                     std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::vector<std::string> NearestNames(std::string_view word,
                                      const std::vector<std::string>& names) {
  constexpr size_t kMaxWord = 64;  // longer is no typo of a short name
  if (word.empty() || word.size() > kMaxWord) return {};
  std::vector<size_t> distance;
  size_t best = 3;  // more than 2 edits is not a typo
  for (const std::string& name : names) {
    distance.push_back(EditDistance(word, name));
    if (distance.back() < word.size()) best = std::min(best, distance.back());
  }
  std::vector<std::string> nearest;
  for (size_t i = 0; i < names.size(); ++i) {
    const bool close =
        distance[i] == best && best <= 2 && distance[i] < word.size();
    const bool prefix = word.size() >= 3 && names[i].starts_with(word);
    if ((close || prefix) &&
        std::find(nearest.begin(), nearest.end(), names[i]) == nearest.end()) {
      nearest.push_back(names[i]);
    }
  }
  return nearest;
}

std::string JoinAlternatives(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += "'" + names[i] + "'";
  }
  return out;
}

}  // namespace skilldb::cli
