// The run configuration of `skilldb train --config FILE` (JSON) and of
// `skilldb train demo` (its defaults plus flags). Every field has a
// default; unknown keys are refused (a typo must not silently train with a
// default). The whole configuration is written into the run directory
// (config.json), rewards and advantage switches included.
#ifndef SKILLDB_TRAINER_CONFIG_H_
#define SKILLDB_TRAINER_CONFIG_H_

#include <cstdint>
#include <random>
#include <span>
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
  // The samples of one prompt go to micro-batches of their own (a group
  // larger than micro_batch to several), and a micro-batch's common prompt
  // prefix (16 tokens or more) runs once for all its rows: the same loss
  // and gradients up to float rounding, the prompt of a group of samples
  // paid once per micro-batch. Default: true.
  bool share_prefix = true;
};

// The loop's fixed numbers: what the agents are shown and how the seeds
// are derived (the "loop" object of the config). The defaults are the
// values the learning test and the measured runs (README) use.
struct LoopConfig {
  // The Selection Agent ranks retrieve_k BM25 candidates; the policy's
  // prompt gets the first select_k. Defaults: 6 and 2.
  int retrieve_k = 6;
  int select_k = 2;
  // The family prompt (bytes): the task description, at most skills_shown
  // skill titles of skill_title_bytes, each earlier answer and its
  // verifier feedback. Defaults: 400, 3, 80, 200, 240.
  int description_bytes = 400;
  int skills_shown = 3;
  int skill_title_bytes = 80;
  int answer_bytes = 200;
  int feedback_bytes = 240;
  // The Selection Agent's listwise prompt (bytes of title, summary and
  // query per candidate) and its answer ("[3] > [1] > ..." for a window of
  // six). Defaults: 80, 120, 300 bytes; 24 tokens.
  int rerank_title_bytes = 80;
  int rerank_summary_bytes = 120;
  int rerank_query_bytes = 300;
  int rerank_max_tokens = 24;
  // The Summary Agent: answers tried per distillation and tokens per
  // answer. Defaults: 1 and 96.
  int summary_attempts = 1;
  int summary_max_tokens = 96;
  // The fixture model's context window in the run directory (rotary
  // positions: only the config's limit changes). Default: 4096.
  int fixture_context_tokens = 4096;
  // Seeds: rollout (task t, group g) of step s on rank r draws
  // Mix(seed ^ Mix(s * rollout_step_stride + t * rollout_task_stride + g)
  // ^ r << 48); its selection samples with that seed ^ selection_salt; the
  // Summary Agent with Mix(seed ^ summary_salt); the loop's shuffling RNG
  // starts at Mix(seed * rank_stride + r). Defaults: 1000003, 1009,
  // 0x5e1ec7, 0x5e55a9e5, 7919.
  uint64_t rollout_step_stride = 1000003;
  uint64_t rollout_task_stride = 1009;
  uint64_t selection_salt = 0x5e1ec7;
  uint64_t summary_salt = 0x5e55a9e5;
  uint64_t rank_stride = 7919;
  // Co-evolution (trainer/README.md, "Co-evolution"); the defaults leave it
  // off. The policy prompt shows each skill's code pattern, cut to
  // skill_code_bytes (0: titles only). Default: 0.
  int skill_code_bytes = 0;
  // Cold-start demonstrations besides the format ones: skill_demo_records
  // policy prompts showing a skill that states parameters, answered with
  // them (reading a skill, not which parameters are good), and
  // summary_demo_records summary-role records (verified parameters in, a
  // skill stating them out), both through the same diversity filter.
  // Defaults: 0 and 0.
  int skill_demo_records = 0;
  int summary_demo_records = 0;
  // The Summary Agent prompts with the family's short prompt (the task and
  // the verified parameters) instead of its own (task, kernel source,
  // attempts: thousands of tokens for the fixture). Default: false.
  bool family_summary_prompt = false;
  // Distillations per step at most (the first solved rollouts); 0 = every
  // solved rollout. Default: 0.
  int summaries_per_step = 0;
  // The Summary Agent's sampling temperature; < 0 = the run's. Default: -1.
  double summary_temperature = -1;
};

// KernelBench problems as the task source (the "kernelbench" object of the
// config; trainer/README.md, "KernelBench tasks"). Set `store` to train on
// them instead of the template family: each step draws tasks_per_step
// problems of `train`; the problems of `heldout` are never trained on and
// are evaluated every eval_every steps (fast_p and pass rate in the step
// line). The policy answers through an answer template per problem (a task
// family file, param_task.h, whose task is "kernelbench/level<L>/<id>" and
// whose template renders a KernelBench answer: a ModelNew), so the small
// models the trainer uses can learn which variant is fast; rewards are the
// KernelBench evaluator's (the confined torch runner).
struct KernelBenchConfig {
  std::string store;         // the task store (kernelbench import); "" = off
  int level = 1;             // the problems' level. Default: 1.
  std::vector<int> train;    // problem ids trained on (non-empty)
  std::vector<int> heldout;  // problem ids evaluated only (non-empty)
  // The answers' format: "cpp" (load_inline cpp_sources on CPU tensors:
  // backend host), "cuda" or "triton" (backend cuda). Default: "cpp".
  std::string format = "cpp";
  // The answer templates: DIR/level<L>_<id>.json for every problem of
  // train and heldout. Required with `store`.
  std::string families;
  // How the policy answers: "template" (the answer template's prompt; the
  // completion is its parameters) or "free" (the Policy Agent's
  // KernelBench prompt, policy/kernelbench_answer.h: the problem's source,
  // the selected skills, the format and the device, from the second turn
  // the earlier answers and the verifier's feedback on each, at most
  // 16,000 bytes; the completion is read by its extractor into a ModelNew
  // the verifier judges, and a completion it cannot use earns reward 0
  // with the reason in the rollout's extraction). The templates are still
  // read with "free": the cold start demonstrates an answer as a template
  // renders it (no skill or summary demonstrations), and
  // loop.family_summary_prompt, which reads template parameters, is
  // refused. The prompt is some thousands of tokens: the fixture model
  // needs a larger loop.fixture_context_tokens. Default: "template".
  std::string answers = "template";
  int eval_every = 0;          // held-out evaluation every N steps; 0 = never.
  std::string python;          // the runner's interpreter; "" = the default
  std::string cache_dir;       // builds and baselines; "" = the user cache dir
  int correctness_trials = 5;  // per answer. Default: 5 (KernelBench's).
  bool enabled() const { return !store.empty(); }
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
  // Skills at all: false retrieves nothing, shows no skill and runs neither
  // the Selection nor the Summary Agent (the ablation's no-skill arm; the
  // frozen-library arm is summary = false). Default: true.
  bool skills = true;
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
  LoopConfig loop;
  KernelBenchConfig kernelbench;
};

// Errors: InvalidArgument naming the key (a value out of its range; for
// kernelbench: empty, repeated or overlapping train and heldout ids, a
// format that is not the backend's, answers neither template nor free,
// free answers with loop.family_summary_prompt).
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
// The --kb-* flags of `skilldb train` (train_command.h
// ApplyKernelBenchFlags), each with the key of the "kernelbench" object it
// sets; each takes one value.
struct KernelBenchFlag {
  std::string_view flag;  // "--kb-train"
  std::string_view key;   // "train"
};
std::span<const KernelBenchFlag> KernelBenchFlags();
bool IsKernelBenchFlag(std::string_view arg);

struct TrainCommandLine {
  std::string command;  // "demo" | "report" | "config" | "help"
  std::vector<std::string> rest;
};
Result<TrainCommandLine> SplitTrainCommand(
    const std::vector<std::string>& args);

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_CONFIG_H_
