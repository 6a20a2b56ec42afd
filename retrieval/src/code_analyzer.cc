#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <string>
#include <vector>

#include "analyzers.h"
#include "text_util.h"

namespace skilldb::retrieval::internal {
namespace {

enum class CharClass { kSeparator, kLower, kUpper, kDigit, kOther };

CharClass Classify(UChar32 c) {
  if (c == '_' || c == '.' || c == ':') return CharClass::kSeparator;
  if (u_isdigit(c)) return CharClass::kDigit;
  if (u_isupper(c) || u_istitle(c)) return CharClass::kUpper;
  if (u_islower(c)) return CharClass::kLower;
  return CharClass::kOther;  // apostrophes, letters without case, marks
}

// Splits an identifier-like word into its parts: at separators ('_', '.',
// ':'), at lower->Upper ("camelCase"), before the last capital of a capital
// run followed by a lower-case letter ("HTTPServer" -> HTTP, Server) and at
// letter<->digit boundaries ("float4", "m64n128k16").
std::vector<std::string_view> SplitIdentifier(std::string_view word) {
  std::vector<std::string_view> parts;
  const char* s = word.data();
  const int32_t n = static_cast<int32_t>(word.size());
  int32_t part_start = -1;
  CharClass prev = CharClass::kSeparator;
  int32_t prev_pos = 0;
  auto close = [&](int32_t end) {
    if (part_start >= 0 && end > part_start) {
      parts.push_back(word.substr(static_cast<size_t>(part_start),
                                  static_cast<size_t>(end - part_start)));
    }
    part_start = -1;
  };
  int32_t i = 0;
  while (i < n) {
    const int32_t pos = i;
    UChar32 c;
    U8_NEXT(s, i, n, c);
    const CharClass cls = c < 0 ? CharClass::kSeparator : Classify(c);
    if (cls == CharClass::kSeparator) {
      close(pos);
    } else if (part_start < 0) {
      part_start = pos;
    } else {
      const bool digit_edge =
          (cls == CharClass::kDigit) != (prev == CharClass::kDigit);
      const bool camel = prev == CharClass::kLower && cls == CharClass::kUpper;
      if (digit_edge || camel) {
        close(pos);
        part_start = pos;
      } else if (prev == CharClass::kUpper && cls == CharClass::kLower &&
                 prev_pos > part_start) {
        // "HTTPServer": the 'S' starts the next part.
        close(prev_pos);
        part_start = prev_pos;
      }
    }
    prev = cls;
    prev_pos = pos;
  }
  close(n);
  return parts;
}

std::string_view TrimSeparators(std::string_view word) {
  auto is_sep = [](char c) { return c == '_' || c == '.' || c == ':'; };
  while (!word.empty() && is_sep(word.front())) word.remove_prefix(1);
  while (!word.empty() && is_sep(word.back())) word.remove_suffix(1);
  return word;
}

}  // namespace

// Each word is analyzed as the standard analyzer would, unless it is an
// identifier with several parts: then the joined identifier (case-folded,
// outer separators trimmed, not stemmed, so `__shfl_down_sync` matches
// `shfl_down_sync`) is a term and so is every part (folded and stemmed, so
// `load_tiles` matches a query for "tiling").
void CodeAnalyzer::Analyze(std::string_view text,
                           std::vector<std::string>* terms) const {
  ForEachWord(text, [terms](std::string_view word) {
    std::vector<std::string_view> parts = SplitIdentifier(word);
    if (parts.size() <= 1) {
      std::string_view single =
          parts.empty() ? TrimSeparators(word) : parts.front();
      EmitTerm(Stem(FoldCase(single)), terms);
      return;
    }
    EmitTerm(FoldCase(TrimSeparators(word)), terms);
    for (std::string_view part : parts) EmitTerm(Stem(FoldCase(part)), terms);
  });
}

}  // namespace skilldb::retrieval::internal
