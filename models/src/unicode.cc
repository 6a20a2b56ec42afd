#include "unicode.h"

#include <algorithm>

#include "unicode_data.h"

namespace skilldb::models::internal {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Hangul syllables compose and decompose by arithmetic (Unicode 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161,
                   kTBase = 0x11A7;
constexpr int kLCount = 19, kVCount = 21, kTCount = 28;
constexpr int kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

// The accepted range of the second byte of a sequence led by `lead`, and
// the sequence length (0 for a byte that cannot lead). Table 3-7 of the
// Unicode standard: it rules out overlongs, surrogates and > U+10FFFF.
struct Lead {
  int length;
  uint8_t lo, hi;
};
Lead LeadOf(uint8_t b) {
  if (b < 0x80) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

const Decomposition* FindDecomposition(char32_t cp) {
  const Decomposition* end = kDecomposition + kDecompositionCount;
  const Decomposition* it = std::lower_bound(
      kDecomposition, end, cp,
      [](const Decomposition& d, char32_t c) { return d.from < c; });
  return (it != end && it->from == cp) ? it : nullptr;
}

void AppendDecomposed(char32_t cp, std::u32string& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const int s = static_cast<int>(cp - kSBase);
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
    return;
  }
  const Decomposition* d = FindDecomposition(cp);
  if (d == nullptr) {
    out.push_back(cp);
    return;
  }
  AppendDecomposed(d->first, out);
  if (d->second != 0) AppendDecomposed(d->second, out);
}

// The primary composite of (a, b), or 0.
char32_t Compose(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase &&
      b < kVBase + kVCount) {
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  }
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 &&
      b > kTBase && b < kTBase + kTCount) {
    return a + (b - kTBase);
  }
  const Composition* end = kComposition + kCompositionCount;
  const Composition* it = std::lower_bound(
      kComposition, end, std::make_pair(a, b),
      [](const Composition& c, const std::pair<char32_t, char32_t>& key) {
        return c.first != key.first ? c.first < key.first
                                    : c.second < key.second;
      });
  return (it != end && it->first == a && it->second == b) ? it->composite : 0;
}

}  // namespace

std::u32string DecodeUtf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const Lead lead = LeadOf(s[i]);
    if (lead.length == 1) {
      out.push_back(s[i++]);
      continue;
    }
    if (lead.length == 0) {
      out.push_back(kReplacement);
      ++i;
      continue;
    }
    char32_t cp = s[i] & (0xFF >> (lead.length + 1));
    size_t j = i + 1;
    bool ok = true;
    for (int k = 1; k < lead.length; ++k, ++j) {
      const uint8_t lo = k == 1 ? lead.lo : 0x80, hi = k == 1 ? lead.hi : 0xBF;
      if (j >= n || s[j] < lo || s[j] > hi) {
        ok = false;
        break;
      }
      cp = (cp << 6) | (s[j] & 0x3F);
    }
    // A maximal invalid subpart (the valid prefix of a sequence) is one
    // replacement character; decoding resumes at the byte that broke it.
    out.push_back(ok ? cp : kReplacement);
    i = j;
  }
  return out;
}

void AppendUtf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string EncodeUtf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t cp : text) AppendUtf8(cp, out);
  return out;
}

std::string LossyUtf8(std::string_view bytes) {
  return EncodeUtf8(DecodeUtf8(bytes));
}

GeneralCategory CategoryOf(char32_t cp) {
  if (cp > 0x10FFFF) return GeneralCategory::kCn;
  const CategoryRun* end = kCategoryRuns + kCategoryRunCount;
  const CategoryRun* it = std::upper_bound(
      kCategoryRuns, end, cp,
      [](char32_t c, const CategoryRun& r) { return c < r.first; });
  return static_cast<GeneralCategory>((it - 1)->category);
}

bool IsLetter(char32_t cp) {
  const auto c = CategoryOf(cp);
  return c >= GeneralCategory::kLu && c <= GeneralCategory::kLo;
}

bool IsNumber(char32_t cp) {
  const auto c = CategoryOf(cp);
  return c >= GeneralCategory::kNd && c <= GeneralCategory::kNo;
}

bool IsPunctuation(char32_t cp) {
  const auto c = CategoryOf(cp);
  return c >= GeneralCategory::kPc && c <= GeneralCategory::kPo;
}

bool IsNonspacingMark(char32_t cp) {
  return CategoryOf(cp) == GeneralCategory::kMn;
}

bool IsOther(char32_t cp) {
  const auto c = CategoryOf(cp);
  return c == GeneralCategory::kCn || c >= GeneralCategory::kCc;
}

bool IsWhiteSpace(char32_t cp) {
  // PropList.txt's White_Space, unchanged since Unicode 6.3.
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool IsPythonSpace(char32_t cp) {
  return IsWhiteSpace(cp) || (cp >= 0x1C && cp <= 0x1F);
}

void AppendLowercase(char32_t cp, std::u32string& out) {
  const CodePointPair* end = kLowercase + kLowercaseCount;
  const CodePointPair* it = std::lower_bound(
      kLowercase, end, cp,
      [](const CodePointPair& p, char32_t c) { return p.from < c; });
  if (it != end && it->from == cp) {
    out.push_back(it->to);
    return;
  }
  for (size_t i = 0; i < kLowercaseLongCount; ++i) {
    if (kLowercaseLong[i].from != cp) continue;
    for (uint32_t to : kLowercaseLong[i].to) {
      if (to != 0) out.push_back(to);
    }
    return;
  }
  out.push_back(cp);
}

uint8_t CombiningClassOf(char32_t cp) {
  const CombiningClassRun* end = kCombiningClass + kCombiningClassCount;
  const CombiningClassRun* it = std::upper_bound(
      kCombiningClass, end, cp,
      [](char32_t c, const CombiningClassRun& r) { return c < r.first; });
  if (it == kCombiningClass) return 0;
  --it;
  return cp <= it->last ? it->combining_class : 0;
}

std::u32string Nfd(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t cp : text) AppendDecomposed(cp, out);
  // Canonical ordering: a stable sort by combining class of each run of
  // non-starters.
  size_t i = 0;
  while (i < out.size()) {
    if (CombiningClassOf(out[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < out.size() && CombiningClassOf(out[j]) != 0) ++j;
    std::stable_sort(out.begin() + i, out.begin() + j,
                     [](char32_t a, char32_t b) {
                       return CombiningClassOf(a) < CombiningClassOf(b);
                     });
    i = j;
  }
  return out;
}

std::u32string Nfc(std::u32string_view text) {
  std::u32string s = Nfd(text);
  if (s.empty()) return s;
  // The canonical composition algorithm of UAX #15: each character after
  // the last starter composes with it unless blocked by a character of the
  // same or higher combining class in between.
  size_t starter = 0;
  int last_class = CombiningClassOf(s[0]) == 0 ? 0 : 256;
  size_t out = 1;
  for (size_t i = 1; i < s.size(); ++i) {
    const char32_t ch = s[i];
    const int cls = CombiningClassOf(ch);
    const char32_t composite = last_class == 256 ? 0 : Compose(s[starter], ch);
    if (composite != 0 && (last_class < cls || last_class == 0)) {
      s[starter] = composite;
      continue;
    }
    if (cls == 0) starter = out;
    last_class = cls;
    s[out++] = ch;
  }
  s.resize(out);
  return s;
}

}  // namespace skilldb::models::internal
