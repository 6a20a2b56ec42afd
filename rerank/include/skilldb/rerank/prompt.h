// The prompts the reranking modes send: how a candidate skill is shown to a
// model (id, title, summary and a bounded excerpt of the body), the
// listwise ranking prompt (RankGPT's numbered passages) and the pointwise
// yes/no prompt (Qwen3-Reranker's instruct/query/document layout).
//
// Pure functions: safe to call from any thread.
#ifndef SKILLDB_RERANK_PROMPT_H_
#define SKILLDB_RERANK_PROMPT_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/library.h"
#include "skilldb/llm/backbone.h"

namespace skilldb::rerank {

// How much of each candidate and of the query a prompt carries. Text is
// whitespace-collapsed, cut at a UTF-8 boundary (preferring a word
// boundary) and marked "…" when cut.
struct PromptOptions {
  bool include_id = true;          // the skill's slug. Default: true.
  size_t max_title_bytes = 200;    // Default: 200.
  size_t max_summary_bytes = 600;  // Default: 600.
  size_t max_excerpt_bytes = 600;  // of the body; 0 = none. Default: 600.
  size_t max_query_bytes = 2000;   // Default: 2000.
  bool operator==(const PromptOptions&) const = default;
};

// A short, stable text of the options, for cache keys.
std::string Fingerprint(const PromptOptions& options);

// `text` with whitespace runs collapsed to one space, trimmed, invalid
// UTF-8 replaced by '?', and cut to at most `max_bytes` bytes plus the
// three of "…" when longer.
std::string Clip(std::string_view text, size_t max_bytes);

// How a candidate appears in a prompt: "id: title\nsummary\nexcerpt", each
// part present only when the hit carries it (the id alone when it carries
// nothing).
std::string CandidateText(const Hit& hit, const PromptOptions& options);

// The listwise chat: the query, then the window's candidates numbered [1]
// .. [n] in the order given, and the instruction to answer with a ranking
// "[2] > [1] > ...". REQUIRES: window non-empty.
llm::Chat ListwisePrompt(std::string_view query,
                         const std::vector<const Hit*>& window,
                         const PromptOptions& options);

// The instruction of the pointwise prompt (Qwen3-Reranker's <Instruct>).
inline constexpr std::string_view kPointwiseInstruction =
    "Given a GPU kernel programming task, judge whether this skill helps "
    "write a correct, fast kernel for it";

// The pointwise chat for one candidate: a system message asking for "yes"
// or "no" only, and a user message "<Instruct>: ...\n<Query>: ...\n
// <Document>: ...".
llm::Chat PointwisePrompt(std::string_view query, const Hit& hit,
                          std::string_view instruction,
                          const PromptOptions& options);

}  // namespace skilldb::rerank

#endif  // SKILLDB_RERANK_PROMPT_H_
