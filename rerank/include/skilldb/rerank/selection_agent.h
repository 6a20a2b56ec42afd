// SelectionAgent: the Skill Selection Agent as the policy agent and the
// trainer see it. One Select call retrieves the BM25 candidates of a task
// (Library::Query with the fields a prompt needs and the caller's
// filters), lets the reranker order them, records the `retrieved` and
// `selected` usage events in one batched write, and returns the selection:
// the chosen skills with their BM25 and final ranks, and the model calls
// (GenerationRecords with prompt and completion tokens and logprobs, when
// the backend gives them) that the trainer learns from.
//
// A SelectionAgent is safe for concurrent use by multiple threads when its
// Library and Reranker are (Library always is; ModelReranker is over a
// thread-safe backend).
#ifndef SKILLDB_RERANK_SELECTION_AGENT_H_
#define SKILLDB_RERANK_SELECTION_AGENT_H_

#include <cstddef>
#include <string_view>

#include "skilldb/library.h"
#include "skilldb/options.h"
#include "skilldb/reranker.h"
#include "skilldb/status.h"

namespace skilldb::rerank {

struct SelectionOptions {
  size_t k = 5;            // skills selected, >= 1. Default: 5.
  size_t candidates = 20;  // BM25 candidates reranked, >= k. Default: 20.
  // The BM25 query: filters (ops, language, arch, tags, status), as_of and
  // extra fields. Its k is replaced by `candidates`, its fields always
  // include title, summary and body (what the prompts show), and
  // record_retrieved is ignored (see record_usage).
  QueryOptions query;
  // Record `retrieved` for every candidate and `selected` for every
  // selected skill, in one batched RecordUsage call. Default: true.
  bool record_usage = true;
};

struct Selection {
  Version version = 0;        // the library version the candidates come from
  size_t num_candidates = 0;  // BM25 hits the reranker was given
  // hits: the selected skills, best first (at most k), each with its BM25
  // rank and final score; applied/reason say whether the model shaped the
  // order; generations hold its model calls.
  RerankResult result;
  // How recording usage went: OK, not asked, or why the library refused
  // (for instance a skill deleted since the query). Never fails the
  // selection.
  Status usage;
};

class SelectionAgent {
 public:
  // `library` and `reranker` are not owned and must outlive the agent; a
  // null reranker selects by BM25 alone (result.mode "bm25").
  SelectionAgent(Library* library, Reranker* reranker)
      : library_(library), reranker_(reranker) {}

  // Selects skills for `task` (the retrieval query). Errors: those of
  // Library::Query (NotFound for an unretained as_of, InvalidArgument for
  // bad options) and InvalidArgument for k == 0 or candidates < k. A model
  // failure is not an error (the result keeps BM25 order with the reason).
  Result<Selection> Select(std::string_view task,
                           const SelectionOptions& options) const;

 private:
  Library* const library_;
  Reranker* const reranker_;
};

}  // namespace skilldb::rerank

#endif  // SKILLDB_RERANK_SELECTION_AGENT_H_
