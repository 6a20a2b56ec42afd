// Unicode text handling for the tokenizers, without ICU: UTF-8 decoding and
// encoding, general categories and the White_Space property, per-code-point
// lowercasing, and the canonical normal forms NFD and NFC. The data comes
// from Python's unicodedata through models/tools/gen_unicode_tables.py.
//
// Everything here is a pure function of its arguments: safe from any thread.
#ifndef SKILLDB_MODELS_SRC_UNICODE_H_
#define SKILLDB_MODELS_SRC_UNICODE_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace skilldb::models::internal {

// The general categories, in the order of the generated table (never
// renumber: unicode_data.cc stores these indices).
enum class GeneralCategory : uint8_t {
  kCn,
  kLu,
  kLl,
  kLt,
  kLm,
  kLo,
  kMn,
  kMc,
  kMe,
  kNd,
  kNl,
  kNo,
  kPc,
  kPd,
  kPs,
  kPe,
  kPi,
  kPf,
  kPo,
  kSm,
  kSc,
  kSk,
  kSo,
  kZs,
  kZl,
  kZp,
  kCc,
  kCf,
  kCs,
  kCo,
};

// Decodes UTF-8. Each maximal invalid subsequence becomes one U+FFFD (the
// replacement Python's errors="replace" and Rust's from_utf8_lossy make).
std::u32string DecodeUtf8(std::string_view text);
// Appends the UTF-8 encoding of `cp` (REQUIRES: cp <= 0x10FFFF).
void AppendUtf8(char32_t cp, std::string& out);
std::string EncodeUtf8(std::u32string_view text);
// Replaces invalid UTF-8 in `bytes` as DecodeUtf8 does.
std::string LossyUtf8(std::string_view bytes);

GeneralCategory CategoryOf(char32_t cp);
bool IsLetter(char32_t cp);          // \p{L}
bool IsNumber(char32_t cp);          // \p{N}
bool IsPunctuation(char32_t cp);     // \p{P}
bool IsNonspacingMark(char32_t cp);  // Mn
bool IsOther(char32_t cp);           // \p{C}: Cc, Cf, Cs, Co, Cn
// The White_Space property (what Rust's char::is_whitespace and
// Oniguruma's \s in UTF-8 match).
bool IsWhiteSpace(char32_t cp);
// Python's str.isspace() (what Jinja's trim filter strips): White_Space
// plus U+001C..U+001F.
bool IsPythonSpace(char32_t cp);

// Appends the lowercase of `cp` (one to three code points; `cp` itself when
// it has none), without context, as the tokenizers library lowercases.
void AppendLowercase(char32_t cp, std::u32string& out);

uint8_t CombiningClassOf(char32_t cp);
// Canonical decomposition followed by canonical ordering.
std::u32string Nfd(std::u32string_view text);
// NFD, then canonical composition.
std::u32string Nfc(std::u32string_view text);

}  // namespace skilldb::models::internal

#endif  // SKILLDB_MODELS_SRC_UNICODE_H_
