// Tokenizer: the tokenizers library's tokenizer.json, read and applied in
// C++ with the same ids: byte-level BPE (GPT-2, Qwen2, Llama 3 style: their
// split regexes, NFC, ignore_merges) and WordPiece (BERT family: its
// normalizer with lowercasing, accent stripping, CJK padding and control
// character removal; its punctuation split), with added and special tokens
// (lstrip, rstrip, single_word) and the post-processors that add special
// tokens (TemplateProcessing, BertProcessing, RobertaProcessing).
//
// Anything else a tokenizer.json may declare (other normalizers,
// pre-tokenizers, regexes or models: SentencePiece-style BPE with byte
// fallback, Unigram, ...) is refused at load with NotSupported rather than
// approximated. truncation and padding in tokenizer.json are ignored:
// callers truncate and pad explicitly.
//
// A Tokenizer is immutable once loaded: safe for concurrent use.
#ifndef SKILLDB_MODELS_TOKENIZER_H_
#define SKILLDB_MODELS_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::models {

// The largest vocabulary a tokenizer.json or a model config may declare. Token
// ids index the vocabulary table: bounded, so a file cannot make the table
// huge (an id of 2^31 - 1 would be 2^31 strings) or write outside it. Far
// above any real vocabulary (Gemma's: 256k).
inline constexpr int64_t kMaxVocabulary = int64_t{1} << 22;

// A token of tokenizer.json's added_tokens, with its matching rules.
struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false;      // dropped by Decode(skip_special_tokens)
  bool lstrip = false;       // swallows the whitespace on its left
  bool rstrip = false;       // swallows the whitespace on its right
  bool single_word = false;  // matches only between non-word characters
  bool normalized = false;   // matched after normalization
};

class Tokenizer {
 public:
  enum class Kind { kByteLevelBpe, kWordPiece };

  // Reads `path`: a tokenizer.json file or a directory holding one.
  // Errors: NotFound / IOError for the file, Corruption for JSON that is
  // not a tokenizer, NotSupported for a component this implementation does
  // not have (the message names it).
  static Result<std::unique_ptr<Tokenizer>> FromFile(const std::string& path);
  // The same from the text of a tokenizer.json.
  static Result<std::unique_ptr<Tokenizer>> FromJson(std::string_view json);

  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  Kind kind() const;

  // The ids of `text` (UTF-8; invalid sequences count as U+FFFD), with the
  // post-processor's special tokens when `add_special_tokens` (BOS for
  // Llama 3, [CLS] ... [SEP] for BERT, none for Qwen2). Added tokens in the
  // text are matched as the tokenizers library matches them.
  std::vector<int32_t> Encode(std::string_view text,
                              bool add_special_tokens) const;

  // The post-processor's special tokens around already encoded `ids` (what
  // Encode adds); callers truncating to a length keep
  // NumSpecialTokensToAdd() of it free first.
  std::vector<int32_t> AddSpecialTokens(std::span<const int32_t> ids) const;
  size_t NumSpecialTokensToAdd() const;

  // The text of `ids`: byte-level tokens decoded to their bytes (invalid
  // UTF-8 replaced by U+FFFD, as the tokenizers library does), WordPiece
  // tokens joined with its decoder's cleanup. Ids out of range are
  // skipped. Special added tokens are dropped when `skip_special_tokens`.
  std::string Decode(std::span<const int32_t> ids,
                     bool skip_special_tokens) const;

  // The raw bytes token `id` stands for in decoded text (byte-level: its
  // bytes, which may be part of a UTF-8 sequence; an added token: its
  // content; WordPiece: the piece without its prefix). "" out of range.
  std::string TokenBytes(int32_t id) const;

  // The id of a token given its vocabulary text (added tokens included).
  std::optional<int32_t> TokenToId(std::string_view token) const;
  // The vocabulary text of `id` ("" out of range).
  std::string IdToToken(int32_t id) const;
  bool IsSpecial(int32_t id) const;
  // One past the largest id (the embedding rows a model needs at least).
  int32_t vocab_size() const;
  const std::vector<AddedToken>& added_tokens() const;

  class Impl;

 private:
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace skilldb::models

#endif  // SKILLDB_MODELS_TOKENIZER_H_
