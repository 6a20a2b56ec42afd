// The three Analyzer implementations (one .cc file each). Internal.
#ifndef SKILLDB_RETRIEVAL_ANALYZERS_H_
#define SKILLDB_RETRIEVAL_ANALYZERS_H_

#include "skilldb/retrieval/analyzer.h"

namespace skilldb::retrieval::internal {

class WhitespaceAnalyzer final : public Analyzer {
 public:
  AnalyzerKind kind() const override { return AnalyzerKind::kWhitespace; }
  void Analyze(std::string_view text,
               std::vector<std::string>* terms) const override;
};

class StandardAnalyzer final : public Analyzer {
 public:
  AnalyzerKind kind() const override { return AnalyzerKind::kStandard; }
  void Analyze(std::string_view text,
               std::vector<std::string>* terms) const override;
};

class CodeAnalyzer final : public Analyzer {
 public:
  AnalyzerKind kind() const override { return AnalyzerKind::kCode; }
  void Analyze(std::string_view text,
               std::vector<std::string>* terms) const override;
};

}  // namespace skilldb::retrieval::internal

#endif  // SKILLDB_RETRIEVAL_ANALYZERS_H_
