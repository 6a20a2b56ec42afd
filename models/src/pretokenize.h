// The text stages before a tokenizer's model: normalizers (NFC, NFD,
// lowercase, BERT's) and pre-tokenizers (the regex splits of GPT-2, Qwen2
// and Llama 3 written out as code, BERT's whitespace-and-punctuation
// split), with the byte-level alphabet of GPT-2.
//
// The regex splits are not a regex engine: each known pattern of
// tokenizer.json is recognized verbatim and matched by hand, alternative by
// alternative, as Oniguruma (the tokenizers library's engine) matches it.
// Pure functions and immutable values: safe from any thread.
#ifndef SKILLDB_MODELS_SRC_PRETOKENIZE_H_
#define SKILLDB_MODELS_SRC_PRETOKENIZE_H_

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skilldb::models::internal {

// The split patterns tokenizer.json files carry.
enum class SplitPattern {
  // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kGpt2,
  // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|
  // ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  kQwen2,
  // The same with \p{N}{1,3} (Llama 3, cl100k).
  kLlama3,
};

// The pattern whose text is exactly `regex`, if it is one of the above.
std::optional<SplitPattern> RecognizeSplitPattern(std::string_view regex);

// Splits `text` into the consecutive matches of `pattern` (every code point
// belongs to exactly one piece: these patterns match everywhere). Pieces
// are views into `text`.
std::vector<std::u32string_view> SplitByPattern(SplitPattern pattern,
                                                std::u32string_view text);

// BERT's pre-tokenizer: splits on White_Space (dropped) and isolates each
// punctuation character (ASCII punctuation or \p{P}).
std::vector<std::u32string> BertPreTokenize(std::u32string_view text);

// One normalization step.
struct NormalizerStep {
  enum class Kind { kNfc, kNfd, kLowercase, kBert };
  Kind kind = Kind::kNfc;
  // kBert's options, as BertNormalizer names them (strip_accents unset
  // follows lowercase).
  bool clean_text = true;
  bool handle_chinese_chars = true;
  std::optional<bool> strip_accents;
  bool lowercase = true;
};
std::u32string Normalize(const std::vector<NormalizerStep>& steps,
                         std::u32string text);

// GPT-2's byte-level alphabet: each byte's stand-in code point.
const std::array<char32_t, 256>& ByteLevelAlphabet();
// The byte a stand-in code point denotes, or -1.
int ByteOfByteLevelChar(char32_t cp);

}  // namespace skilldb::models::internal

#endif  // SKILLDB_MODELS_SRC_PRETOKENIZE_H_
