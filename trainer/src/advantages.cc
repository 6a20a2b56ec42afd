#include "skilldb/trainer/advantages.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace skilldb::trainer {

std::string_view BaselineName(Baseline baseline) {
  switch (baseline) {
    case Baseline::kLeaveOneOut:
      return "loo";
    case Baseline::kBatchMean:
      return "batch_mean";
    case Baseline::kNone:
      return "none";
  }
  return "none";
}

std::string_view NormalizationName(Normalization normalization) {
  switch (normalization) {
    case Normalization::kPerAgent:
      return "per_agent";
    case Normalization::kGlobal:
      return "global";
    case Normalization::kNone:
      return "none";
  }
  return "none";
}

Result<Baseline> ParseBaseline(std::string_view name) {
  for (Baseline b :
       {Baseline::kLeaveOneOut, Baseline::kBatchMean, Baseline::kNone}) {
    if (name == BaselineName(b)) return b;
  }
  return Status::InvalidArgument("unknown baseline '" + std::string(name) +
                                 "' (expected loo, batch_mean or none)");
}

Result<Normalization> ParseNormalization(std::string_view name) {
  for (Normalization n : {Normalization::kPerAgent, Normalization::kGlobal,
                          Normalization::kNone}) {
    if (name == NormalizationName(n)) return n;
  }
  return Status::InvalidArgument("unknown normalization '" + std::string(name) +
                                 "' (expected per_agent, global or none)");
}

Status ValidateAdvantageOptions(const AdvantageOptions& options) {
  if (!(options.gamma >= 0 && options.gamma <= 1)) {
    return Status::InvalidArgument("advantages: gamma must be in [0, 1]");
  }
  if (!(options.std_epsilon >= 0)) {
    return Status::InvalidArgument("advantages: std_epsilon must be >= 0");
  }
  return Status::Ok();
}

Stats Summarize(const std::vector<double>& values) {
  Stats s;
  s.count = values.size();
  if (values.empty()) return s;
  double sum = 0;
  s.min = values[0];
  s.max = values[0];
  for (double v : values) {
    sum += v;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
  }
  s.mean = sum / values.size();
  double sq = 0;
  for (double v : values) sq += (v - s.mean) * (v - s.mean);
  s.std = std::sqrt(sq / values.size());
  return s;
}

std::map<std::string, Stats> StatsPerAgent(const std::vector<Decision>& batch,
                                           const std::vector<double>& values) {
  std::map<std::string, std::vector<double>> grouped;
  for (size_t i = 0; i < batch.size() && i < values.size(); ++i) {
    grouped[batch[i].agent].push_back(values[i]);
  }
  std::map<std::string, Stats> out;
  for (auto& [agent, v] : grouped) out[agent] = Summarize(v);
  return out;
}

namespace {

// Subtracts the mean of `idx`'s values and divides by their std.
void Standardize(const std::vector<size_t>& idx, double eps,
                 std::vector<double>& a) {
  std::vector<double> v;
  v.reserve(idx.size());
  for (size_t i : idx) v.push_back(a[i]);
  Stats s = Summarize(v);
  for (size_t i : idx) a[i] = (a[i] - s.mean) / (s.std + eps);
}

}  // namespace

Result<AdvantageResult> ComputeAdvantages(const std::vector<Decision>& batch,
                                          const AdvantageOptions& options) {
  SKILLDB_RETURN_IF_ERROR(ValidateAdvantageOptions(options));
  const size_t n = batch.size();
  AdvantageResult out;
  out.returns.assign(n, 0.0);
  out.advantages.assign(n, 0.0);

  // 1. Discounted returns along each (rollout, agent) sequence.
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> seqs;
  for (size_t i = 0; i < n; ++i) {
    seqs[{batch[i].rollout, batch[i].agent}].push_back(i);
  }
  for (auto& [key, idx] : seqs) {
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      return batch[a].turn < batch[b].turn;
    });
    for (size_t k = 1; k < idx.size(); ++k) {
      if (batch[idx[k]].turn == batch[idx[k - 1]].turn) {
        return Status::InvalidArgument(
            "advantages: rollout '" + key.first + "' has two '" + key.second +
            "' decisions at turn " + std::to_string(batch[idx[k]].turn));
      }
    }
    double g = 0;
    for (size_t k = idx.size(); k-- > 0;) {
      const size_t i = idx[k];
      // Turns missing from the sequence (a gap) discount as if present.
      if (k + 1 < idx.size()) {
        const int gap = batch[idx[k + 1]].turn - batch[i].turn;
        g = std::pow(options.gamma, gap) * g;
      }
      g = batch[i].reward + g;
      out.returns[i] = g;
    }
  }

  // 2. Baseline.
  std::vector<double>& a = out.advantages;
  switch (options.baseline) {
    case Baseline::kNone:
      a = out.returns;
      break;
    case Baseline::kBatchMean: {
      Stats s = Summarize(out.returns);
      for (size_t i = 0; i < n; ++i) a[i] = out.returns[i] - s.mean;
      break;
    }
    case Baseline::kLeaveOneOut: {
      std::map<std::tuple<std::string, std::string, int>, std::vector<size_t>>
          groups;
      for (size_t i = 0; i < n; ++i) {
        groups[{batch[i].task, batch[i].agent, batch[i].turn}].push_back(i);
      }
      for (auto& [key, idx] : groups) {
        if (idx.size() == 1) {
          a[idx[0]] = out.returns[idx[0]];
          continue;
        }
        double sum = 0;
        for (size_t i : idx) sum += out.returns[i];
        const double others = static_cast<double>(idx.size() - 1);
        for (size_t i : idx) {
          a[i] = out.returns[i] - (sum - out.returns[i]) / others;
        }
      }
      break;
    }
  }

  // 3. Normalization.
  if (options.normalization == Normalization::kGlobal && n > 0) {
    std::vector<size_t> all(n);
    for (size_t i = 0; i < n; ++i) all[i] = i;
    Standardize(all, options.std_epsilon, a);
  } else if (options.normalization == Normalization::kPerAgent) {
    std::map<std::string, std::vector<size_t>> per_agent;
    for (size_t i = 0; i < n; ++i) per_agent[batch[i].agent].push_back(i);
    for (auto& [agent, idx] : per_agent) {
      Standardize(idx, options.std_epsilon, a);
    }
  }
  return out;
}

}  // namespace skilldb::trainer
