#include "skilldb/verify/stats.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>

namespace skilldb::verify {
namespace {

// Rounds of `calls` timings: baseline around `base_ms`, candidate around
// base_ms / speedup, each with multiplicative noise `cv`.
std::vector<RoundSamples> Rounds(int rounds, int calls, double base_ms,
                                 double speedup, double cv, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, cv);
  std::vector<RoundSamples> out(static_cast<size_t>(rounds));
  for (RoundSamples& r : out) {
    for (int i = 0; i < calls; ++i) {
      r.baseline_ms.push_back(base_ms * (1 + noise(rng)));
      r.candidate_ms.push_back(base_ms / speedup * (1 + noise(rng)));
      r.baseline_host_ms.push_back(r.baseline_ms.back() + 0.01);
      r.candidate_host_ms.push_back(r.candidate_ms.back() + 0.01);
    }
  }
  return out;
}

TEST_CASE("median and quantiles interpolate between order statistics") {
  CHECK(Median({3, 1, 2}) == 2.0);
  CHECK(Median({4, 1, 2, 3}) == 2.5);
  CHECK(Quantile({0, 10}, 0.25) == doctest::Approx(2.5));
  CHECK(std::isnan(Median({})));
  CHECK(CoefficientOfVariation({1, 1, 1}) == 0.0);
  CHECK(CoefficientOfVariation({1, 3}) == doctest::Approx(std::sqrt(2.0) / 2.0));
}

TEST_CASE("a clear speedup in every round is accepted with a CI above one") {
  const Decision d = Decide(Rounds(3, 30, 1.0, 1.3, 0.02, 1), {}, 100.0, 7);
  CHECK(d.faster());
  CHECK(d.rounds.size() == 3);
  CHECK(d.estimate.ratio == doctest::Approx(1.3).epsilon(0.05));
  CHECK(d.estimate.ci_low > 1.0);
  CHECK(d.estimate.ci_low <= d.estimate.ratio);
  CHECK(d.estimate.ci_high >= d.estimate.ratio);
}

TEST_CASE("an identical candidate is almost never judged faster at tau 1.05") {
  int positives = 0;
  for (uint64_t s = 0; s < 300; ++s) {
    positives += Decide(Rounds(3, 30, 1.0, 1.0, 0.03, s), {}, std::nullopt, s).faster();
  }
  CHECK(positives <= 3);
}

TEST_CASE("one round below tau rejects the candidate with that round named") {
  auto rounds = Rounds(3, 30, 1.0, 1.3, 0.01, 2);
  for (double& v : rounds[1].candidate_ms) v *= 1.3;  // round 2 at ~1.0x
  const Decision d = Decide(rounds, {}, std::nullopt, 3);
  REQUIRE(!d.faster());
  REQUIRE(HasFinding(d.findings, FindingCode::kNotFaster));
  for (const Finding& f : d.findings) {
    if (f.code == FindingCode::kNotFaster) CHECK(f.message.find("round 2") != std::string::npos);
  }
}

TEST_CASE("fewer rounds than required are rejected") {
  const Decision d = Decide(Rounds(2, 30, 1.0, 2.0, 0.01, 4), {}, std::nullopt, 4);
  CHECK(HasFinding(d.findings, FindingCode::kTooFewRounds));
}

TEST_CASE("a noisy speedup whose confidence bound reaches one is rejected") {
  DecisionOptions o;
  o.min_speedup = 1.0;
  // Heavy noise: the rounds may pass tau = 1 but the bound cannot exceed 1.
  const Decision d = Decide(Rounds(3, 30, 1.0, 1.02, 0.5, 5), o, std::nullopt, 5);
  CHECK(HasFinding(d.findings, FindingCode::kConfidenceTooLow));
}

TEST_CASE("a speedup beyond the roofline bound is rejected as implausible") {
  const Decision d = Decide(Rounds(3, 30, 1.0, 40.0, 0.01, 6), {}, 10.0, 6);
  CHECK(HasFinding(d.findings, FindingCode::kImplausibleSpeedup));
  const Decision ok = Decide(Rounds(3, 30, 1.0, 4.0, 0.01, 6), {}, 10.0, 6);
  CHECK(!HasFinding(ok.findings, FindingCode::kImplausibleSpeedup));
}

TEST_CASE("device times longer than their host-clock interval are a timer mismatch") {
  auto rounds = Rounds(3, 30, 1.0, 1.5, 0.01, 8);
  rounds[0].candidate_host_ms[3] = rounds[0].candidate_ms[3] * 0.5;
  CHECK(HasFinding(CheckClocks(rounds, {}), FindingCode::kTimerMismatch));
  CHECK(!HasFinding(CheckClocks(Rounds(3, 30, 1.0, 1.5, 0.01, 8), {}),
                    FindingCode::kTimerMismatch));
}

TEST_CASE("work that keeps the device busy after the end event is hidden work") {
  auto rounds = Rounds(3, 30, 1.0, 2.0, 0.01, 9);
  for (RoundSamples& r : rounds) {
    for (double& h : r.candidate_host_ms) h += 0.4;  // 0.4 ms past the events
  }
  CHECK(HasFinding(CheckClocks(rounds, {}), FindingCode::kHiddenWork));
  CHECK(!HasFinding(CheckClocks(Rounds(3, 30, 1.0, 2.0, 0.01, 9), {}),
                    FindingCode::kHiddenWork));
}

TEST_CASE("hidden work must show in most rounds, not in one disturbed round") {
  // Round 0 all 0.4 ms past its events, the other two rounds on 14 of 30
  // calls: over half of all calls (58 of 90), so the pooled medians pass
  // the limit, but only one round's own median does.
  auto rounds = Rounds(3, 30, 1.0, 2.0, 0.01, 11);
  for (size_t k = 0; k < rounds.size(); ++k) {
    auto& h = rounds[k].candidate_host_ms;
    for (size_t i = 0; i < h.size(); ++i) {
      if (k == 0 || i < 14) h[i] += 0.4;
    }
  }
  CHECK(!HasFinding(CheckClocks(rounds, {}), FindingCode::kHiddenWork));
  // The same tail on 16 calls of round 1: two rounds of three.
  for (size_t i = 14; i < 16; ++i) rounds[1].candidate_host_ms[i] += 0.4;
  const auto found = CheckClocks(rounds, {});
  REQUIRE(HasFinding(found, FindingCode::kHiddenWork));
  CHECK(found.back().message.find("2 of 3 rounds") != std::string::npos);
}

TEST_CASE("a tail small beside a slow candidate's own timed work is not hidden work") {
  // 100 ms calls (speedup 0.01) with the same 0.4 ms tail: under 10% of
  // the candidate's own time, it cannot make the candidate look faster.
  auto slow = Rounds(3, 30, 1.0, 0.01, 0.01, 9);
  for (RoundSamples& r : slow) {
    for (double& h : r.candidate_host_ms) h += 0.4;
  }
  CHECK(!HasFinding(CheckClocks(slow, {}), FindingCode::kHiddenWork));
  // A tail longer than 10% of that time still is.
  for (RoundSamples& r : slow) {
    for (double& h : r.candidate_host_ms) h += 20.0;
  }
  CHECK(HasFinding(CheckClocks(slow, {}), FindingCode::kHiddenWork));
}

TEST_CASE("equal inputs and seeds give equal decisions") {
  const auto rounds = Rounds(3, 30, 1.0, 1.1, 0.05, 10);
  const Decision a = Decide(rounds, {}, std::nullopt, 42);
  const Decision b = Decide(rounds, {}, std::nullopt, 42);
  CHECK(a.estimate.ci_low == b.estimate.ci_low);
  CHECK(a.estimate.ci_high == b.estimate.ci_high);
}

}  // namespace
}  // namespace skilldb::verify
