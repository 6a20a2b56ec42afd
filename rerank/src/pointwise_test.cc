#include "skilldb/rerank/pointwise.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>

#include "skilldb/rerank/fake_backbone.h"

namespace skilldb::rerank {
namespace {

using testing::FakeBackbone;
using testing::MakeHit;
using testing::ModelOnly;
using testing::Order;

llm::TokenChoice Choice(std::string text, double logprob, int32_t id = -1) {
  return llm::TokenChoice{std::move(text), id, logprob};
}

// A sample whose tokens are `tokens` (each chosen greedily) with the given
// alternatives at the last position.
llm::Sample Tokens(const std::vector<std::string>& tokens,
                   const std::vector<llm::TokenChoice>& last) {
  llm::Sample s;
  for (size_t i = 0; i < tokens.size(); ++i) {
    s.text += tokens[i];
    s.token_logprobs.push_back(-0.01);
    if (i + 1 < tokens.size()) {
      s.top_logprobs.push_back({Choice(tokens[i], -0.01), Choice("x", -5)});
    } else {
      s.top_logprobs.push_back(last);
    }
  }
  return s;
}

TEST_CASE("the verdict is P(yes) from the yes and no logprobs") {
  auto v = ReadVerdict(Tokens(
      {"yes"}, {Choice("yes", std::log(0.6)), Choice("no", std::log(0.2)),
                Choice("maybe", std::log(0.2))}));
  REQUIRE(v.has_value());
  CHECK(v->from_alternatives);
  CHECK(v->p_yes == doctest::Approx(0.75));
}

TEST_CASE("spellings of yes and no are pooled") {
  auto v = ReadVerdict(Tokens(
      {"Yes"}, {Choice("Yes", std::log(0.3)), Choice(" yes", std::log(0.3)),
                Choice("No", std::log(0.2)), Choice("no", std::log(0.2))}));
  REQUIRE(v.has_value());
  CHECK(v->p_yes == doctest::Approx(0.6));
}

TEST_CASE(
    "an empty think block is skipped so the scored token is the "
    "verdict") {
  // The model first writes "<think>\n\n</think>\n\n"; a "no" inside a
  // think block would not count.
  llm::Sample s =
      Tokens({"<think>", "no", "</think>", "\n\n", "yes"},
             {Choice("yes", std::log(0.9)), Choice("no", std::log(0.1))});
  auto v = ReadVerdict(s);
  REQUIRE(v.has_value());
  CHECK(v->p_yes == doctest::Approx(0.9));
}

TEST_CASE(
    "a verdict missing from the alternatives counts as the least "
    "likely one listed") {
  auto v = ReadVerdict(Tokens(
      {"yes"}, {Choice("yes", std::log(0.5)), Choice("maybe", std::log(0.1))}));
  REQUIRE(v.has_value());
  CHECK(v->p_yes == doctest::Approx(0.5 / 0.6));
}

TEST_CASE("without alternatives the answer's first word is the verdict") {
  llm::Sample s;
  s.text = "<think>hmm</think>\nNo, it does not help.";
  auto v = ReadVerdict(s);
  REQUIRE(v.has_value());
  CHECK(!v->from_alternatives);
  CHECK(v->p_yes == 0.0);
  s.text = "Perhaps.";
  CHECK(!ReadVerdict(s).has_value());
  s.text = "<think>yes";
  CHECK(!ReadVerdict(s).has_value());
}

TEST_CASE("a certain verdict listed alone is read as certain") {
  auto v = ReadVerdict(Tokens({"yes"}, {Choice("yes", 0.0)}));
  REQUIRE(v.has_value());
  CHECK(v->p_yes > 0.999999);
}

TEST_CASE("non-finite logprobs from the server are ignored") {
  const double inf = std::numeric_limits<double>::infinity();
  auto v = ReadVerdict(
      Tokens({"yes"}, {Choice("yes", std::log(0.5)), Choice("no", inf),
                       Choice("no", std::numeric_limits<double>::quiet_NaN()),
                       Choice("x", std::log(0.25))}));
  REQUIRE(v.has_value());
  CHECK(std::isfinite(v->p_yes));
  CHECK(v->p_yes == doctest::Approx(0.5 / 0.75));
}

// A backbone that says yes with probability relevance[id].
FakeBackbone::GenerateFn Oracle(
    const std::map<std::string, double>& relevance) {
  return [relevance](const llm::Chat& chat,
                     const llm::SamplingOptions&) -> Result<llm::Sample> {
    const std::string id = testing::DocumentId(chat);
    auto it = relevance.find(id);
    if (it == relevance.end()) return llm::Sample{};  // no verdict
    const double p = it->second;
    llm::Sample s;
    s.text = p >= 0.5 ? "yes" : "no";
    s.token_logprobs = {std::log(std::max(p, 1 - p))};
    s.top_logprobs = {
        {Choice("yes", std::log(p)), Choice("no", std::log(1 - p))}};
    return s;
  };
}

RerankRequest PointwiseRequest(size_t n) {
  return testing::MakeRequest("fuse bias and gelu into the gemm epilogue", n);
}

TEST_CASE("pointwise reranking asks one question per candidate in batches") {
  FakeBackbone backbone(Oracle(
      {{"s1", 0.1}, {"s2", 0.9}, {"s3", 0.5}, {"s4", 0.7}, {"s5", 0.2}}));
  PointwiseOptions pw;
  pw.batch_size = 2;
  auto reranker = MakePointwiseReranker(&backbone, pw, ModelOnly());
  REQUIRE(reranker.ok());
  auto r = (*reranker)->Rerank(PointwiseRequest(5));
  REQUIRE(r.ok());
  CHECK(r->applied);
  CHECK(r->mode == "pointwise");
  CHECK(Order(*r) == std::vector<std::string>{"s2", "s4", "s3", "s5", "s1"});
  CHECK(r->hits[0].rerank_score == doctest::Approx(0.9));
  CHECK(backbone.generate_calls() == 3);
  CHECK(backbone.prompts() == 5);
  CHECK(r->generations.size() == 5);
  CHECK(backbone.last_options().top_logprobs == 20);
  CHECK(backbone.last_options().temperature == 0.0);
}

TEST_CASE("candidates without a verdict keep their BM25 standing") {
  FakeBackbone backbone(Oracle({{"s2", 1.0}, {"s3", 0.0}}));
  PointwiseOptions pw;
  pw.min_verdict_fraction = 0.5;
  auto r =
      (*MakePointwiseReranker(&backbone, pw, ModelOnly()))->Rerank(PointwiseRequest(4));
  REQUIRE(r.ok());
  CHECK(r->applied);
  // s1 and s4 score their BM25 share: 1.0 and 0.97; s2 scores 1.0 too and
  // stays behind s1 (ties keep BM25 order).
  CHECK(Order(*r) == std::vector<std::string>{"s1", "s2", "s4", "s3"});
  CHECK(r->reason.find("2 of 4 answers without a verdict") !=
        std::string::npos);
}

TEST_CASE("a model that scores every candidate alike keeps BM25 order") {
  FakeBackbone backbone(Oracle({{"s1", 0.7}, {"s2", 0.7}, {"s3", 0.7}}));
  auto r = (*MakePointwiseReranker(&backbone, {}, RerankerOptions()))
               ->Rerank(PointwiseRequest(3));
  REQUIRE(r.ok());
  CHECK(!r->applied);
  CHECK(r->reason.find("alike") != std::string::npos);
  CHECK(Order(*r) == std::vector<std::string>{"s1", "s2", "s3"});
}

TEST_CASE("too few verdicts keep BM25 order") {
  FakeBackbone backbone(Oracle({{"s2", 1.0}}));
  auto r =
      (*MakePointwiseReranker(&backbone, {}, ModelOnly()))->Rerank(PointwiseRequest(4));
  REQUIRE(r.ok());
  CHECK(!r->applied);
  CHECK(Order(*r) == std::vector<std::string>{"s1", "s2", "s3", "s4"});
  CHECK(r->generations.size() == 4);
}

TEST_CASE(
    "scoring mode compares the logprobs of the two verdicts after the "
    "prefix") {
  std::vector<std::string> completions;
  FakeBackbone backbone(
      nullptr, [&](const llm::ScoreRequest& req) -> Result<llm::ScoreResult> {
        completions.push_back(req.completion);
        const bool yes = req.completion.ends_with("yes");
        const bool relevant = testing::DocumentId(req.prompt) == "s2";
        // The prefix costs -3 either way; it cancels.
        llm::ScoreResult r;
        const double verdict = std::log(yes == relevant ? 0.8 : 0.2);
        r.sum_logprob = -3.0 + verdict;
        r.token_logprobs = {-1.0, -1.0, -1.0, verdict};
        r.completion_token_ids = {7, 8, 9, yes ? 10 : 11};
        return r;
      });
  PointwiseOptions pw;
  pw.method = VerdictMethod::kScore;
  pw.verdict_prefix = "<think>\n\n</think>\n\n";
  auto r =
      (*MakePointwiseReranker(&backbone, pw, ModelOnly()))->Rerank(PointwiseRequest(3));
  REQUIRE(r.ok());
  CHECK(r->applied);
  CHECK(Order(*r)[0] == "s2");
  CHECK(r->hits[0].rerank_score == doctest::Approx(0.8));
  CHECK(backbone.score_calls() == 1);
  REQUIRE(completions.size() == 6);
  CHECK(completions[0] == "<think>\n\n</think>\n\nyes");
  CHECK(completions[1] == "<think>\n\n</think>\n\nno");
  REQUIRE(r->generations.size() == 3);
  CHECK(r->generations[1].completion == "<think>\n\n</think>\n\nyes");
  CHECK(r->generations[1].completion_token_ids.back() == 10);
}

TEST_CASE("a backend that cannot score keeps BM25 order with the reason") {
  FakeBackbone backbone(nullptr);  // Score: NotSupported
  PointwiseOptions pw;
  pw.method = VerdictMethod::kScore;
  auto r =
      (*MakePointwiseReranker(&backbone, pw, ModelOnly()))->Rerank(PointwiseRequest(3));
  REQUIRE(r.ok());
  CHECK(!r->applied);
  CHECK(r->reason.find("not_supported") != std::string::npos);
}

TEST_CASE("pointwise options outside their ranges are refused") {
  FakeBackbone backbone(nullptr);
  PointwiseOptions pw;
  pw.top_logprobs = 1;
  CHECK(!MakePointwiseReranker(&backbone, pw, {}).ok());
  pw = PointwiseOptions();
  pw.batch_size = 0;
  CHECK(!MakePointwiseReranker(&backbone, pw, {}).ok());
  pw = PointwiseOptions();
  pw.min_verdict_fraction = 2;
  CHECK(!MakePointwiseReranker(&backbone, pw, {}).ok());
}

}  // namespace
}  // namespace skilldb::rerank
