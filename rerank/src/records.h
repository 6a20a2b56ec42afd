// Internal helpers shared by the judges: model calls as GenerationRecords
// (generation.h), and deadlines.
#ifndef SKILLDB_RERANK_SRC_RECORDS_H_
#define SKILLDB_RERANK_SRC_RECORDS_H_

#include <chrono>
#include <string>
#include <vector>

#include "skilldb/generation.h"
#include "skilldb/llm/backbone.h"

namespace skilldb::rerank::internal {

inline std::vector<ChatMessage> ToMessages(const llm::Chat& chat) {
  std::vector<ChatMessage> out;
  out.reserve(chat.size());
  for (const llm::Message& m : chat) out.push_back({m.role, m.content});
  return out;
}

// One sampled completion of `chat` as the trainer keeps it.
inline GenerationRecord ToRecord(const std::string& model,
                                 const llm::Chat& chat,
                                 const llm::Generation& generation,
                                 const llm::Sample& sample) {
  GenerationRecord r;
  r.model = model;
  r.prompt = ToMessages(chat);
  r.prompt_text = generation.prompt_text;
  r.prompt_token_ids = generation.prompt_token_ids;
  r.completion = sample.text;
  r.completion_token_ids = sample.token_ids;
  r.completion_logprobs = sample.token_logprobs;
  return r;
}

// A wall-clock budget; 0 ms = none.
class Deadline {
 public:
  explicit Deadline(int budget_ms)
      : budget_ms_(budget_ms), start_(std::chrono::steady_clock::now()) {}
  bool expired() const {
    if (budget_ms_ <= 0) return false;
    return std::chrono::steady_clock::now() - start_ >=
           std::chrono::milliseconds(budget_ms_);
  }
  int budget_ms() const { return budget_ms_; }

 private:
  int budget_ms_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace skilldb::rerank::internal

#endif  // SKILLDB_RERANK_SRC_RECORDS_H_
