#include "skilldb/util/text.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace skilldb::util {
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

std::string Describe(uint32_t cp, size_t at, bool code_point) {
  static const char* kNames[] = {"NUL", "SOH", "STX", "ETX", "EOT", "ENQ",
                                 "ACK", "BEL", "BS",  "TAB", "LF",  "VT",
                                 "FF",  "CR",  "SO",  "SI",  "DLE", "DC1",
                                 "DC2", "DC3", "DC4", "NAK", "SYN", "ETB",
                                 "CAN", "EM",  "SUB", "ESC", "FS",  "GS",
                                 "RS",  "US"};
  char buf[64];
  if (!code_point) {
    std::snprintf(buf, sizeof buf, "byte 0x%02x that is not UTF-8 at byte %zu",
                  cp, at);
  } else if (cp < 0x20) {
    std::snprintf(buf, sizeof buf, "%s (0x%02x) at byte %zu", kNames[cp], cp,
                  at);
  } else if (cp == 0x7f) {
    std::snprintf(buf, sizeof buf, "DEL (0x7f) at byte %zu", at);
  } else {
    std::snprintf(buf, sizeof buf, "U+%04X at byte %zu", cp, at);
  }
  return buf;
}

}  // namespace

std::string EscapeLine(std::string_view text) { return Escape(text, false); }

std::string EscapeBlock(std::string_view text) { return Escape(text, true); }

std::string FindControlCharacter(std::string_view text, bool allow_lines) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      const bool control = c < 0x20 || c == 0x7f;
      if (control && !(allow_lines && (c == '\n' || c == '\t'))) {
        return Describe(c, i, true);
      }
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t len = DecodeUtf8(text, i, &cp);
    if (len == 0) return Describe(c, i, false);
    if (IsInvisibleControl(cp)) return Describe(cp, i, true);
    i += len;
  }
  return "";
}

std::string FenceFor(std::string_view text) {
  size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<size_t>(3, longest + 1), '`');
}

std::string FencedBlock(std::string_view info, std::string_view text) {
  const std::string fence = FenceFor(text);
  std::string out = fence;
  out += info;
  out += '\n';
  out += text;
  if (!text.empty() && text.back() != '\n') out += '\n';
  out += fence;
  return out;
}

std::string OneLine(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      out += c < 0x20 || c == 0x7f ? ' ' : static_cast<char>(c);
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t len = DecodeUtf8(text, i, &cp);
    if (len == 0) {
      out += ' ';
      ++i;
    } else {
      if (!IsInvisibleControl(cp)) out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace skilldb::util
