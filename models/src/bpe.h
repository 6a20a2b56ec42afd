// The tokenizers' models: byte-level BPE and WordPiece, as the tokenizers
// library applies them to one pre-tokenized piece. Immutable once built:
// safe for concurrent use.
#ifndef SKILLDB_MODELS_SRC_BPE_H_
#define SKILLDB_MODELS_SRC_BPE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace skilldb::models::internal {

// Byte-level BPE: a piece's bytes stand for GPT-2's byte alphabet, then
// merges apply lowest rank first, leftmost first among equal ranks (the
// tokenizers library's order).
struct BpeModel {
  // Token text (in the byte-level alphabet, UTF-8) -> id.
  std::unordered_map<std::string, int32_t> vocab;
  // (left id << 32 | right id) -> (rank, merged id).
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges;
  // The id of each byte's one-character token (-1: not in the vocabulary).
  std::array<int32_t, 256> byte_ids{};
  // Each byte's stand-in character, UTF-8.
  std::array<std::string, 256> byte_chars;
  // Llama 3: a piece that is itself a token is emitted whole, merges or not.
  bool ignore_merges = false;
  std::optional<int32_t> unk_id;  // for bytes without a token; else dropped
  bool fuse_unk = false;

  // Fills byte_ids and byte_chars from vocab.
  void IndexBytes();
  // Appends the ids of `bytes` (one pre-tokenized piece) to `out`.
  void Tokenize(std::string_view bytes, std::vector<int32_t>& out) const;
};

// WordPiece: greedy longest match first, continuation pieces carrying the
// prefix ("##"); a word with an unmatched rest, or longer than
// max_input_chars_per_word, is the unknown token.
struct WordPieceModel {
  std::unordered_map<std::string, int32_t> vocab;
  int32_t unk_id = 0;
  std::string continuing_subword_prefix = "##";
  size_t max_input_chars_per_word = 100;

  void Tokenize(std::u32string_view word, std::vector<int32_t>& out) const;
};

}  // namespace skilldb::models::internal

#endif  // SKILLDB_MODELS_SRC_BPE_H_
