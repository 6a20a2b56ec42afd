// The rerank endpoints' answers (Cohere shape and TEI's), read as the
// OpenAI answers are: every field checked before it is read, a malformed
// answer an error naming the request, never an exception. Pure functions;
// thread-safe.
#ifndef SKILLDB_LLM_SRC_RERANK_PROTOCOL_H_
#define SKILLDB_LLM_SRC_RERANK_PROTOCOL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "http_transport.h"
#include "skilldb/llm/rerank_client.h"

namespace skilldb::llm::internal {

// The scores of an answer to a request for `count` documents: each index
// in [0, count) at most once, each score finite. *tokens receives the
// Cohere shape's usage.total_tokens (0 when absent). Errors:
// InvalidArgument naming the request and what is wrong.
Result<std::vector<RerankScore>> ParseRerankAnswer(const HttpAnswer& answer,
                                                   RerankApi api,
                                                   size_t count,
                                                   uint64_t* tokens);

}  // namespace skilldb::llm::internal

#endif  // SKILLDB_LLM_SRC_RERANK_PROTOCOL_H_
