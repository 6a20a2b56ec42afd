#include "skilldb/rerank/cache.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "skilldb/rerank/fake_backbone.h"

namespace skilldb::rerank {
namespace {

using testing::MakeHit;

Judgment Good(std::vector<double> scores) {
  Judgment j;
  j.scores = std::move(scores);
  j.generations.push_back(
      GenerationRecord{"m", {}, "", {}, "[1] > [2]", {}, {}});
  return j;
}

std::string Key(const std::string& query, const std::vector<Hit>& hits,
                const std::string& model = "m", Version version = 7) {
  return CacheKey("listwise", model, "fp", query, hits, version);
}

TEST_CASE("a kept judgment answers the same key without computing again") {
  RerankCache cache;
  int computed = 0;
  auto compute = [&] {
    ++computed;
    return Good({1.0, 0.5});
  };
  const std::string key = Key("q", {MakeHit("a", 2, "", 3), MakeHit("b", 1)});
  auto first = cache.GetOrCompute(key, compute);
  auto second = cache.GetOrCompute(key, compute);
  CHECK(computed == 1);
  CHECK(!first.from_cache);
  CHECK(first.judgment.generations.size() == 1);
  CHECK(second.from_cache);
  CHECK(second.judgment.scores == std::vector<double>{1.0, 0.5});
  CHECK(second.judgment.generations.empty());
  CHECK(cache.Stats().hits == 1);
  CHECK(cache.Stats().misses == 1);
}

TEST_CASE(
    "keys differ by query, candidate order, revision, model and "
    "version") {
  const std::vector<Hit> ab = {MakeHit("a", 2, "", 3), MakeHit("b", 1, "", 4)};
  const std::vector<Hit> ba = {ab[1], ab[0]};
  std::vector<Hit> revised = ab;
  revised[0].revision = 9;
  CHECK(Key("q", ab) != Key("q2", ab));
  CHECK(Key("q", ab) != Key("q", ba));
  CHECK(Key("q", ab) != Key("q", revised));
  CHECK(Key("q", ab) != Key("q", ab, "other-model"));
  CHECK(CacheKey("listwise", "m", "fp", "q", ab, 1) !=
        CacheKey("pointwise", "m", "fp", "q", ab, 1));
  CHECK(CacheKey("listwise", "m", "fp", "q", ab, 1) !=
        CacheKey("listwise", "m", "fp2", "q", ab, 1));
  // With revisions known the library version does not matter (the same
  // content at a later version reuses the judgment); without them it does.
  CHECK(Key("q", ab, "m", 7) == Key("q", ab, "m", 8));
  std::vector<Hit> unrevised = {MakeHit("a", 2), MakeHit("b", 1)};
  CHECK(Key("q", unrevised, "m", 7) != Key("q", unrevised, "m", 8));
  // Length prefixes: ("ab", "c") and ("a", "bc") are different keys.
  CHECK(CacheKey("ab", "c", "", "", {}, 0) !=
        CacheKey("a", "bc", "", "", {}, 0));
}

TEST_CASE("a failed judgment is not kept, so the next caller asks again") {
  RerankCache cache;
  int computed = 0;
  auto fail = [&] {
    ++computed;
    Judgment j;
    j.status = Status::Unavailable("server down");
    return j;
  };
  cache.GetOrCompute("k", fail);
  auto again = cache.GetOrCompute("k", fail);
  CHECK(computed == 2);
  CHECK(!again.from_cache);
  CHECK(cache.Stats().entries == 0);
}

TEST_CASE(
    "the cache drops the least recently used judgment past its "
    "entry bound") {
  RerankCache cache(CacheOptions{.max_entries = 2});
  auto compute = [] { return Good({1.0}); };
  cache.GetOrCompute("a", compute);
  cache.GetOrCompute("b", compute);
  cache.GetOrCompute("a", compute);  // a is now the most recent
  cache.GetOrCompute("c", compute);  // evicts b
  CHECK(cache.Stats().entries == 2);
  CHECK(cache.Stats().evictions == 1);
  CHECK(cache.GetOrCompute("a", compute).from_cache);
  CHECK(!cache.GetOrCompute("b", compute).from_cache);
}

TEST_CASE("the cache stays within its byte bound") {
  RerankCache cache(CacheOptions{.max_entries = 1000, .max_bytes = 2000});
  for (int i = 0; i < 50; ++i) {
    cache.GetOrCompute(std::string(100, 'a' + i % 26) + std::to_string(i),
                       [] { return Good(std::vector<double>(10, 0.5)); });
  }
  CHECK(cache.Stats().bytes <= 2000);
  CHECK(cache.Stats().entries > 0);
  CHECK(cache.Stats().entries < 50);
}

TEST_CASE("concurrent callers of one key share a single computation") {
  RerankCache cache;
  std::atomic<int> computed{0};
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  auto compute = [&] {
    ++computed;
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return release; });
    return Good({0.25, 0.75});
  };
  constexpr int kThreads = 8;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  std::atomic<int> from_cache{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      auto r = cache.GetOrCompute("same", compute);
      if (r.from_cache) ++from_cache;
      CHECK(r.judgment.scores == std::vector<double>{0.25, 0.75});
    });
  }
  // Wait until every other thread is either computing or waiting.
  while (cache.Stats().misses + cache.Stats().joins < kThreads) {
    std::this_thread::yield();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  for (auto& t : threads) t.join();
  CHECK(computed == 1);
  CHECK(from_cache == kThreads - 1);
  CHECK(cache.Stats().joins == kThreads - 1);
}

TEST_CASE("a computation that throws releases its waiters with an error") {
  RerankCache cache;
  auto r = cache.GetOrCompute(
      "k", []() -> Judgment { throw std::runtime_error("boom"); });
  CHECK(r.judgment.status.code() == StatusCode::kInternal);
  CHECK(cache.Stats().entries == 0);
}

}  // namespace
}  // namespace skilldb::rerank
