#include "df_deltas.h"

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace skilldb::internal {
namespace {

std::vector<DfDeltas::Entry> Reference(
    const std::vector<DfDeltas::Entry>& adds) {
  std::map<std::string, int64_t> sums;
  for (const auto& [term, delta] : adds) sums[term] += delta;
  std::vector<DfDeltas::Entry> moved;
  for (const auto& [term, delta] : sums) {
    if (delta != 0) moved.emplace_back(term, delta);
  }
  return moved;
}

std::string Term(int i) { return "t" + std::to_string(i); }

TEST_CASE("DfDeltas sums a sorted run, leaving out terms that did not move") {
  DfDeltas deltas;
  deltas.Add("a", 3);
  deltas.Add("b", 1);
  deltas.Add("b", -1);  // repeated in a run: one entry, which nets to zero
  deltas.Add("c", 2);
  CHECK(deltas.entries() == 3);
  const auto moved = deltas.TakeMoved();
  REQUIRE(moved.size() == 2);
  CHECK(moved[0] == DfDeltas::Entry{"a", 3});
  CHECK(moved[1] == DfDeltas::Entry{"c", 2});
  CHECK(deltas.entries() == 0);
  CHECK(deltas.TakeMoved().empty());
}

TEST_CASE("DfDeltas over runs and ended documents equals a map of sums, "
          "within its memory bound") {
  // Segment runs (every third term, in order) interleaved with ended
  // documents (-1 for random terms), over 30000 distinct terms and far more
  // entries than kMinFold, so the accumulator folds many times.
  std::mt19937 rng(7);
  std::vector<DfDeltas::Entry> adds;
  DfDeltas deltas;
  size_t most = 0;
  auto add = [&](const std::string& term, int64_t delta) {
    adds.emplace_back(term, delta);
    deltas.Add(term, delta);
    most = std::max(most, deltas.entries());
  };
  constexpr int kTerms = 30000;
  std::vector<std::string> sorted_terms;
  for (int i = 0; i < kTerms; ++i) sorted_terms.push_back(Term(i));
  std::sort(sorted_terms.begin(), sorted_terms.end());
  for (int round = 0; round < 30; ++round) {
    for (size_t i = round % 3; i < sorted_terms.size(); i += 3) {
      add(sorted_terms[i], 1 + static_cast<int64_t>(rng() % 4));
    }
    for (int j = 0; j < 20000; ++j) add(Term(static_cast<int>(rng() % kTerms)), -1);
  }
  CHECK(adds.size() > 10 * (3 * kTerms + DfDeltas::kMinFold) / 2);
  CHECK(most <= 3 * kTerms + DfDeltas::kMinFold + 1);
  CHECK(deltas.TakeMoved() == Reference(adds));
}

}  // namespace
}  // namespace skilldb::internal
