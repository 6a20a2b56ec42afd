#include "skilldb/trainer/advantages.h"

#include <doctest/doctest.h>

#include <cmath>

#include "skilldb/trainer/rewards.h"

namespace skilldb::trainer {
namespace {

// Three policy rollouts of task A over two turns plus one selection.
std::vector<Decision> Batch() {
  return {
      {"A", "policy", "r1", 0, 0.0}, {"A", "policy", "r1", 1, 1.0},
      {"A", "policy", "r2", 0, 0.5}, {"A", "policy", "r2", 1, 0.0},
      {"A", "policy", "r3", 0, 1.0}, {"A", "selection", "s1", 0, 2.0},
  };
}

TEST_CASE("discounted returns and the leave-one-out baseline by hand") {
  AdvantageOptions o{.gamma = 0.5,
                     .baseline = Baseline::kLeaveOneOut,
                     .normalization = Normalization::kNone};
  auto r = ComputeAdvantages(Batch(), o);
  REQUIRE(r.ok());
  // G0(r1) = 0 + 0.5 * 1; G1(r1) = 1; G0(r2) = 0.5; G1(r2) = 0; G0(r3) = 1.
  CHECK(r->returns == std::vector<double>{0.5, 1.0, 0.5, 0.0, 1.0, 2.0});
  // Turn 0 group {0.5, 0.5, 1}: 0.5 - 0.75, 0.5 - 0.75, 1 - 0.5.
  // Turn 1 group {1, 0}: 1 - 0, 0 - 1. The selection is alone: keeps G.
  CHECK(r->advantages ==
        std::vector<double>{-0.25, 1.0, -0.25, -1.0, 0.5, 2.0});
}

TEST_CASE("per-agent normalization uses each agent's own statistics") {
  AdvantageOptions o{.gamma = 0.5,
                     .baseline = Baseline::kLeaveOneOut,
                     .normalization = Normalization::kPerAgent,
                     .std_epsilon = 0};
  auto r = ComputeAdvantages(Batch(), o);
  REQUIRE(r.ok());
  // Policy advantages {-0.25, 1, -0.25, -1, 0.5}: mean 0, variance
  // (0.0625 + 1 + 0.0625 + 1 + 0.25) / 5 = 0.475.
  const double sd = std::sqrt(0.475);
  CHECK(r->advantages[0] == doctest::Approx(-0.25 / sd));
  CHECK(r->advantages[1] == doctest::Approx(1.0 / sd));
  CHECK(r->advantages[3] == doctest::Approx(-1.0 / sd));
  CHECK(r->advantages[4] == doctest::Approx(0.5 / sd));
  // The lone selection is centred on its own mean (not the policy's).
  o.std_epsilon = 1e-6;
  r = ComputeAdvantages(Batch(), o);
  REQUIRE(r.ok());
  CHECK(r->advantages[5] == doctest::Approx(0.0));
  // Global normalization mixes the agents: the selection is no longer 0.
  o.normalization = Normalization::kGlobal;
  r = ComputeAdvantages(Batch(), o);
  REQUIRE(r.ok());
  CHECK(r->advantages[5] > 1.0);
}

TEST_CASE("batch-mean baseline and no baseline") {
  AdvantageOptions o{.gamma = 0.5,
                     .baseline = Baseline::kBatchMean,
                     .normalization = Normalization::kNone};
  auto r = ComputeAdvantages(Batch(), o);
  REQUIRE(r.ok());
  // Mean of {0.5, 1, 0.5, 0, 1, 2} is 5/6.
  CHECK(r->advantages[0] == doctest::Approx(0.5 - 5.0 / 6));
  CHECK(r->advantages[5] == doctest::Approx(2.0 - 5.0 / 6));
  o.baseline = Baseline::kNone;
  r = ComputeAdvantages(Batch(), o);
  REQUIRE(r.ok());
  CHECK(r->advantages == r->returns);
}

TEST_CASE("gamma 0 and 1, groups keyed by task") {
  std::vector<Decision> b = {{"A", "policy", "x", 0, 1.0},
                             {"A", "policy", "x", 1, 2.0},
                             {"B", "policy", "y", 0, 3.0}};
  AdvantageOptions o{.gamma = 1.0,
                     .baseline = Baseline::kLeaveOneOut,
                     .normalization = Normalization::kNone};
  auto r = ComputeAdvantages(b, o);
  REQUIRE(r.ok());
  CHECK(r->returns == std::vector<double>{3.0, 2.0, 3.0});
  // Different tasks never share a group: every decision is alone.
  CHECK(r->advantages == r->returns);
  o.gamma = 0;
  r = ComputeAdvantages(b, o);
  REQUIRE(r.ok());
  CHECK(r->returns == std::vector<double>{1.0, 2.0, 3.0});
}

TEST_CASE("errors name the problem") {
  std::vector<Decision> dup = {{"A", "policy", "x", 0, 1.0},
                               {"A", "policy", "x", 0, 2.0}};
  auto r = ComputeAdvantages(dup, {});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("turn 0") != std::string::npos);
  CHECK_FALSE(ComputeAdvantages({}, {.gamma = 1.5}).ok());
  CHECK(ParseBaseline("loo").value() == Baseline::kLeaveOneOut);
  CHECK(ParseNormalization("global").value() == Normalization::kGlobal);
  CHECK_FALSE(ParseBaseline("mean").ok());
  auto empty = ComputeAdvantages({}, {});
  REQUIRE(empty.ok());
  CHECK(empty->advantages.empty());
}

TEST_CASE("stats per agent") {
  auto b = Batch();
  std::vector<double> v = {1, 2, 3, 4, 5, 10};
  auto s = StatsPerAgent(b, v);
  CHECK(s["policy"].count == 5);
  CHECK(s["policy"].mean == doctest::Approx(3.0));
  CHECK(s["policy"].std == doctest::Approx(std::sqrt(2.0)));
  CHECK(s["selection"].mean == 10.0);
  CHECK(s["policy"].min == 1.0);
  CHECK(s["policy"].max == 5.0);
}

TEST_CASE("rewards by hand") {
  RewardConfig c;
  CHECK(PolicyTurnReward(true, 2.0, false, c) == doctest::Approx(1.5));
  CHECK(PolicyTurnReward(true, 5.0, false, c) == doctest::Approx(2.0));
  CHECK(PolicyTurnReward(true, std::nullopt, false, c) == 0.5);
  CHECK(PolicyTurnReward(false, 2.0, false, c) == 0.0);
  CHECK(PolicyTurnReward(true, 2.0, true, c) == 0.0);
  c.hack_reward = -1;
  CHECK(PolicyTurnReward(true, 2.0, true, c) == -1.0);

  RewardConfig d;
  auto s =
      SelectionRewards({{"A", 1.0}, {"A", 0.0}, {"A", 0.5}, {"B", 3.0}}, d);
  CHECK(s == std::vector<double>{0.75, -0.75, 0.0, 3.0});
  d.selection_relative = false;
  d.selection_weight = 2;
  s = SelectionRewards({{"A", 1.0}, {"A", 0.0}}, d);
  CHECK(s == std::vector<double>{2.0, 0.0});

  CHECK(SummaryReward(true, 10, c) == doctest::Approx(2.0));  // cap 4
  CHECK(SummaryReward(true, 1, c) == doctest::Approx(1.25));
  CHECK(SummaryReward(false, 3, c) == 0.0);
  CHECK(ValidateRewardConfig(c).ok());
  c.speedup_cap = 0;
  CHECK_FALSE(ValidateRewardConfig(c).ok());
}

}  // namespace
}  // namespace skilldb::trainer
