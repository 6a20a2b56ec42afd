#include "skilldb/rerank/fusion.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "skilldb/rerank/fake_backbone.h"

namespace skilldb::rerank {
namespace {

using testing::MakeHit;

std::vector<Hit> Candidates(const std::vector<double>& scores) {
  std::vector<Hit> hits;
  for (size_t i = 0; i < scores.size(); ++i) {
    hits.push_back(MakeHit("s" + std::to_string(i + 1), scores[i]));
  }
  return hits;
}

// The blend alone, without the guard (tests of the guard set it).
FusionOptions Blend() {
  FusionOptions o;
  o.guard_ranks = 0;
  return o;
}

std::vector<std::string> Order(const std::vector<RankedHit>& hits) {
  std::vector<std::string> ids;
  ids.reserve(hits.size());
  for (const RankedHit& h : hits) ids.push_back(h.hit.id);
  return ids;
}

TEST_CASE("BM25 weighs most on its own top three ranks") {
  FusionOptions o;
  CHECK(Bm25Weight(o, 1) == 0.75);
  CHECK(Bm25Weight(o, 3) == 0.75);
  CHECK(Bm25Weight(o, 4) == 0.6);
  CHECK(Bm25Weight(o, 10) == 0.6);
  CHECK(Bm25Weight(o, 11) == 0.4);
}

TEST_CASE("the fused score blends normalized BM25 and the model by rank") {
  const auto c = Candidates({10, 8, 6, 5, 4});
  const auto fused = Fuse(c, {0.0, 0.0, 0.0, 1.0, 0.0}, Blend());
  // s4: 0.6 * 0.5 + 0.4 * 1 = 0.7 is below s1's 0.75 but above s2's 0.6.
  CHECK(Order(fused) == std::vector<std::string>{"s1", "s4", "s2", "s3", "s5"});
  CHECK(fused[1].score == doctest::Approx(0.7));
  CHECK(fused[1].bm25_rank == 4);
  CHECK(fused[1].rerank_score == 1.0);
}

TEST_CASE(
    "the BM25 top hit stays first against hits below 58% of its "
    "score even when the model rates it lowest") {
  // The top hit scores at least 0.75. Ranks 2-3 score at most
  // 0.75 r + 0.25, ranks 4-10 at most 0.6 r + 0.4: they pass it only when
  // r > 2/3 or r > 0.583.
  const std::vector<double> against_top = {0.0, 1.0, 1.0, 1.0, 1.0, 1.0};
  CHECK(Fuse(Candidates({10, 5.8, 5.8, 5.8, 5.8, 5.8}), against_top, Blend())[0]
            .hit.id == "s1");
  CHECK(Fuse(Candidates({10, 5.9, 5.9, 5.9, 5.9, 5.9}), against_top, Blend())[0]
            .hit.id == "s4");
  CHECK(Fuse(Candidates({10, 7, 5, 5, 5, 5}), against_top, Blend())[0].hit.id ==
        "s2");
}

TEST_CASE(
    "with all BM25 weights at 1 the order is BM25's whatever the model "
    "says") {
  FusionOptions o;
  o.top_bm25_weight = o.middle_bm25_weight = o.tail_bm25_weight = 1.0;
  const auto c =
      Candidates({5, 4, 3, 2, 1, 0.5, 0.2, 0.1, 0.05, 0.01, 0.001, 0.0001});
  std::vector<double> model(c.size(), 0.0);
  model.back() = 1.0;
  CHECK(Order(Fuse(c, model, o)) ==
        Order(Fuse(c, std::vector<double>(c.size(), 0.0), o)));
  CHECK(Fuse(c, model, o).front().hit.id == "s1");
}

TEST_CASE("with all BM25 weights at 0 the order is the model's") {
  FusionOptions o;
  o.top_bm25_weight = o.middle_bm25_weight = o.tail_bm25_weight = 0.0;
  o.guard_ranks = 0;
  const auto c = Candidates({3, 2, 1});
  CHECK(Order(Fuse(c, {0.1, 0.5, 0.9}, o)) ==
        std::vector<std::string>{"s3", "s2", "s1"});
}

TEST_CASE("untrusted model scores are clamped and NaN reads as zero") {
  const auto c = Candidates({3, 2.9, 2.8});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto fused = Fuse(c, {nan, 7.0, -3.0}, Blend());
  for (const RankedHit& h : fused) {
    CHECK(std::isfinite(h.score));
    CHECK(h.rerank_score >= 0.0);
    CHECK(h.rerank_score <= 1.0);
  }
  CHECK(fused[0].hit.id == "s2");
}

TEST_CASE("equal fused scores keep BM25 order") {
  const auto c = Candidates({1, 1, 1, 1});
  CHECK(Order(Fuse(c, {0.5, 0.5, 0.5, 0.5}, Blend())) ==
        std::vector<std::string>{"s1", "s2", "s3", "s4"});
}

TEST_CASE(
    "the default guard keeps BM25's top hit first whatever the model "
    "says") {
  const auto c = Candidates({10, 9.9, 9.8, 9.7});
  const std::vector<double> against = {0.0, 1.0, 1.0, 1.0};
  CHECK(Order(Fuse(c, against, Blend()))[0] != "s1");
  const auto guarded = Fuse(c, against, FusionOptions());
  CHECK(Order(guarded) == std::vector<std::string>{"s1", "s2", "s3", "s4"});
}

TEST_CASE(
    "guarded hits fall at most max_guard_drop places and the rest keep "
    "the blend's order") {
  FusionOptions o;
  o.top_bm25_weight = o.middle_bm25_weight = o.tail_bm25_weight = 0.0;
  o.guard_ranks = 2;
  o.max_guard_drop = 1;
  // The model alone would give s6 s5 s4 s3 s2 s1.
  const auto c = Candidates({6, 5, 4, 3, 2, 1});
  const auto fused = Fuse(c, {0.0, 0.1, 0.2, 0.3, 0.4, 0.5}, o);
  // s1 is due at position 2, s2 at 3; the others in the model's order.
  CHECK(Order(fused) ==
        std::vector<std::string>{"s6", "s1", "s2", "s5", "s4", "s3"});
  o.guard_ranks = 0;
  CHECK(Order(Fuse(c, {0.0, 0.1, 0.2, 0.3, 0.4, 0.5}, o)) ==
        std::vector<std::string>{"s6", "s5", "s4", "s3", "s2", "s1"});
}

TEST_CASE("agreement with BM25 is Spearman's correlation of the orders") {
  CHECK(Bm25Agreement({0.9, 0.5, 0.1}) == doctest::Approx(1.0));
  CHECK(Bm25Agreement({0.1, 0.5, 0.9}) == doctest::Approx(-1.0));
  CHECK(Bm25Agreement({0.5, 0.5, 0.5}) == 0.0);
  CHECK(Bm25Agreement({1.0}) == 0.0);
  // Ranks 1..4 against model ranks 2, 1, 3, 4: 1 - 6 * 2 / (4 * 15) = 0.8.
  CHECK(Bm25Agreement({0.8, 0.9, 0.5, 0.1}) == doctest::Approx(0.8));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(std::isfinite(Bm25Agreement({nan, 0.2, nan})));
}

TEST_CASE("BM25 scores go on the chosen scale") {
  const auto c = Candidates({10, 6, 2});
  CHECK(Bm25OnScale(c, Bm25Scale::kTopScore) ==
        std::vector<double>{1.0, 0.6, 0.2});
  CHECK(Bm25OnScale(c, Bm25Scale::kMinMax) ==
        std::vector<double>{1.0, 0.5, 0.0});
  const auto ranks = Bm25OnScale(c, Bm25Scale::kRank);
  CHECK(ranks[0] == doctest::Approx(1.0));
  CHECK(ranks[2] == doctest::Approx(1.0 / 3));
  CHECK(Bm25OnScale(Candidates({4, 4}), Bm25Scale::kMinMax) ==
        std::vector<double>{1.0, 1.0});
}

TEST_CASE("a dominant BM25 top hit is a strong signal at the margin given") {
  FusionOptions o;
  o.strong_signal_margin = 0.5;
  CHECK(StrongBm25Signal(Candidates({10, 5}), o));
  CHECK(!StrongBm25Signal(Candidates({10, 5.1}), o));
  CHECK(!StrongBm25Signal(Candidates({10}), o));
  o.strong_signal_margin = 1.5;
  CHECK(!StrongBm25Signal(Candidates({10, 0.0001}), o));
}

TEST_CASE("fusion options outside their ranges are refused") {
  FusionOptions o;
  CHECK(ValidateFusionOptions(o).ok());
  o.top_bm25_weight = 1.5;
  CHECK(ValidateFusionOptions(o).code() == StatusCode::kInvalidArgument);
  o = FusionOptions();
  o.middle_ranks = 2;
  CHECK(!ValidateFusionOptions(o).ok());
  o = FusionOptions();
  o.strong_signal_margin = -0.1;
  CHECK(!ValidateFusionOptions(o).ok());
  o.strong_signal_margin = std::numeric_limits<double>::quiet_NaN();
  CHECK(!ValidateFusionOptions(o).ok());
  o = FusionOptions();
  o.min_agreement = 1.5;
  CHECK(!ValidateFusionOptions(o).ok());
  o = FusionOptions();
  o.max_guard_drop = kMaxQueryK + 1;
  CHECK(!ValidateFusionOptions(o).ok());
}

}  // namespace
}  // namespace skilldb::rerank
