// The timing statistics and the speedup decision.
//
// The verifier measures rounds of interleaved baseline/candidate calls and
// hands them to Decide(), a pure function, which applies the reproducibility
// policy: at least `min_rounds` rounds, every round's ratio of medians at or
// above tau, a bootstrap confidence lower bound above 1, no speedup beyond
// the roofline bound, and host-clock cross-checks of the device timings.
//
// Everything here is a pure function of its arguments (the bootstrap draws
// from a seeded generator); thread-safe.
#ifndef SKILLDB_VERIFY_STATS_H_
#define SKILLDB_VERIFY_STATS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "skilldb/verifier.h"
#include "skilldb/verify/finding.h"

namespace skilldb::verify {

// Median of `v` (mean of the two middle values for even sizes); NaN if
// empty. Takes a copy because it reorders.
double Median(std::vector<double> v);
// Linear-interpolated quantile, q in [0, 1]; NaN if empty.
double Quantile(std::vector<double> v, double q);
// Sample standard deviation over mean; NaN with fewer than 2 values or a
// zero mean.
double CoefficientOfVariation(const std::vector<double>& v);

// One round's raw measurements, in call order. `*_ms` are the device-event
// (GPU) or monotonic-clock (host) times of each call; `*_host_ms` are the
// enclosing host-clock times of the same calls (launch to device-wide idle).
struct RoundSamples {
  std::vector<double> baseline_ms;
  std::vector<double> candidate_ms;
  std::vector<double> baseline_host_ms;   // may be empty: no clock checks
  std::vector<double> candidate_host_ms;  // same length as candidate_ms
};

struct DecisionOptions {
  // tau: every round at or above. Default: kDefaultMinSpeedup (1.05).
  double min_speedup = kDefaultMinSpeedup;
  int min_rounds = kDefaultMinRounds;  // Default: kDefaultMinRounds (3).
  double confidence = 0.95;   // two-sided level of the CI. Default: 0.95.
  int bootstrap_resamples = 2000;  // Default: 2000.
  // A call's device time may exceed its host-clock time by at most this
  // fraction plus `timer_slack_ms` (clock granularity). Default: 1%, 5 us.
  double timer_slack_fraction = 0.01;
  double timer_slack_ms = 0.005;
  // Hidden work: the candidate's median (host - device) excess may exceed
  // the baseline's by at most max(hidden_work_min_ms, hidden_work_fraction
  // * the larger of the baseline's and the candidate's medians). Default:
  // 20 us, 10%.
  double hidden_work_min_ms = 0.020;
  double hidden_work_fraction = 0.10;
};

struct Decision {
  std::vector<RoundTiming> rounds;  // per-round medians and ratios
  SpeedupEstimate estimate;         // median of round ratios + bootstrap CI
  std::vector<Finding> findings;    // empty iff the speedup is established
  bool faster() const { return findings.empty(); }
};

// Applies the policy to `rounds`. `max_plausible_speedup` (from the
// roofline) rejects larger ratios as implausible. `seed` drives the
// bootstrap; equal inputs give equal decisions.
Decision Decide(const std::vector<RoundSamples>& rounds,
                const DecisionOptions& options,
                std::optional<double> max_plausible_speedup, uint64_t seed);

// The bootstrap CI of the median-of-round-ratios statistic: calls are
// resampled with replacement within each round and side (stratified), and
// the statistic recomputed `resamples` times. Returns {lo, hi}.
std::pair<double, double> BootstrapRatioCi(
    const std::vector<RoundSamples>& rounds, double confidence, int resamples,
    uint64_t seed);

// Clock cross-checks alone (part of Decide): kTimerMismatch when a call's
// device time exceeds its host-clock time, kHiddenWork when the candidate's
// calls keep the device busy past their end event.
std::vector<Finding> CheckClocks(const std::vector<RoundSamples>& rounds,
                                 const DecisionOptions& options);

}  // namespace skilldb::verify

#endif  // SKILLDB_VERIFY_STATS_H_
