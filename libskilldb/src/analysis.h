// How a skill becomes index terms: per-field analysis with field weights.
// Internal.
#ifndef SKILLDB_LIBSKILLDB_ANALYSIS_H_
#define SKILLDB_LIBSKILLDB_ANALYSIS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "skilldb/options.h"
#include "skilldb/retrieval/analyzer.h"
#include "skilldb/skill.h"

namespace skilldb::internal {

using TermFreqs = std::vector<std::pair<std::string, uint32_t>>;

// Sets *freqs to the distinct terms of `skill` (sorted) with their weighted
// frequencies and returns the weighted length. Field by field: title,
// summary, body, tags, ops, code; each field's terms count `weight` times.
// With all weights 1 this is the analysis of IndexedText(skill).
uint32_t AnalyzeSkill(const retrieval::Analyzer& analyzer,
                      const FieldWeights& weights, const Skill& skill,
                      TermFreqs* freqs);

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_ANALYSIS_H_
