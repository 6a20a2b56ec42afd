#include "skilldb/retrieval/analyzer.h"

#include <string>

#include "analyzers.h"

namespace skilldb::retrieval {

std::string_view AnalyzerName(AnalyzerKind kind) {
  switch (kind) {
    case AnalyzerKind::kWhitespace:
      return "whitespace";
    case AnalyzerKind::kStandard:
      return "standard";
    case AnalyzerKind::kCode:
      return "code";
  }
  return "code";
}

Result<AnalyzerKind> ParseAnalyzerKind(std::string_view name) {
  for (AnalyzerKind kind : {AnalyzerKind::kWhitespace, AnalyzerKind::kStandard,
                            AnalyzerKind::kCode}) {
    if (name == AnalyzerName(kind)) return kind;
  }
  return Status::InvalidArgument("unknown analyzer '" + std::string(name) +
                                 "' (expected whitespace, standard or code)");
}

std::unique_ptr<Analyzer> MakeAnalyzer(AnalyzerKind kind) {
  switch (kind) {
    case AnalyzerKind::kWhitespace:
      return std::make_unique<internal::WhitespaceAnalyzer>();
    case AnalyzerKind::kStandard:
      return std::make_unique<internal::StandardAnalyzer>();
    case AnalyzerKind::kCode:
      return std::make_unique<internal::CodeAnalyzer>();
  }
  return std::make_unique<internal::CodeAnalyzer>();
}

}  // namespace skilldb::retrieval
