#include "pretokenize.h"

#include "unicode.h"

namespace skilldb::models::internal {
namespace {

constexpr std::string_view kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

bool L(char32_t c) { return IsLetter(c); }
bool N(char32_t c) { return IsNumber(c); }
bool S(char32_t c) { return IsWhiteSpace(c); }
// [^\s\p{L}\p{N}]
bool O(char32_t c) { return !S(c) && !L(c) && !N(c); }
bool CrLf(char32_t c) { return c == '\r' || c == '\n'; }

// Under (?i), Oniguruma folds case with Unicode's simple folding: besides
// ASCII, U+017F (long s) folds to 's'. No other code point folds to the
// letters of these contractions.
char32_t FoldContractionLetter(char32_t c, bool ignore_case) {
  if (!ignore_case) return c;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 'a';
  if (c == 0x17F) return 's';
  return c;
}

// 's|'t|'re|'ve|'m|'ll|'d at s[i], optionally case-insensitive.
size_t MatchContraction(const std::u32string_view s, size_t i,
                        bool ignore_case) {
  if (s[i] != '\'' || i + 1 >= s.size()) return 0;
  const char32_t a = FoldContractionLetter(s[i + 1], ignore_case);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (i + 2 >= s.size()) return 0;
  const char32_t b = FoldContractionLetter(s[i + 2], ignore_case);
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') ||
      (a == 'l' && b == 'l')) {
    return 3;
  }
  return 0;
}

size_t RunEnd(const std::u32string_view s, size_t j, bool (*pred)(char32_t)) {
  while (j < s.size() && pred(s[j])) ++j;
  return j;
}

// The whitespace alternatives shared by all three patterns; `newline_rule`
// adds Qwen2/Llama 3's \s*[\r\n]+ in front. Returns 0 when s[i] is not
// whitespace.
size_t MatchWhitespace(const std::u32string_view s, size_t i,
                       bool newline_rule) {
  if (!S(s[i])) return 0;
  const size_t end = RunEnd(s, i, S);
  if (newline_rule) {
    // \s* backtracks from the end of the run to the last CR/LF in it; the
    // greedy [\r\n]+ then takes just that one (what follows it in the run is
    // not CR/LF, by the choice of the last).
    for (size_t k = end; k > i; --k) {
      if (CrLf(s[k - 1])) return k - i;
    }
  }
  // \s+(?!\S): the whole run at the end of the text, else all but its last
  // character (which must stay before the non-space); a run of one falls
  // through to \s+.
  if (end == s.size()) return end - i;
  if (end - i >= 2) return end - 1 - i;
  return end - i;
}

size_t MatchGpt2(const std::u32string_view s, size_t i) {
  if (size_t m = MatchContraction(s, i, /*ignore_case=*/false)) return m;
  const size_t j = (s[i] == ' ' && i + 1 < s.size()) ? i + 1 : i;
  for (bool (*pred)(char32_t) : {L, N, O}) {
    if (pred(s[j])) return RunEnd(s, j, pred) - i;
    if (j != i && pred(s[i])) return RunEnd(s, i, pred) - i;
  }
  return MatchWhitespace(s, i, /*newline_rule=*/false);
}

size_t MatchQwenFamily(const std::u32string_view s, size_t i,
                       size_t max_digits) {
  const size_t n = s.size();
  if (size_t m = MatchContraction(s, i, /*ignore_case=*/true)) return m;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (L(s[i])) return RunEnd(s, i, L) - i;
  if (!CrLf(s[i]) && !N(s[i]) && i + 1 < n && L(s[i + 1])) {
    return RunEnd(s, i + 1, L) - i;
  }
  // \p{N} or \p{N}{1,3}
  if (N(s[i])) {
    size_t j = i;
    while (j < n && j - i < max_digits && N(s[j])) ++j;
    return j - i;
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  size_t j = (s[i] == ' ' && i + 1 < n && O(s[i + 1])) ? i + 1 : i;
  if (O(s[j])) {
    j = RunEnd(s, j, O);
    return RunEnd(s, j, CrLf) - i;
  }
  return MatchWhitespace(s, i, /*newline_rule=*/true);
}

bool IsChineseChar(char32_t c) {
  // The CJK blocks BERT pads with spaces (its tokenization.py).
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool IsBertPunctuation(char32_t c) {
  const bool ascii_punct = (c >= 0x21 && c <= 0x2F) ||
                           (c >= 0x3A && c <= 0x40) ||
                           (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
  return ascii_punct || IsPunctuation(c);
}

std::u32string BertNormalize(const NormalizerStep& step, std::u32string in) {
  std::u32string out;
  out.reserve(in.size());
  if (step.clean_text) {
    for (char32_t c : in) {
      const bool tab_or_newline = c == '\t' || c == '\n' || c == '\r';
      if (c == 0 || c == 0xFFFD || (!tab_or_newline && IsOther(c))) continue;
      out.push_back(tab_or_newline || IsWhiteSpace(c) ? U' ' : c);
    }
    in.swap(out);
    out.clear();
  }
  if (step.handle_chinese_chars) {
    for (char32_t c : in) {
      if (IsChineseChar(c)) {
        out.push_back(' ');
        out.push_back(c);
        out.push_back(' ');
      } else {
        out.push_back(c);
      }
    }
    in.swap(out);
    out.clear();
  }
  if (step.strip_accents.value_or(step.lowercase)) {
    for (char32_t c : Nfd(in)) {
      if (!IsNonspacingMark(c)) out.push_back(c);
    }
    in.swap(out);
    out.clear();
  }
  if (step.lowercase) {
    for (char32_t c : in) AppendLowercase(c, out);
    in.swap(out);
  }
  return in;
}

}  // namespace

std::optional<SplitPattern> RecognizeSplitPattern(std::string_view regex) {
  if (regex == kGpt2Regex) return SplitPattern::kGpt2;
  if (regex == kQwen2Regex) return SplitPattern::kQwen2;
  if (regex == kLlama3Regex) return SplitPattern::kLlama3;
  return std::nullopt;
}

std::vector<std::u32string_view> SplitByPattern(SplitPattern pattern,
                                                std::u32string_view text) {
  std::vector<std::u32string_view> pieces;
  size_t i = 0;
  while (i < text.size()) {
    size_t m = 0;
    switch (pattern) {
      case SplitPattern::kGpt2:
        m = MatchGpt2(text, i);
        break;
      case SplitPattern::kQwen2:
        m = MatchQwenFamily(text, i, 1);
        break;
      case SplitPattern::kLlama3:
        m = MatchQwenFamily(text, i, 3);
        break;
    }
    if (m == 0) m = 1;  // unreachable: every code point is L, N, S or other
    pieces.push_back(text.substr(i, m));
    i += m;
  }
  return pieces;
}

std::vector<std::u32string> BertPreTokenize(std::u32string_view text) {
  std::vector<std::u32string> words;
  std::u32string word;
  auto flush = [&] {
    if (!word.empty()) words.push_back(std::move(word));
    word.clear();
  };
  for (char32_t c : text) {
    if (IsWhiteSpace(c)) {
      flush();
    } else if (IsBertPunctuation(c)) {
      flush();
      words.emplace_back(1, c);
    } else {
      word.push_back(c);
    }
  }
  flush();
  return words;
}

std::u32string Normalize(const std::vector<NormalizerStep>& steps,
                         std::u32string text) {
  for (const NormalizerStep& step : steps) {
    switch (step.kind) {
      case NormalizerStep::Kind::kNfc:
        text = Nfc(text);
        break;
      case NormalizerStep::Kind::kNfd:
        text = Nfd(text);
        break;
      case NormalizerStep::Kind::kLowercase: {
        std::u32string lower;
        lower.reserve(text.size());
        for (char32_t c : text) AppendLowercase(c, lower);
        text.swap(lower);
        break;
      }
      case NormalizerStep::Kind::kBert:
        text = BertNormalize(step, std::move(text));
        break;
    }
  }
  return text;
}

const std::array<char32_t, 256>& ByteLevelAlphabet() {
  // GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves,
  // the others for 256, 257, ... in byte order.
  static const std::array<char32_t, 256> table = [] {
    std::array<char32_t, 256> t{};
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable =
          (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      t[b] = printable ? static_cast<char32_t>(b) : next++;
    }
    return t;
  }();
  return table;
}

int ByteOfByteLevelChar(char32_t cp) {
  static const std::array<int, 512> inverse = [] {
    std::array<int, 512> inv;
    inv.fill(-1);
    const auto& alphabet = ByteLevelAlphabet();
    for (int b = 0; b < 256; ++b) inv[alphabet[b]] = b;
    return inv;
  }();
  return cp < inverse.size() ? inverse[cp] : -1;
}

}  // namespace skilldb::models::internal
