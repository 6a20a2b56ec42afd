// TextEncoder: texts -> fixed-size embedding vectors, the interface of a
// sentence-embedding model (models/'s Embedder implements it on libtorch).
// Retrieval code (rerank/'s dense stage) depends on this header alone, not
// on the model's runtime. Each implementation states its thread safety.
#ifndef SKILLDB_LLM_ENCODER_H_
#define SKILLDB_LLM_ENCODER_H_

#include <string>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::llm {

class TextEncoder {
 public:
  virtual ~TextEncoder() = default;

  // One embedding per text, in order, each of dimension() floats. Empty
  // texts embed too. Errors are the model's (Internal, Unavailable).
  virtual Result<std::vector<std::vector<float>>> Embed(
      const std::vector<std::string>& texts) = 0;

  // A name for people ("all-MiniLM-L6-v2", a directory).
  virtual const std::string& model_id() const = 0;
  // Identifies the weights (lower-case hex SHA-256): embeddings computed
  // with different weights are never mixed.
  virtual const std::string& weights_sha256() const = 0;
  virtual int dimension() const = 0;
};

}  // namespace skilldb::llm

#endif  // SKILLDB_LLM_ENCODER_H_
