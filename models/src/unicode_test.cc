#include "unicode.h"

#include <doctest/doctest.h>

#include "pretokenize.h"

namespace skilldb::models::internal {
namespace {

std::string Utf8(std::u32string_view s) { return EncodeUtf8(s); }

TEST_CASE("UTF-8 decoding replaces each maximal invalid subpart once") {
  CHECK(DecodeUtf8("a\xC3\xA9z") == U"a\u00e9z");
  CHECK(DecodeUtf8("\xF0\x9F\x98\x80") == U"\U0001F600");
  // A truncated three-byte sequence is one replacement; a stray continuation
  // byte is one; an overlong lead (C0) is one per byte.
  CHECK(DecodeUtf8("\xE2\x82x") == U"\uFFFDx");
  CHECK(DecodeUtf8("\x80\x80") == U"\uFFFD\uFFFD");
  CHECK(DecodeUtf8("\xC0\xAF") == U"\uFFFD\uFFFD");
  // Surrogates encoded in UTF-8 are invalid (ED A0 80 is three subparts).
  CHECK(DecodeUtf8("\xED\xA0\x80") == U"\uFFFD\uFFFD\uFFFD");
  CHECK(Utf8(DecodeUtf8("\xF4\x8F\xBF\xBF")) == "\xF4\x8F\xBF\xBF");
}

TEST_CASE("general categories come from the generated table") {
  CHECK(IsLetter(U'a'));
  CHECK(IsLetter(U'\u4e2d'));
  CHECK(IsLetter(U'\U0001D400'));
  CHECK_FALSE(IsLetter(U'1'));
  CHECK(IsNumber(U'\u0661'));  // Arabic-Indic one
  CHECK(IsNumber(U'\u216b'));  // Roman numeral twelve (Nl)
  CHECK(IsNumber(U'\u00b2'));  // superscript two (No)
  CHECK(IsPunctuation(U'\u3002'));
  CHECK_FALSE(IsPunctuation(U'$'));  // Sc
  CHECK(IsNonspacingMark(U'\u0301'));
  CHECK(IsOther(U'\u200b'));      // Cf
  CHECK(IsOther(U'\U000E0080'));  // unassigned
  CHECK(IsWhiteSpace(U'\u3000'));
  CHECK_FALSE(IsWhiteSpace(U'\u200b'));
  CHECK(IsPythonSpace(U'\x1f'));
  CHECK_FALSE(IsWhiteSpace(U'\x1f'));
}

TEST_CASE("lowercasing maps per code point, including the long mapping") {
  std::u32string out;
  for (char32_t c : std::u32string(U"A\u00c9\u03a3\u0130\u1e9e")) {
    AppendLowercase(c, out);
  }
  CHECK(out == U"a\u00e9\u03c3i\u0307\u00df");
}

TEST_CASE("NFD and NFC follow canonical decomposition, ordering, composition") {
  CHECK(Nfd(U"\u00e9") == U"e\u0301");
  CHECK(Nfc(U"e\u0301") == U"\u00e9");
  // Canonical ordering: below (220) before above (230).
  CHECK(Nfd(U"a\u0301\u0316") == U"a\u0316\u0301");
  // Hangul composes arithmetically.
  CHECK(Nfc(U"\u1112\u1161\u11ab") == U"\ud55c");
  CHECK(Nfd(U"\ud55c") == U"\u1112\u1161\u11ab");
  // Singletons decompose and never recompose (Angstrom sign -> A ring).
  CHECK(Nfc(U"\u212b") == U"\u00c5");
  // Composition exclusions stay decomposed (U+0958 DEVANAGARI QA).
  CHECK(Nfc(U"\u0958") == U"\u0915\u093c");
  // A blocked mark does not compose: e + grave-below(220)... stays apart
  // only when an equal class intervenes.
  CHECK(Nfc(U"e\u0301\u0301") == U"\u00e9\u0301");
  CHECK(Nfc(U"\u0301e") == U"\u0301e");
}

TEST_CASE("the Qwen2 split isolates letters, single digits and newlines") {
  const std::u32string text = U"Hello  world's 123\n\n  x";
  std::vector<std::string> pieces;
  for (auto p : SplitByPattern(SplitPattern::kQwen2, text))
    pieces.push_back(Utf8(p));
  CHECK(pieces == std::vector<std::string>{"Hello", " ", " world", "'s", " ",
                                           "1", "2", "3", "\n\n", " ", " x"});
  std::vector<std::string> llama;
  for (auto p : SplitByPattern(SplitPattern::kLlama3, U"12345"))
    llama.push_back(Utf8(p));
  CHECK(llama == std::vector<std::string>{"123", "45"});
  std::vector<std::string> gpt2;
  for (auto p : SplitByPattern(SplitPattern::kGpt2, U"it's  ok?!\n"))
    gpt2.push_back(Utf8(p));
  CHECK(gpt2 == std::vector<std::string>{"it", "'s", " ", " ok", "?!", "\n"});
}

TEST_CASE("BERT's normalizer strips accents, lowercases and pads CJK") {
  NormalizerStep bert;
  bert.kind = NormalizerStep::Kind::kBert;
  CHECK(Normalize({bert}, U"Caf\u00e9\t\u4e2d\u0007!") == U"cafe  \u4e2d !");
  const auto words = BertPreTokenize(U"cafe  \u4e2d !don't");
  CHECK(words == std::vector<std::u32string>{U"cafe", U"\u4e2d", U"!", U"don",
                                             U"'", U"t"});
}

}  // namespace
}  // namespace skilldb::models::internal
