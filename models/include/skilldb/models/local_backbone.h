// The in-process llm::Backbone: a Llama / Qwen2 checkpoint run on libtorch
// (models/decoder.h), so the three agents can share one model with the
// trainer. This header has no torch in it.
//
// What the backend honours of llm::SamplingOptions: all of it. n samples
// per prompt are n rows of one batch; seed fixes the call's random stream
// (the same prompts, options and seed give the same samples on the same
// device). Stop strings end the text before them; the token ids still
// include the token that completed the stop string, and an EOS token is
// included in token_ids (not in text). token_logprobs are under the model
// itself (temperature 1, no top-k/top-p), as vLLM reports them.
// Score runs the completion, tokenized on its own, after the prompt with the
// generation prompt (no EOS appended).
//
// Concurrency: safe for use from several threads; requests run one at a
// time, each batching its rows (at most max_batch_rows per forward).
#ifndef SKILLDB_MODELS_LOCAL_BACKBONE_H_
#define SKILLDB_MODELS_LOCAL_BACKBONE_H_

#include <memory>
#include <string>

#include "skilldb/llm/backbone.h"
#include "skilldb/status.h"

namespace skilldb::models {

struct LocalBackboneOptions {
  std::string device = "cpu";  // "cpu", "cuda", "cuda:N". Default: cpu.
  // "auto" (bfloat16 on CUDA, float32 on CPU), "float32", "bfloat16",
  // "float16". Default: auto.
  std::string dtype = "auto";
  // Rows (prompts x n, or scored requests) per forward. Default: 64.
  int max_batch_rows = 64;
  bool cuda_graphs = true;  // decode steps from CUDA graphs. Default: true.
  // libtorch intra-op threads (process-wide); 0 leaves the setting alone.
  int cpu_threads = 0;
  // What Model() answers. Default: the checkpoint directory.
  std::string model_name;
};

// Loads the checkpoint at `dir`. Errors: those of DecoderModel::Load, and
// NotFound / NotSupported when it has no chat template this module knows
// (a Backbone speaks chats), InvalidArgument for bad options, Unavailable
// for a CUDA device that is not there.
Result<std::unique_ptr<llm::Backbone>> OpenLocalBackbone(
    const std::string& dir, const LocalBackboneOptions& options = {});

}  // namespace skilldb::models

#endif  // SKILLDB_MODELS_LOCAL_BACKBONE_H_
