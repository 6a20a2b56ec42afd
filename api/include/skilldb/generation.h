// What a model call made by an agent is kept as: the chat it was given and
// the completion it produced, with token ids and logprobs where the backend
// returned them. Selections (reranker.h), policy turns and skill summaries
// all keep their model calls in this form, which is what the trainer learns
// from and what the rollout store records.
//
// Plain values; safe to copy and to share read-only across threads.
#ifndef SKILLDB_GENERATION_H_
#define SKILLDB_GENERATION_H_

#include <cstdint>
#include <string>
#include <vector>

namespace skilldb {

// One chat message. role: "system", "user" or "assistant".
struct ChatMessage {
  std::string role;
  std::string content;
  bool operator==(const ChatMessage&) const = default;
};

// One model call: prompt in, completion out.
struct GenerationRecord {
  std::string model;                // the backbone's model name
  std::vector<ChatMessage> prompt;  // the chat as the agent built it
  // The prompt as the model saw it (chat template applied) and its token
  // ids, when the backend reported them; "" / empty otherwise.
  std::string prompt_text;
  std::vector<int32_t> prompt_token_ids;
  std::string completion;
  // One id and one logprob per completion token, when reported.
  std::vector<int32_t> completion_token_ids;
  std::vector<double> completion_logprobs;
  bool operator==(const GenerationRecord&) const = default;
};

}  // namespace skilldb

#endif  // SKILLDB_GENERATION_H_
