// Analyzers turn text into the terms the index stores and queries look up.
//
// Three analyzers exist; a library picks one at creation and keeps it:
//   whitespace  split on ASCII whitespace and control characters, fold ASCII
//               upper case to lower case, nothing else;
//   standard    Unicode word segmentation (UAX #29 via ICU), full Unicode
//               case folding, English (Porter2 / Snowball) stemming;
//   code        standard, plus identifier splitting: camelCase, snake_case,
//               dotted names and letter/digit boundaries are split into
//               parts (each stemmed) while the joined identifier is kept as
//               a term too (`__shfl_down_sync` -> shfl_down_sync, shfl, down,
//               sync; `float4` -> float4, float, 4; `sm_90` -> sm_90, sm, 90).
//
// Terms never contain bytes below 0x20 (the index reserves them) and are at
// most kMaxTermBytes long; longer tokens are dropped.
//
// Analyzers are immutable after construction and safe for concurrent use.
#ifndef SKILLDB_RETRIEVAL_ANALYZER_H_
#define SKILLDB_RETRIEVAL_ANALYZER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::retrieval {

inline constexpr size_t kMaxTermBytes = 255;

// On-disk names are the strings below; the enum values are not stored.
enum class AnalyzerKind { kWhitespace, kStandard, kCode };

std::string_view AnalyzerName(AnalyzerKind kind);
// Returns InvalidArgument naming `name` and the accepted names if unknown.
Result<AnalyzerKind> ParseAnalyzerKind(std::string_view name);

class Analyzer {
 public:
  virtual ~Analyzer() = default;
  virtual AnalyzerKind kind() const = 0;

  // Appends the terms of `text`, in text order and with repetitions, to
  // `terms`. Invalid UTF-8 is treated as separators, never an error.
  virtual void Analyze(std::string_view text,
                       std::vector<std::string>* terms) const = 0;

  // Convenience form of Analyze.
  std::vector<std::string> Terms(std::string_view text) const {
    std::vector<std::string> terms;
    Analyze(text, &terms);
    return terms;
  }
};

std::unique_ptr<Analyzer> MakeAnalyzer(AnalyzerKind kind);

}  // namespace skilldb::retrieval

#endif  // SKILLDB_RETRIEVAL_ANALYZER_H_
