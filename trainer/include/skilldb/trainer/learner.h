// The learner: the shared backbone of the three agents as a trainable
// libtorch module, the REINFORCE / SFT objective on completion tokens only,
// AdamW with linear warmup, gradient clipping and accumulation, optional KL
// to a frozen reference, bf16 autocast on CUDA, data-parallel gradient
// all-reduce, and checkpoints that resume to the same next step bit for
// bit. This header has no torch in it (src/learner.cc is the torch TU), so
// the RL loop and the CLI compile without torch headers.
//
// Objective for a batch of sequences with advantages A_s (SFT: A_s = 1):
//   token_mean:    L = -sum_s A_s sum_t logp_st / (completion tokens)
//   sequence_mean: L = -mean_s A_s mean_t logp_st
// plus kl_coef x the same aggregate of the k3 estimator
//   exp(ref - logp) - (ref - logp) - 1 against the frozen reference.
// Micro-batches of optim.micro_batch sequences accumulate gradients scaled
// by the whole batch's normalizer, so the step equals one full-batch step.
// With a process group each rank normalizes by its own batch and the
// gradients are averaged across ranks before clipping.
//
// Thread safety: one thread drives a Learner; backbone() may be used by the
// agents from several threads between steps, never during Step/Load.
#ifndef SKILLDB_TRAINER_LEARNER_H_
#define SKILLDB_TRAINER_LEARNER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "skilldb/generation.h"
#include "skilldb/llm/backbone.h"
#include "skilldb/status.h"
#include "skilldb/trainer/config.h"

namespace skilldb::trainer {

class ProcessGroupHandle;  // distributed.h

struct TrainSequence {
  std::string agent;  // for per-agent token counts
  std::vector<int32_t> prompt_ids;
  std::vector<int32_t> completion_ids;  // trained on; may end with EOS
  double advantage = 1.0;
};

struct LearnerOptions {
  std::string device = "cpu";  // "cpu" | "cuda" | "cuda:N"
  OptimConfig optim;
  uint64_t seed = 1;        // torch's generators (CPU and CUDA)
  int cpu_threads = 1;      // libtorch intra-op threads; 0 = leave. Default: 1.
  int max_batch_rows = 64;  // generation rows per forward
  std::string model_name = "skilldb-trainer";
  std::shared_ptr<ProcessGroupHandle> process_group;  // null: one process
};

struct StepStats {
  int64_t step = 0;  // optimizer steps taken, this one included
  // False when the global gradient was exactly zero (every advantage 0 and
  // no KL term): the optimizer did not step, so Adam's moments from earlier
  // steps did not move the weights without a signal, and `step` and the
  // learning-rate schedule did not advance.
  bool applied = true;
  double loss = 0;   // objective + KL term (this rank)
  double pg_loss = 0;
  double kl = 0;         // aggregated k3 (0 when off)
  double grad_norm = 0;  // global norm before clipping
  double lr = 0;         // the rate this step used
  int64_t tokens = 0;    // completion tokens trained on (this rank)
  int sequences = 0;
  int micro_batches = 0;
  double seconds = 0;
  // Forward + backward positions a second, prompts included and counted
  // whole for every row (a shared prefix, run once, counts once per row).
  double tokens_per_s = 0;
  // Prompt positions run once for several rows (share_prefix): positions
  // the step did not compute again.
  int64_t shared_positions = 0;
};

struct CheckpointInfo {
  int64_t step = 0;               // the learner's optimizer step
  uint64_t library_version = 0;   // the library when it was written
  std::string extra_json = "{}";  // the caller's state (loop RNG, step)
};

class Learner {
 public:
  // Loads the checkpoint at `model_dir` (a Hugging Face Llama/Qwen2
  // directory; the fixtures under models/testdata work) twice when
  // optim.kl_coef > 0 (the frozen reference). Errors: the loader's,
  // InvalidArgument for bad options, Unavailable for a missing CUDA device.
  static Result<std::unique_ptr<Learner>> Create(const std::string& model_dir,
                                                 const LearnerOptions& options);
  ~Learner();

  // The module being trained as an llm::Backbone (the agents sample from
  // it). Valid while the Learner lives.
  llm::Backbone& backbone();

  // The chat as the agents' backbone formats it, generation prompt added.
  Result<std::vector<int32_t>> EncodePrompt(
      const std::vector<ChatMessage>& chat) const;
  // Plain text tokens (no special tokens), e.g. an SFT completion.
  Result<std::vector<int32_t>> EncodeText(const std::string& text) const;
  // The ids that end a completion (EOS, end of turn); the first is appended
  // to SFT completions.
  std::vector<int32_t> EosIds() const;

  // One optimizer step over `batch`. Sequences without completion tokens
  // are skipped. A zero global gradient (after the ranks' mean) takes no
  // step (StepStats::applied false), on every rank alike. With a process
  // group every rank must call Step each step: a rank whose batch has no
  // completion tokens contributes a zero gradient to the ranks' mean.
  // Errors: InvalidArgument when (without a process group) no sequence has
  // completion tokens or an id is out of
  // range or a sequence is longer than the model's context; Internal for a
  // torch failure (message kept).
  Result<StepStats> Step(const std::vector<TrainSequence>& batch);
  // The token-mean NLL of the completions (no gradients, no step).
  Result<double> MeanNll(const std::vector<TrainSequence>& batch);

  int64_t step() const;
  // Changes the peak rate of the following steps (the SFT cold start runs
  // at its own rate, RL at optim.lr).
  void SetLearningRate(double peak);
  // The rate the next step will use (linear warmup to optim.lr).
  double NextLearningRate() const;

  // Writes model.pt, reference.pt (with the KL term), optimizer.pt, rng.pt
  // and meta.json into `dir`
  // (created). Errors: IOError, Internal.
  Status SaveCheckpoint(const std::string& dir,
                        const CheckpointInfo& info) const;
  // Restores all of it. Errors: NotFound, Corruption (a tensor missing or
  // shaped differently), Internal.
  Result<CheckpointInfo> LoadCheckpoint(const std::string& dir);

  // Every parameter, flattened in named_parameters order, as float.
  std::vector<float> FlatParameters() const;
  size_t NumParameters() const;
  // One uniform draw from torch's default CPU generator (tests check that a
  // restored checkpoint continues the same stream).
  double RandomProbe();
  // Rank 0's parameters to every rank (no-op without a process group).
  Status BroadcastParameters();
  // The frozen reference of the KL term becomes a copy of the weights as
  // they are now: called after the cold start, so that RL is held near the
  // fine-tuned policy and not the checkpoint it was fine-tuned from. Kept
  // by SaveCheckpoint and restored by LoadCheckpoint. No-op when
  // optim.kl_coef is 0. Errors: Internal for a torch failure.
  Status AnchorReference();

  class Impl;

 private:
  explicit Learner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_LEARNER_H_
