#include "text.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace skilldb::cli {
namespace {

void AppendHex(std::string* out, unsigned char byte) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "\\x%02x", byte);
  *out += buf;
}

void AppendCodePoint(std::string* out, uint32_t cp) {
  char buf[12];
  std::snprintf(buf, sizeof(buf), "\\u%04x", cp);
  *out += buf;
}

// The length of the UTF-8 sequence at text[i] and its code point, or 0 if
// the bytes there are not well-formed UTF-8 (overlong forms, surrogates and
// values past U+10FFFF included).
size_t DecodeUtf8(std::string_view text, size_t i, uint32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = b(i);
  size_t len = 0;
  uint32_t min = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    len = 2, min = 0x80, *cp = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    len = 3, min = 0x800, *cp = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    len = 4, min = 0x10000, *cp = lead & 0x07;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
    *cp = (*cp << 6) | (b(i + k) & 0x3f);
  }
  if (*cp < min || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff)) {
    return 0;
  }
  return len;
}

// C1 controls (U+0080..U+009F: 0x9b is CSI on some terminals) and the
// characters that reorder the text after them (the "Trojan Source" set).
bool IsInvisibleControl(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e ||
         cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

void AppendControl(std::string* out, unsigned char c) {
  switch (c) {
    case '\n':
      *out += "\\n";
      break;
    case '\r':
      *out += "\\r";
      break;
    case '\t':
      *out += "\\t";
      break;
    default:
      AppendHex(out, c);
  }
}

std::string Escape(std::string_view text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      const bool control = c < 0x20 || c == 0x7f;
      if (control && !(keep_lines && (c == '\n' || c == '\t'))) {
        AppendControl(&out, c);
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t len = DecodeUtf8(text, i, &cp);
    if (len == 0) {
      AppendHex(&out, c);
      ++i;
    } else if (IsInvisibleControl(cp)) {
      AppendCodePoint(&out, cp);
      i += len;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

// Optimal string alignment distance (Levenshtein plus adjacent swaps).
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1,
                                     std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string EscapeLine(std::string_view text) { return Escape(text, false); }

std::string EscapeBlock(std::string_view text) { return Escape(text, true); }

std::vector<std::string> NearestNames(std::string_view word,
                                      const std::vector<std::string>& names) {
  constexpr size_t kMaxWord = 64;  // longer is no typo of a short name
  if (word.empty() || word.size() > kMaxWord) return {};
  std::vector<size_t> distance;
  size_t best = 3;  // more than 2 edits is not a typo
  for (const std::string& name : names) {
    distance.push_back(EditDistance(word, name));
    if (distance.back() < word.size()) best = std::min(best, distance.back());
  }
  std::vector<std::string> nearest;
  for (size_t i = 0; i < names.size(); ++i) {
    const bool close =
        distance[i] == best && best <= 2 && distance[i] < word.size();
    const bool prefix = word.size() >= 3 && names[i].starts_with(word);
    if ((close || prefix) &&
        std::find(nearest.begin(), nearest.end(), names[i]) == nearest.end()) {
      nearest.push_back(names[i]);
    }
  }
  return nearest;
}

std::string JoinAlternatives(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += "'" + names[i] + "'";
  }
  return out;
}

}  // namespace skilldb::cli
