#include "kv_buffer.h"

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>

namespace skilldb::internal {
namespace {

TEST_CASE("KvBuffer keeps every pair across blocks and sorts them by key") {
  // Pairs of every size up to past a block (one gets a block of its own),
  // in random order; sorted, they read back as a std::map of them.
  std::mt19937 rng(3);
  std::map<std::string, std::string> expected;
  KvBuffer buffer;
  for (int i = 0; i < 3000; ++i) {
    std::string key = "k" + std::to_string(rng());
    const size_t size = i == 1500 ? KvBuffer::kBlockBytes + 10 : rng() % 5000;
    std::string value(size, static_cast<char>('a' + i % 26));
    if (!expected.emplace(key, value).second) continue;
    buffer.Add(key, value);
  }
  buffer.Add("", "empty key");  // sorts first
  expected.emplace("", "empty key");
  REQUIRE(buffer.size() == expected.size());
  uint64_t bytes = 0;
  for (const auto& [k, v] : expected) bytes += k.size() + v.size();
  CHECK(buffer.data_bytes() == bytes);
  buffer.SortByKey();
  size_t i = 0;
  for (const auto& [k, v] : expected) {
    CHECK(buffer.key(i) == k);
    CHECK(buffer.value(i) == v);
    ++i;
  }
  buffer.Clear();
  CHECK(buffer.empty());
  buffer.Add("again", "after clear");
  CHECK(buffer.key(0) == "again");
  CHECK(buffer.value(0) == "after clear");
}

}  // namespace
}  // namespace skilldb::internal
