#include <string>

#include "analyzers.h"
#include "text_util.h"

namespace skilldb::retrieval::internal {

// Bytes at or below 0x20 (space, tabs, newlines and the other ASCII control
// characters) separate tokens; DEL too. Everything else, including UTF-8
// multi-byte sequences, is token content. Only ASCII letters are folded:
// this analyzer exists to index text that was tokenized elsewhere.
void WhitespaceAnalyzer::Analyze(std::string_view text,
                                 std::vector<std::string>* terms) const {
  std::string token;
  auto flush = [&] {
    if (!token.empty()) EmitTerm(std::move(token), terms);
    token.clear();
  };
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7f) {
      flush();
    } else {
      token.push_back((c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : ch);
    }
  }
  flush();
}

}  // namespace skilldb::retrieval::internal
