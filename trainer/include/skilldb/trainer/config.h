// The run configuration of `skilldb train --config FILE` (JSON) and of
// `skilldb train demo` (its defaults plus flags). Every field has a
// default; unknown keys are refused (a typo must not silently train with a
// default). The whole configuration is written into the run directory
// (config.json), rewards and advantage switches included.
#ifndef SKILLDB_TRAINER_CONFIG_H_
#define SKILLDB_TRAINER_CONFIG_H_

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"
#include "skilldb/trainer/advantages.h"
#include "skilldb/trainer/rewards.h"
#include "skilldb/trainer/sft_data.h"

namespace skilldb::trainer {

enum class LossAggregation { kTokenMean, kSequenceMean };
std::string_view LossAggregationName(LossAggregation a);  // token_mean, ...
Result<LossAggregation> ParseLossAggregation(std::string_view name);

struct OptimConfig {
  double lr = 1e-3;           // peak learning rate. Default: 1e-3.
  int warmup_steps = 5;       // linear warmup from 0. Default: 5.
  double weight_decay = 0.0;  // AdamW decoupled decay. Default: 0.
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double max_grad_norm = 1.0;  // clip; <= 0 = off. Default: 1.
  int micro_batch = 8;         // sequences per forward/backward. Default: 8.
  LossAggregation aggregation = LossAggregation::kTokenMean;
  double kl_coef = 0.0;       // KL to the frozen reference (k3); 0 = off.
  bool bf16_autocast = true;  // on CUDA only. Default: true.
};

struct TrainConfig {
  std::string model_dir;  // Hugging Face checkpoint; "" = the tiny fixture
  std::string backend = "host";  // verifier backend: host | cuda
  std::string device = "cpu";    // where the model runs: cpu | cuda
  std::string family;            // task family JSON; "" = the backend's
  std::string out_dir;           // run directory (required to run)
  uint64_t seed = 1;
  int steps = 20;
  int tasks_per_step = 1;  // tasks drawn per step (with replacement)
  int groups = 8;          // G rollout groups per task
  int max_turns = 2;       // T policy turns
  int max_new_tokens = 32;
  double temperature = 1.0;
  bool selection = true;  // Selection Agent stage (rerank over the backbone)
  bool summary = true;    // Summary Agent on successes
  // Verifier: few timed calls, one warmup call (CI speed).
  int verify_rounds = 1;
  int timed_calls = 5;
  int warmup_calls = 1;
  int host_workers = 1;
  AdvantageOptions advantages;
  RewardConfig rewards;
  OptimConfig optim;
  // SFT cold start before RL: records from sft_data (JSONL) or, when
  // empty, from sft_demo_records demonstrations of the task family.
  std::string sft_data;
  int sft_demo_records = 48;
  int sft_epochs = 3;
  double sft_lr = 5e-3;  // the cold start's peak rate. Default: 5e-3.
  SftFilterOptions sft_filter;
  int checkpoint_every = 0;  // steps; 0 = only at the end. Default: 0.
  std::string resume;        // checkpoint directory to resume from
};

Status ValidateTrainConfig(const TrainConfig& config);

// Errors: InvalidArgument naming the key (unknown, repeated, wrong type,
// out of its range).
Result<TrainConfig> TrainConfigFromJson(std::string_view json);
std::string TrainConfigToJson(const TrainConfig& config);

// Where a resumed run goes on: what the loop saved in a checkpoint's
// "extra" object (meta.json), checked before any step runs.
struct ResumePoint {
  int loop_step = 0;     // the next RL step, in [0, 1000000]
  std::mt19937_64 rng;   // the loop's generator, restored whole
  std::string pending_json;  // the summaries still pending ("" = none)
};

// Reads `extra_json` (`where` names it in errors, e.g. "CKPT/meta.json").
// loop_step and rng are required: a checkpoint without them, with a
// negative or huge step, or a generator state that does not parse whole is
// InvalidArgument naming the field (the file is the user's input).
Result<ResumePoint> ResumePointFromJson(std::string_view extra_json,
                                        const std::string& where);

// `skilldb train ARGS...` split into its command and the rest, in any
// order: "demo" or "report" wherever it stands (the first word that is not
// an option's value), else "config" when --config is given, else "help" for
// --help or -h. `rest` keeps every other argument in order.
// InvalidArgument naming the word for an unknown command, or when no
// command is given.
struct TrainCommandLine {
  std::string command;  // "demo" | "report" | "config" | "help"
  std::vector<std::string> rest;
};
Result<TrainCommandLine> SplitTrainCommand(
    const std::vector<std::string>& args);

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_CONFIG_H_
