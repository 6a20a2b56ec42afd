#include "skilldb/rerank/endpoint.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "skilldb/rerank/fake_backbone.h"

namespace skilldb::rerank {
namespace {

using testing::MakeHit;
using testing::ModelOnly;
using testing::Order;
using Scores = std::vector<std::pair<size_t, double>>;

RerankRequest EndpointRequest(size_t n) {
  return testing::MakeRequest("warp shuffle reduction", n);
}

std::unique_ptr<ModelReranker> Make(EndpointFunction fn,
                                    const EndpointOptions& e = {}) {
  auto judge = EndpointJudge::Create(std::move(fn), "reranker-x", e);
  REQUIRE(judge.ok());
  auto r = ModelReranker::Create(std::move(judge).value(), ModelOnly());
  REQUIRE(r.ok());
  return std::move(r).value();
}

TEST_CASE("endpoint scores in [0, 1] order the candidates as given") {
  std::vector<std::string> sent;
  auto r = Make([&](const std::string& q,
                    const std::vector<std::string>& docs) -> Result<Scores> {
             sent = docs;
             CHECK(q == "warp shuffle reduction");
             return Scores{{2, 0.9}, {0, 0.1}, {1, 0.5}};
           })->Rerank(EndpointRequest(3));
  REQUIRE(r.ok());
  CHECK(r->applied);
  CHECK(r->mode == "endpoint");
  CHECK(Order(*r) == std::vector<std::string>{"s3", "s2", "s1"});
  CHECK(r->hits[0].rerank_score == doctest::Approx(0.9));
  CHECK(r->generations.empty());
  REQUIRE(sent.size() == 3);
  CHECK(sent[0].rfind("s1: s1 title\nsummary of s1", 0) == 0);
}

TEST_CASE("raw logits from an endpoint go through the logistic") {
  auto r = Make([](const std::string&,
                   const std::vector<std::string>&) -> Result<Scores> {
             return Scores{{0, -4.0}, {1, 3.0}};
           })->Rerank(EndpointRequest(2));
  REQUIRE(r.ok());
  CHECK(Order(*r)[0] == "s2");
  CHECK(r->hits[0].rerank_score == doctest::Approx(1 / (1 + std::exp(-3.0))));
}

TEST_CASE("min-max scaling spreads an endpoint's scores over [0, 1]") {
  EndpointOptions e;
  e.scale = EndpointScale::kMinMax;
  auto r = Make(
               [](const std::string&,
                  const std::vector<std::string>&) -> Result<Scores> {
                 return Scores{{0, 0.50}, {1, 0.52}, {2, 0.51}};
               },
               e)
               ->Rerank(EndpointRequest(3));
  REQUIRE(r.ok());
  CHECK(r->hits[0].rerank_score == doctest::Approx(1.0));
  CHECK(r->hits[2].rerank_score == doctest::Approx(0.0));
}

TEST_CASE("an endpoint answer with a bad index or score keeps BM25 order") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Scores& bad :
       {Scores{{0, 0.5}, {7, 0.5}}, Scores{{0, 0.5}, {0, 0.4}},
        Scores{{0, nan}, {1, 0.5}}, Scores{}}) {
    auto r = Make([&](const std::string&,
                      const std::vector<std::string>&) -> Result<Scores> {
               return bad;
             })->Rerank(EndpointRequest(2));
    REQUIRE(r.ok());
    CHECK(!r->applied);
    CHECK(Order(*r) == std::vector<std::string>{"s1", "s2"});
  }
}

TEST_CASE(
    "an endpoint that scores too few candidates keeps BM25 order unless "
    "allowed") {
  auto partial = [](const std::string&,
                    const std::vector<std::string>&) -> Result<Scores> {
    return Scores{{2, 1.0}};
  };
  auto strict = Make(partial)->Rerank(EndpointRequest(3));
  REQUIRE(strict.ok());
  CHECK(!strict->applied);
  EndpointOptions lenient;
  lenient.min_scored_fraction = 0.3;
  auto r = Make(partial, lenient)->Rerank(EndpointRequest(3));
  REQUIRE(r.ok());
  CHECK(r->applied);
  CHECK(Order(*r)[0] == "s1");  // unscored: its BM25 share, 1.0 (tie: BM25)
  CHECK(r->reason.find("2 of 3 candidates unscored") != std::string::npos);
}

TEST_CASE("an endpoint error keeps BM25 order with the reason") {
  auto r = Make([](const std::string&,
                   const std::vector<std::string>&) -> Result<Scores> {
             return Status::DeadlineExceeded("read timeout after 100 ms");
           })->Rerank(EndpointRequest(3));
  REQUIRE(r.ok());
  CHECK(!r->applied);
  CHECK(r->reason.find("deadline_exceeded") != std::string::npos);
}

TEST_CASE("an endpoint judge needs a function and sane options") {
  CHECK(!EndpointJudge::Create(EndpointFunction(), "m", {}).ok());
  EndpointOptions e;
  e.min_scored_fraction = -1;
  CHECK(!EndpointJudge::Create(
             [](const std::string&, const std::vector<std::string>&)
                 -> Result<Scores> { return Scores{}; },
             "m", e)
             .ok());
  CHECK(!EndpointJudge::Create(static_cast<llm::RerankClient*>(nullptr), {})
             .ok());
}

}  // namespace
}  // namespace skilldb::rerank
