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
  std::vector<std::string> chunk;
  std::vector<std::string_view> views;
  std::vector<uint32_t> ids;
  for (int i = 0; i < 300000;) {
    // Short terms collide in their low hash bits often; long ones share
    // prefixes; some are empty or exactly 8 bytes. Whole chunks (repeats
    // inside a chunk included) or one term at a time.
    chunk.assign(1 + rng() % 200, "");
    for (std::string& term : chunk) {
      const int len = static_cast<int>(rng() % 20);
      for (int k = 0; k < len; ++k) term.push_back(static_cast<char>('a' + rng() % 4));
    }
    i += static_cast<int>(chunk.size());
    const bool many = rng() % 2 == 0;
    views.assign(chunk.begin(), chunk.end());
    ids.assign(chunk.size(), 0);
    if (many) table.InternMany(views.data(), views.size(), ids.data());
    for (size_t c = 0; c < chunk.size(); ++c) {
      auto [it, inserted] = want.emplace(chunk[c], static_cast<uint32_t>(by_id.size()));
      if (inserted) by_id.push_back(chunk[c]);
      if (!many) table.InternMany(&views[c], 1, &ids[c]);
      REQUIRE(ids[c] == it->second);
    }
  }
  REQUIRE(table.size() == by_id.size());
  for (uint32_t id = 0; id < by_id.size(); ++id) {
    CHECK(table.Term(id) == by_id[id]);
    const std::string_view view = by_id[id];
    uint32_t again = 0;
    table.InternMany(&view, 1, &again);
    CHECK(again == id);
  }
  CHECK(table.size() == by_id.size());
}

}  // namespace
}  // namespace skilldb::retrieval::internal
