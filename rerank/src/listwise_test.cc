#include "skilldb/rerank/listwise.h"

#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <set>

#include "skilldb/rerank/fake_backbone.h"

namespace skilldb::rerank {
namespace {

using testing::FakeBackbone;
using testing::MakeHit;
using testing::ModelOnly;
using testing::Order;
using testing::TextSample;

// n candidates s1..sn with BM25 scores close together (no strong signal).
RerankRequest ListwiseRequest(size_t n, size_t k = 0) {
  RerankRequest r;
  r.query = "tile the k loop";
  for (size_t i = 0; i < n; ++i) {
    r.candidates.push_back(
        MakeHit("s" + std::to_string(i + 1), 10.0 - 0.01 * i, "", i + 1));
  }
  r.k = k;
  r.version = 5;
  return r;
}

std::unique_ptr<ModelReranker> Make(FakeBackbone* backbone,
                                    const ListwiseOptions& lw = {},
                                    const RerankerOptions& o = ModelOnly()) {
  auto r = MakeListwiseReranker(backbone, lw, o);
  REQUIRE(r.ok());
  return std::move(r).value();
}

// Ranks by the number in the skill id, descending: s9 before s8 ...
double ByIdDescending(const std::string& id) { return std::stod(id.substr(1)); }

TEST_CASE(
    "a listwise answer reorders the candidates and is kept as a "
    "generation") {
  FakeBackbone backbone([](const llm::Chat&, const llm::SamplingOptions&) {
    return TextSample("Ranking: [3] > [1] > [2]");
  });
  auto reranker = Make(&backbone);
  auto r = reranker->Rerank(ListwiseRequest(3));
  REQUIRE(r.ok());
  CHECK(r->applied);
  CHECK(r->mode == "listwise");
  CHECK(r->reason == "");
  CHECK(Order(*r) == std::vector<std::string>{"s3", "s1", "s2"});
  CHECK(r->hits[0].bm25_rank == 3);
  REQUIRE(r->generations.size() == 1);
  CHECK(r->generations[0].model == "fake-model");
  CHECK(r->generations[0].completion == "Ranking: [3] > [1] > [2]");
  CHECK(r->generations[0].prompt_token_ids ==
        std::vector<int32_t>{101, 102, 103});
  CHECK(r->generations[0].prompt.size() == 2);
  CHECK(backbone.last_options().temperature == 0.0);
}

TEST_CASE(
    "ids the model leaves out are appended in BM25 order and named in "
    "the reason") {
  FakeBackbone backbone([](const llm::Chat&, const llm::SamplingOptions&) {
    return TextSample("[4] > [2] > [4]");
  });
  auto r = Make(&backbone)->Rerank(ListwiseRequest(5));
  REQUIRE(r.ok());
  CHECK(r->applied);
  CHECK(Order(*r) == std::vector<std::string>{"s4", "s2", "s1", "s3", "s5"});
  CHECK(r->reason.find("3 ids missing") != std::string::npos);
  CHECK(r->reason.find("1 repeated id") != std::string::npos);
}

TEST_CASE(
    "more candidates than a window are ranked with sliding windows "
    "from the back") {
  std::vector<std::vector<std::string>> windows;
  FakeBackbone backbone(
      [&](const llm::Chat& chat, const llm::SamplingOptions&) {
        std::vector<std::string> ids;
        for (const auto& [n, id] : testing::NumberedIds(chat))
          ids.push_back(id);
        windows.push_back(ids);
        return TextSample(testing::RankBy(chat, ByIdDescending));
      });
  auto r = Make(&backbone)->Rerank(ListwiseRequest(25));
  REQUIRE(r.ok());
  // Windows of 20, step 10: [6, 25] then [1, 15] (positions).
  REQUIRE(windows.size() == 2);
  CHECK(windows[0].size() == 20);
  CHECK(windows[0].front() == "s6");
  CHECK(windows[0].back() == "s25");
  CHECK(windows[1].size() == 15);
  // The best ten of the first window moved up into the second.
  CHECK(windows[1][0] == "s1");
  CHECK(windows[1][5] == "s25");
  // The top 10 are the ten with the highest numbers, in order.
  const auto order = Order(*r);
  for (int i = 0; i < 10; ++i) CHECK(order[i] == "s" + std::to_string(25 - i));
  CHECK(r->generations.size() == 2);
}

TEST_CASE("windows and steps are configurable") {
  int calls = 0;
  FakeBackbone backbone(
      [&](const llm::Chat& chat, const llm::SamplingOptions&) {
        ++calls;
        return TextSample(testing::RankBy(chat, ByIdDescending));
      });
  ListwiseOptions lw;
  lw.window = 4;
  lw.step = 2;
  auto r = Make(&backbone, lw)->Rerank(ListwiseRequest(10));
  REQUIRE(r.ok());
  CHECK(calls == 4);  // [6,10) [4,8) [2,6) [0,4)
  CHECK(Order(*r)[0] == "s10");
  CHECK(Order(*r)[1] == "s9");
}

TEST_CASE("the answer budget grows with the window") {
  FakeBackbone backbone([](const llm::Chat&, const llm::SamplingOptions&) {
    return TextSample("[1]");
  });
  REQUIRE(Make(&backbone)->Rerank(ListwiseRequest(10)).ok());
  CHECK(backbone.last_options().max_tokens == 16 + 6 * 10);
  ListwiseOptions lw;
  lw.max_tokens = 999;
  REQUIRE(Make(&backbone, lw)->Rerank(ListwiseRequest(10)).ok());
  CHECK(backbone.last_options().max_tokens == 999);
}

TEST_CASE(
    "an unparsable answer keeps BM25 order with the reason and the "
    "generation") {
  FakeBackbone backbone([](const llm::Chat&, const llm::SamplingOptions&) {
    return TextSample("I'd rather not rank these.");
  });
  auto r = Make(&backbone)->Rerank(ListwiseRequest(4, /*k=*/3));
  REQUIRE(r.ok());
  CHECK(!r->applied);
  CHECK(Order(*r) == std::vector<std::string>{"s1", "s2", "s3"});
  CHECK(r->reason.find("unparsable") != std::string::npos);
  CHECK(r->generations.size() == 1);
}

TEST_CASE("an answer cut at max_tokens is not applied as if it were whole") {
  FakeBackbone backbone([](const llm::Chat&, const llm::SamplingOptions&) {
    llm::Sample s = TextSample("[2] > [1]");  // cut before [3]
    s.finish_reason = "length";
    return s;
  });
  auto r = Make(&backbone)->Rerank(ListwiseRequest(3));
  REQUIRE(r.ok());
  CHECK_FALSE(r->applied);
  CHECK(Order(*r) == std::vector<std::string>{"s1", "s2", "s3"});
  CHECK(r->reason.find("cut at max_tokens") != std::string::npos);
  // Applied only when asked, and then the note says it was cut.
  ListwiseOptions keep;
  keep.reject_cut = false;
  auto kept = Make(&backbone, keep)->Rerank(ListwiseRequest(3));
  REQUIRE(kept.ok());
  CHECK(kept->applied);
  CHECK(Order(*kept) == std::vector<std::string>{"s2", "s1", "s3"});
  CHECK(kept->reason.find("cut at max_tokens in 1 window") != std::string::npos);
}

TEST_CASE("a backend failure keeps BM25 order flagged with the error") {
  FakeBackbone backbone(
      [](const llm::Chat&, const llm::SamplingOptions&) -> Result<llm::Sample> {
        return Status::Unavailable("connection refused by localhost:1");
      });
  auto r = Make(&backbone)->Rerank(ListwiseRequest(3));
  REQUIRE(r.ok());
  CHECK(!r->applied);
  CHECK(Order(*r) == std::vector<std::string>{"s1", "s2", "s3"});
  CHECK(r->reason.find("unavailable") != std::string::npos);
  CHECK(r->hits[0].score == ListwiseRequest(3).candidates[0].score);
}

TEST_CASE("a failure in a later window discards the earlier windows too") {
  int calls = 0;
  FakeBackbone backbone(
      [&](const llm::Chat& chat,
          const llm::SamplingOptions&) -> Result<llm::Sample> {
        if (++calls == 2) return Status::DeadlineExceeded("read timeout");
        return TextSample(testing::RankBy(chat, ByIdDescending));
      });
  auto r = Make(&backbone)->Rerank(ListwiseRequest(25));
  REQUIRE(r.ok());
  CHECK(!r->applied);
  CHECK(r->reason.find("window 2 of 2") != std::string::npos);
  CHECK(Order(*r)[0] == "s1");
}

TEST_CASE(
    "an answer ranking too few ids is refused under "
    "min_ranked_fraction") {
  FakeBackbone backbone([](const llm::Chat&, const llm::SamplingOptions&) {
    return TextSample("[2]");
  });
  ListwiseOptions lw;
  lw.min_ranked_fraction = 0.5;
  auto r = Make(&backbone, lw)->Rerank(ListwiseRequest(4));
  REQUIRE(r.ok());
  CHECK(!r->applied);
  CHECK(Order(*r)[0] == "s1");
}

TEST_CASE("an expired deadline stops before the next window") {
  ListwiseOptions lw;
  lw.deadline_ms = 1;
  lw.window = 2;
  lw.step = 1;
  // Each window's call takes longer than the whole deadline.
  FakeBackbone slow([&](const llm::Chat& chat, const llm::SamplingOptions&) {
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
    while (std::chrono::steady_clock::now() < until) {
    }
    return TextSample(testing::RankBy(chat, ByIdDescending));
  });
  auto r = Make(&slow, lw)->Rerank(ListwiseRequest(6));
  REQUIRE(r.ok());
  CHECK(!r->applied);
  CHECK(r->reason.find("deadline") != std::string::npos);
  CHECK(slow.generate_calls() == 1);
}

TEST_CASE("no, one or dominated candidates never reach the model") {
  FakeBackbone backbone([](const llm::Chat&, const llm::SamplingOptions&) {
    return TextSample("[2] > [1]");
  });
  auto reranker = Make(&backbone, {}, RerankerOptions());
  auto none = reranker->Rerank(ListwiseRequest(0));
  REQUIRE(none.ok());
  CHECK(!none->applied);
  CHECK(none->hits.empty());
  auto one = reranker->Rerank(ListwiseRequest(1));
  REQUIRE(one.ok());
  CHECK(!one->applied);
  CHECK(one->hits.size() == 1);
  RerankRequest dominated = ListwiseRequest(3);
  dominated.candidates[0].score = 30.0;
  auto strong = reranker->Rerank(dominated);
  REQUIRE(strong.ok());
  CHECK(!strong->applied);
  CHECK(strong->reason.find("strong BM25 top hit") != std::string::npos);
  CHECK(backbone.generate_calls() == 0);
}

TEST_CASE("a model that ranks against BM25 is distrusted by default") {
  FakeBackbone backbone([](const llm::Chat& chat, const llm::SamplingOptions&) {
    return TextSample(testing::RankBy(chat, ByIdDescending));  // reversed
  });
  auto r = Make(&backbone, {}, RerankerOptions())->Rerank(ListwiseRequest(6));
  REQUIRE(r.ok());
  CHECK(!r->applied);
  CHECK(r->reason.find("disagrees with BM25") != std::string::npos);
  CHECK(Order(*r)[0] == "s1");
  CHECK(r->generations.size() == 1);
}

TEST_CASE("duplicate candidate ids are an invalid request") {
  FakeBackbone backbone([](const llm::Chat&, const llm::SamplingOptions&) {
    return TextSample("[1]");
  });
  RerankRequest r = ListwiseRequest(3);
  r.candidates[2].id = "s1";
  CHECK(Make(&backbone)->Rerank(r).status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("the same request through a shared cache costs one model call") {
  FakeBackbone backbone([](const llm::Chat& chat, const llm::SamplingOptions&) {
    return TextSample(testing::RankBy(chat, ByIdDescending));
  });
  RerankCache cache;
  RerankerOptions o = ModelOnly();
  o.cache = &cache;
  auto a = Make(&backbone, {}, o);
  auto b = Make(&backbone, {}, o);  // another worker, same cache
  auto first = a->Rerank(ListwiseRequest(5));
  auto second = b->Rerank(ListwiseRequest(5, /*k=*/2));
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(backbone.generate_calls() == 1);
  CHECK(!first->cached);
  CHECK(second->cached);
  CHECK(second->applied);
  CHECK(second->generations.empty());
  CHECK(Order(*second) == std::vector<std::string>{"s5", "s4"});
  // A revised candidate is a different selection.
  RerankRequest revised = ListwiseRequest(5);
  revised.candidates[1].revision = 99;
  REQUIRE(a->Rerank(revised).ok());
  CHECK(backbone.generate_calls() == 2);
}

TEST_CASE("only max_candidates are judged, the rest follow in BM25 order") {
  size_t shown = 0;
  FakeBackbone backbone(
      [&](const llm::Chat& chat, const llm::SamplingOptions&) {
        shown = testing::NumberedIds(chat).size();
        return TextSample(testing::RankBy(chat, ByIdDescending));
      });
  RerankerOptions o = ModelOnly();
  o.max_candidates = 4;
  auto r = Make(&backbone, {}, o)->Rerank(ListwiseRequest(6));
  REQUIRE(r.ok());
  CHECK(shown == 4);
  CHECK(Order(*r) ==
        std::vector<std::string>{"s4", "s3", "s2", "s1", "s5", "s6"});
}

TEST_CASE("listwise options outside their ranges are refused") {
  FakeBackbone backbone(nullptr);
  ListwiseOptions lw;
  lw.window = 1;
  CHECK(!MakeListwiseReranker(&backbone, lw, {}).ok());
  lw = ListwiseOptions();
  lw.step = 21;
  CHECK(!MakeListwiseReranker(&backbone, lw, {}).ok());
  CHECK(!MakeListwiseReranker(nullptr, {}, {}).ok());
  RerankerOptions bad;
  bad.max_candidates = 1;
  CHECK(!MakeListwiseReranker(&backbone, {}, bad).ok());
}

}  // namespace
}  // namespace skilldb::rerank
