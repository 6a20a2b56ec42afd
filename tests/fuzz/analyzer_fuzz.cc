// The three analyzers on arbitrary bytes (invalid UTF-8 included): they
// never crash, and every term keeps analyzer.h's promises (non-empty, at
// most kMaxTermBytes, no byte below 0x20). Analyzing is deterministic.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/retrieval/analyzer.h"

using skilldb::retrieval::AnalyzerKind;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto* analyzers = [] {
    auto* a = new std::vector<std::unique_ptr<skilldb::retrieval::Analyzer>>;
    for (AnalyzerKind k : {AnalyzerKind::kWhitespace, AnalyzerKind::kStandard,
                           AnalyzerKind::kCode}) {
      a->push_back(skilldb::retrieval::MakeAnalyzer(k));
    }
    return a;
  }();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const auto& analyzer : *analyzers) {
    const std::vector<std::string> terms = analyzer->Terms(text);
    for (const std::string& t : terms) {
      if (t.empty() || t.size() > skilldb::retrieval::kMaxTermBytes) {
        std::abort();
      }
      for (unsigned char c : t) {
        if (c < 0x20) std::abort();
      }
    }
    if (analyzer->Terms(text) != terms) std::abort();
  }
  return 0;
}
