// Reading a listwise reranker's answer: the model was shown candidates
// numbered [1]..[n] and asked for a ranking such as "[3] > [1] > [2]"; its
// answer is untrusted text that may wrap the ranking in prose, reasoning
// (<think> blocks), code fences, JSON or a numbered list, repeat ids, name
// ids that were never shown, or leave some out.
//
// Pure functions: safe to call from any thread.
#ifndef SKILLDB_RERANK_PERMUTATION_H_
#define SKILLDB_RERANK_PERMUTATION_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::rerank {

// Answers longer than this are read only up to it. Default of
// ParsePermutation's `max_answer_bytes`.
inline constexpr size_t kMaxAnswerBytes = size_t{64} << 10;

// A ranking read from an answer, as a full permutation.
struct ParsedPermutation {
  // 0-based candidate indices, a permutation of [0, n): first the ids the
  // answer ranked (first occurrence wins), then the ones it left out, in
  // ascending order (the order the candidates were shown in).
  std::vector<size_t> order;
  size_t ranked = 0;        // ids taken from the answer: order[0, ranked)
  size_t duplicates = 0;    // repeated mentions of an id, dropped
  size_t out_of_range = 0;  // ids outside [1, n], dropped
  size_t missing = 0;       // = n - ranked, appended
  // How the ranking was read: "chain" (ids joined by separators such as
  // ">" or ","), "mentions" (every bracketed id in order, e.g. a numbered
  // list of "[3] ..." lines) or "single" (an answer that is one id).
  std::string format;
  bool operator==(const ParsedPermutation&) const = default;
};

// Reads a ranking of the candidates numbered 1..n from `answer`.
//
// What is read: text after the last "</think>" when there is one; ids as
// "[3]", "[ 03 ]", JSON arrays "[3, 1, 2]", "(3)", "#3", labelled
// ("Passage 3", "doc 3", "candidate #3") or bare ("3 > 1 > 2", "3, 1, 2",
// and numbered lists whose line markers "1." are skipped). Bracketed ids
// are preferred to labelled ones, those to bare numbers. Among ids of one
// kind, the longest run joined only by separators (whitespace, > , ; | - =
// quotes, asterisks, arrows) is the ranking, the last one on a tie, so that
// prose mentioning ids before or after the ranking is ignored; without a
// run of two or more, every mention in order is.
//
// Errors: InvalidArgument when n is 0, when the answer holds an unfinished
// <think> block and nothing after it, or when no id in [1, n] can be read
// (the message says which). Never reads past `max_answer_bytes`.
Result<ParsedPermutation> ParsePermutation(
    std::string_view answer, size_t n,
    size_t max_answer_bytes = kMaxAnswerBytes);

// The part of a model's answer after its reasoning: the text after the last
// "</think>", or all of it when there is none. Sets *unfinished when the
// answer opens a <think> block it never closes (the text returned is then
// empty).
std::string_view StripThinking(std::string_view answer, bool* unfinished);

}  // namespace skilldb::rerank

#endif  // SKILLDB_RERANK_PERMUTATION_H_
