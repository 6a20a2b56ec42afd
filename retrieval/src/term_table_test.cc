#include "term_table.h"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <unordered_map>

namespace skilldb::retrieval::internal {
namespace {

TEST_CASE("TermTable gives dense ids in first-seen order through many growths") {
  TermTable table;
  std::unordered_map<std::string, uint32_t> want;
  std::vector<std::string> by_id;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 300000; ++i) {
    // Short terms collide in their low hash bits often; long ones share
    // prefixes; some are empty or exactly 8 bytes.
    std::string term;
    const int len = static_cast<int>(rng() % 20);
    for (int k = 0; k < len; ++k) term.push_back(static_cast<char>('a' + rng() % 4));
    auto [it, inserted] = want.emplace(term, static_cast<uint32_t>(by_id.size()));
    if (inserted) by_id.push_back(term);
    const uint32_t id = table.Intern(term);
    REQUIRE(id == it->second);
  }
  REQUIRE(table.size() == by_id.size());
  for (uint32_t id = 0; id < by_id.size(); ++id) {
    CHECK(table.Term(id) == by_id[id]);
    CHECK(table.Intern(by_id[id]) == id);
  }
  CHECK(table.size() == by_id.size());
}

}  // namespace
}  // namespace skilldb::retrieval::internal
