// Text helpers shared by the analyzers: Unicode word segmentation, case
// folding and stemming. Internal to the retrieval module.
//
// Every function here is safe for concurrent use: the ICU break iterator and
// the Snowball stemmer, which are not, are kept per thread.
#ifndef SKILLDB_RETRIEVAL_TEXT_UTIL_H_
#define SKILLDB_RETRIEVAL_TEXT_UTIL_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace skilldb::retrieval::internal {

// Calls `fn` with each word of `text` under Unicode word segmentation
// (UAX #29): runs of letters, digits, ideographs or kana, including the joiners
// UAX #29 keeps inside words ('_', and '.', ':' or an apostrophe between
// letters or digits). Punctuation, spaces and symbols are skipped.
void ForEachWord(std::string_view text,
                 const std::function<void(std::string_view)>& fn);

// Full Unicode case folding of a UTF-8 word (ASCII fast path).
std::string FoldCase(std::string_view word);

// English (Porter2) stem of an already case-folded word.
std::string Stem(std::string_view folded_word);

// Appends `term` to `terms` unless it is empty or longer than kMaxTermBytes.
void EmitTerm(std::string term, std::vector<std::string>* terms);

}  // namespace skilldb::retrieval::internal

#endif  // SKILLDB_RETRIEVAL_TEXT_UTIL_H_
