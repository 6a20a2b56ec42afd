#include "analyzers.h"
#include "text_util.h"

namespace skilldb::retrieval::internal {

void StandardAnalyzer::Analyze(std::string_view text,
                               std::vector<std::string>* terms) const {
  ForEachWord(text, [terms](std::string_view word) {
    EmitTerm(Stem(FoldCase(word)), terms);
  });
}

}  // namespace skilldb::retrieval::internal
