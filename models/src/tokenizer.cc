#include "skilldb/models/tokenizer.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "bpe.h"
#include "skilldb/util/file.h"
#include "skilldb/util/json.h"
#include "pretokenize.h"
#include "unicode.h"

namespace skilldb::models {

using internal::BpeModel;
using internal::NormalizerStep;
using internal::SplitPattern;
using internal::WordPieceModel;
using Json = nlohmann::json;

namespace {

// One step of the pre-tokenizer sequence, applied to every piece the steps
// before it made.
struct PreTokenizerStep {
  enum class Kind { kSplit, kByteLevel, kBert };
  Kind kind = Kind::kSplit;
  SplitPattern pattern = SplitPattern::kGpt2;  // kSplit, or kByteLevel's regex
  bool use_regex = false;                      // kByteLevel
  bool add_prefix_space = false;               // kByteLevel
};

enum class DecoderKind { kNone, kByteLevel, kWordPiece };

std::string TypeOf(const Json& j) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
    return "";
  }
  return j["type"].get<std::string>();
}

bool FlagOr(const Json& j, const char* key, bool fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  return j[key].get<bool>();
}

Result<int32_t> TokenId(const Json& v, const std::string& what) {
  int64_t id = 0;
  SKILLDB_RETURN_IF_ERROR(util::ReadInt64(v, "tokenizer.json: " + what, 0,
                                          kMaxVocabulary - 1, &id));
  return static_cast<int32_t>(id);
}

}  // namespace

class Tokenizer::Impl {
 public:
  Kind kind = Kind::kByteLevelBpe;
  std::vector<NormalizerStep> normalizer;
  std::vector<PreTokenizerStep> pre_tokenizer;
  BpeModel bpe;
  WordPieceModel wordpiece;
  DecoderKind decoder = DecoderKind::kNone;
  std::string decoder_prefix = "##";
  bool decoder_cleanup = true;
  std::vector<int32_t> prefix_ids, suffix_ids;  // post-processor

  std::vector<std::string> id_to_token;
  std::unordered_map<std::string, int32_t> token_to_id;
  std::vector<AddedToken> added;
  std::vector<std::u32string> added_text;  // added[i].content decoded
  std::vector<bool> special;               // by id
  // Added tokens by first code point, longest first (leftmost-longest).
  std::unordered_map<char32_t, std::vector<size_t>> added_by_first;

  Status Load(const Json& root);
  std::vector<int32_t> Encode(std::string_view text, bool add_special) const;
  std::string Decode(std::span<const int32_t> ids, bool skip_special) const;
  std::string TokenBytes(int32_t id) const;

 private:
  Status LoadNormalizer(const Json& j);
  Status LoadPreTokenizer(const Json& j);
  Status LoadModel(const Json& j);
  Status LoadBpe(const Json& j);
  Status LoadWordPiece(const Json& j);
  Status LoadAddedTokens(const Json& j);
  Status LoadPostProcessor(const Json& j);
  Status LoadDecoder(const Json& j);
  void IndexVocabulary();

  // The added token matching at text[i] (its index), or -1.
  int MatchAddedAt(std::u32string_view text, size_t i) const;
  void EncodeSegment(std::u32string_view segment,
                     std::vector<int32_t>& out) const;
  std::vector<std::u32string> PreTokenize(std::u32string text) const;
};

// Loading
// ----------------------------------------------------------------------

Status Tokenizer::Impl::LoadNormalizer(const Json& j) {
  if (j.is_null()) return Status::Ok();
  const std::string type = TypeOf(j);
  if (type == "Sequence") {
    for (const Json& step : j.at("normalizers")) {
      SKILLDB_RETURN_IF_ERROR(LoadNormalizer(step));
    }
    return Status::Ok();
  }
  NormalizerStep step;
  if (type == "NFC") {
    step.kind = NormalizerStep::Kind::kNfc;
  } else if (type == "NFD") {
    step.kind = NormalizerStep::Kind::kNfd;
  } else if (type == "Lowercase") {
    step.kind = NormalizerStep::Kind::kLowercase;
  } else if (type == "BertNormalizer") {
    step.kind = NormalizerStep::Kind::kBert;
    step.clean_text = FlagOr(j, "clean_text", true);
    step.handle_chinese_chars = FlagOr(j, "handle_chinese_chars", true);
    step.lowercase = FlagOr(j, "lowercase", true);
    if (j.contains("strip_accents") && !j["strip_accents"].is_null()) {
      step.strip_accents = j["strip_accents"].get<bool>();
    }
  } else {
    return Status::NotSupported("tokenizer.json: normalizer '" + type +
                                "' is not supported");
  }
  normalizer.push_back(step);
  return Status::Ok();
}

Status Tokenizer::Impl::LoadPreTokenizer(const Json& j) {
  if (j.is_null()) return Status::Ok();
  const std::string type = TypeOf(j);
  PreTokenizerStep step;
  if (type == "Sequence") {
    for (const Json& s : j.at("pretokenizers")) {
      SKILLDB_RETURN_IF_ERROR(LoadPreTokenizer(s));
    }
    return Status::Ok();
  }
  if (type == "ByteLevel") {
    step.kind = PreTokenizerStep::Kind::kByteLevel;
    step.use_regex = FlagOr(j, "use_regex", true);
    step.add_prefix_space = FlagOr(j, "add_prefix_space", true);
    step.pattern = SplitPattern::kGpt2;
  } else if (type == "Split") {
    const Json& pattern = j.at("pattern");
    if (!pattern.contains("Regex")) {
      return Status::NotSupported(
          "tokenizer.json: Split pre-tokenizer without a Regex pattern");
    }
    const std::string regex = pattern["Regex"].get<std::string>();
    auto known = internal::RecognizeSplitPattern(regex);
    if (!known) {
      return Status::NotSupported("tokenizer.json: split regex '" + regex +
                                  "' is not one of GPT-2's, Qwen2's or "
                                  "Llama 3's");
    }
    const std::string behavior = j.value("behavior", "Isolated");
    if (behavior != "Isolated" || FlagOr(j, "invert", false)) {
      return Status::NotSupported("tokenizer.json: Split behavior '" +
                                  behavior + "' (or invert) not supported");
    }
    step.kind = PreTokenizerStep::Kind::kSplit;
    step.pattern = *known;
  } else if (type == "BertPreTokenizer") {
    step.kind = PreTokenizerStep::Kind::kBert;
  } else {
    return Status::NotSupported("tokenizer.json: pre-tokenizer '" + type +
                                "' is not supported");
  }
  pre_tokenizer.push_back(step);
  return Status::Ok();
}

Status Tokenizer::Impl::LoadBpe(const Json& j) {
  if (FlagOr(j, "byte_fallback", false)) {
    return Status::NotSupported(
        "tokenizer.json: BPE with byte_fallback (SentencePiece style) is not "
        "supported");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (j.contains(key) && !j[key].is_null() &&
        !j[key].get<std::string>().empty()) {
      return Status::NotSupported(std::string("tokenizer.json: BPE ") + key +
                                  " is not supported");
    }
  }
  if (j.contains("dropout") && !j["dropout"].is_null() &&
      j["dropout"].get<double>() > 0) {
    return Status::NotSupported("tokenizer.json: BPE dropout");
  }
  for (const auto& [token, id] : j.at("vocab").items()) {
    SKILLDB_ASSIGN_OR_RETURN(int32_t checked, TokenId(id, "the id of a token"));
    bpe.vocab.emplace(token, checked);
  }
  const Json& merges = j.at("merges");
  int32_t rank = 0;
  for (const Json& m : merges) {
    std::string a, b;
    if (m.is_string()) {
      const std::string s = m.get<std::string>();
      const size_t space = s.find(' ');
      if (space == std::string::npos) {
        return Status::InvalidArgument("tokenizer.json: merge '" + s +
                                       "' is not two tokens");
      }
      a = s.substr(0, space);
      b = s.substr(space + 1);
    } else {
      a = m.at(0).get<std::string>();
      b = m.at(1).get<std::string>();
    }
    auto ia = bpe.vocab.find(a), ib = bpe.vocab.find(b),
         im = bpe.vocab.find(a + b);
    if (ia == bpe.vocab.end() || ib == bpe.vocab.end() ||
        im == bpe.vocab.end()) {
      return Status::InvalidArgument("tokenizer.json: merge '" + a + " " + b +
                                     "' names a token not in the vocabulary");
    }
    const uint64_t key =
        (static_cast<uint64_t>(static_cast<uint32_t>(ia->second)) << 32) |
        static_cast<uint32_t>(ib->second);
    bpe.merges.emplace(key, std::make_pair(rank++, im->second));
  }
  bpe.ignore_merges = FlagOr(j, "ignore_merges", false);
  bpe.fuse_unk = FlagOr(j, "fuse_unk", false);
  if (j.contains("unk_token") && j["unk_token"].is_string()) {
    auto it = bpe.vocab.find(j["unk_token"].get<std::string>());
    if (it != bpe.vocab.end()) bpe.unk_id = it->second;
  }
  bpe.IndexBytes();
  return Status::Ok();
}

Status Tokenizer::Impl::LoadWordPiece(const Json& j) {
  for (const auto& [token, id] : j.at("vocab").items()) {
    SKILLDB_ASSIGN_OR_RETURN(int32_t checked, TokenId(id, "the id of a token"));
    wordpiece.vocab.emplace(token, checked);
  }
  const std::string unk = j.value("unk_token", "[UNK]");
  auto it = wordpiece.vocab.find(unk);
  if (it == wordpiece.vocab.end()) {
    return Status::InvalidArgument("tokenizer.json: WordPiece unk_token '" +
                                   unk + "' is not in the vocabulary");
  }
  wordpiece.unk_id = it->second;
  if (j.contains("continuing_subword_prefix") &&
      j["continuing_subword_prefix"].is_string()) {
    wordpiece.continuing_subword_prefix =
        j["continuing_subword_prefix"].get<std::string>();
  }
  if (j.contains("max_input_chars_per_word") &&
      !j["max_input_chars_per_word"].is_null()) {
    int64_t chars = 0;
    SKILLDB_RETURN_IF_ERROR(util::ReadInt64(
        j["max_input_chars_per_word"],
        "tokenizer.json: WordPiece max_input_chars_per_word", 1, 1 << 20,
        &chars));
    wordpiece.max_input_chars_per_word = static_cast<size_t>(chars);
  }
  return Status::Ok();
}

Status Tokenizer::Impl::LoadModel(const Json& j) {
  const std::string type = TypeOf(j);
  if (type == "BPE") {
    kind = Kind::kByteLevelBpe;
    return LoadBpe(j);
  }
  if (type == "WordPiece") {
    kind = Kind::kWordPiece;
    return LoadWordPiece(j);
  }
  return Status::NotSupported("tokenizer.json: model '" + type +
                              "' is not supported (BPE and WordPiece are)");
}

Status Tokenizer::Impl::LoadAddedTokens(const Json& j) {
  if (j.is_null()) return Status::Ok();
  for (const Json& t : j) {
    AddedToken token;
    SKILLDB_ASSIGN_OR_RETURN(token.id, TokenId(t.at("id"), "an added token's id"));
    token.content = t.at("content").get<std::string>();
    token.special = FlagOr(t, "special", false);
    token.lstrip = FlagOr(t, "lstrip", false);
    token.rstrip = FlagOr(t, "rstrip", false);
    token.single_word = FlagOr(t, "single_word", false);
    token.normalized = FlagOr(t, "normalized", !token.special);
    if (token.id < 0 || token.content.empty()) {
      return Status::InvalidArgument("tokenizer.json: added token with id " +
                                     std::to_string(token.id) +
                                     " is malformed");
    }
    if (token.normalized && !normalizer.empty()) {
      // Matching after normalization would need offsets back into the raw
      // text; no tokenizer this module targets declares such a token.
      return Status::NotSupported("tokenizer.json: added token '" +
                                  token.content +
                                  "' is matched after normalization");
    }
    added.push_back(std::move(token));
  }
  return Status::Ok();
}

Status Tokenizer::Impl::LoadPostProcessor(const Json& j) {
  if (j.is_null()) return Status::Ok();
  const std::string type = TypeOf(j);
  if (type == "Sequence") {
    for (const Json& p : j.at("processors")) {
      SKILLDB_RETURN_IF_ERROR(LoadPostProcessor(p));
    }
    return Status::Ok();
  }
  if (type == "ByteLevel") return Status::Ok();  // offsets only
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    SKILLDB_ASSIGN_OR_RETURN(int32_t cls,
                             TokenId(j.at("cls").at(1), "the cls token's id"));
    SKILLDB_ASSIGN_OR_RETURN(int32_t sep,
                             TokenId(j.at("sep").at(1), "the sep token's id"));
    prefix_ids.push_back(cls);
    suffix_ids.insert(suffix_ids.begin(), sep);
    return Status::Ok();
  }
  if (type != "TemplateProcessing") {
    return Status::NotSupported("tokenizer.json: post-processor '" + type +
                                "' is not supported");
  }
  const Json& specials = j.at("special_tokens");
  std::vector<int32_t> before, after;
  bool seen_sequence = false;
  for (const Json& item : j.at("single")) {
    if (item.contains("Sequence")) {
      seen_sequence = true;
      continue;
    }
    const std::string name = item.at("SpecialToken").at("id");
    if (!specials.contains(name)) {
      return Status::InvalidArgument("tokenizer.json: template names '" +
                                     name + "', which special_tokens lacks");
    }
    for (const Json& id : specials[name].at("ids")) {
      SKILLDB_ASSIGN_OR_RETURN(int32_t checked,
                               TokenId(id, "a special token's id"));
      (seen_sequence ? after : before).push_back(checked);
    }
  }
  prefix_ids.insert(prefix_ids.end(), before.begin(), before.end());
  suffix_ids.insert(suffix_ids.begin(), after.begin(), after.end());
  return Status::Ok();
}

Status Tokenizer::Impl::LoadDecoder(const Json& j) {
  if (j.is_null()) return Status::Ok();
  const std::string type = TypeOf(j);
  if (type == "Sequence" && j.at("decoders").size() == 1) {
    return LoadDecoder(j["decoders"][0]);
  }
  if (type == "ByteLevel") {
    decoder = DecoderKind::kByteLevel;
  } else if (type == "WordPiece") {
    decoder = DecoderKind::kWordPiece;
    decoder_prefix = j.value("prefix", std::string("##"));
    decoder_cleanup = FlagOr(j, "cleanup", true);
  } else {
    return Status::NotSupported("tokenizer.json: decoder '" + type +
                                "' is not supported");
  }
  return Status::Ok();
}

void Tokenizer::Impl::IndexVocabulary() {
  const auto& vocab = kind == Kind::kByteLevelBpe ? bpe.vocab : wordpiece.vocab;
  int32_t size = 0;
  for (const auto& [token, id] : vocab) size = std::max(size, id + 1);
  for (const AddedToken& t : added) size = std::max(size, t.id + 1);
  id_to_token.assign(size, "");
  special.assign(size, false);
  for (const auto& [token, id] : vocab) {
    id_to_token[id] = token;
    token_to_id[token] = id;
  }
  for (size_t i = 0; i < added.size(); ++i) {
    const AddedToken& t = added[i];
    id_to_token[t.id] = t.content;
    token_to_id[t.content] = t.id;
    special[t.id] = t.special;
    added_text.push_back(internal::DecodeUtf8(t.content));
    added_by_first[added_text.back()[0]].push_back(i);
  }
  for (auto& [first, list] : added_by_first) {
    std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) {
      return added_text[a].size() > added_text[b].size();
    });
  }
}

Status Tokenizer::Impl::Load(const Json& root) {
  if (!root.is_object() || !root.contains("model")) {
    return Status::InvalidArgument("tokenizer.json: no 'model'");
  }
  SKILLDB_RETURN_IF_ERROR(LoadNormalizer(root.value("normalizer", Json())));
  SKILLDB_RETURN_IF_ERROR(
      LoadPreTokenizer(root.value("pre_tokenizer", Json())));
  SKILLDB_RETURN_IF_ERROR(LoadModel(root["model"]));
  SKILLDB_RETURN_IF_ERROR(LoadAddedTokens(root.value("added_tokens", Json())));
  SKILLDB_RETURN_IF_ERROR(
      LoadPostProcessor(root.value("post_processor", Json())));
  SKILLDB_RETURN_IF_ERROR(LoadDecoder(root.value("decoder", Json())));
  const bool has_byte_level = std::any_of(
      pre_tokenizer.begin(), pre_tokenizer.end(), [](const auto& s) {
        return s.kind == PreTokenizerStep::Kind::kByteLevel;
      });
  const bool has_bert = std::any_of(
      pre_tokenizer.begin(), pre_tokenizer.end(),
      [](const auto& s) { return s.kind == PreTokenizerStep::Kind::kBert; });
  if (kind == Kind::kByteLevelBpe && !has_byte_level) {
    return Status::NotSupported(
        "tokenizer.json: BPE without a ByteLevel pre-tokenizer (only "
        "byte-level BPE is supported)");
  }
  if (kind == Kind::kWordPiece && !has_bert) {
    return Status::NotSupported(
        "tokenizer.json: WordPiece without BertPreTokenizer is not supported");
  }
  IndexVocabulary();
  // What the post-processor adds must be tokens of the vocabulary.
  for (const auto* ids : {&prefix_ids, &suffix_ids}) {
    for (int32_t id : *ids) {
      if (id >= static_cast<int32_t>(id_to_token.size())) {
        return Status::InvalidArgument(
            "tokenizer.json: the post-processor adds token " +
            std::to_string(id) + ", which is not in the vocabulary of " +
            std::to_string(id_to_token.size()));
      }
    }
  }
  return Status::Ok();
}

// Encoding
// -----------------------------------------------------------------------

int Tokenizer::Impl::MatchAddedAt(std::u32string_view text, size_t i) const {
  auto it = added_by_first.find(text[i]);
  if (it == added_by_first.end()) return -1;
  auto is_word = [](char32_t c) {
    return internal::IsLetter(c) || internal::IsNumber(c);
  };
  for (size_t index : it->second) {
    const std::u32string& t = added_text[index];
    if (text.compare(i, t.size(), t) != 0) continue;
    if (added[index].single_word) {
      const size_t end = i + t.size();
      if ((i > 0 && is_word(text[i - 1])) ||
          (end < text.size() && is_word(text[end]))) {
        continue;
      }
    }
    return static_cast<int>(index);
  }
  return -1;
}

std::vector<std::u32string> Tokenizer::Impl::PreTokenize(
    std::u32string text) const {
  std::vector<std::u32string> pieces;
  pieces.push_back(std::move(text));
  for (const PreTokenizerStep& step : pre_tokenizer) {
    std::vector<std::u32string> next;
    for (std::u32string& piece : pieces) {
      if (step.kind == PreTokenizerStep::Kind::kBert) {
        for (auto& w : internal::BertPreTokenize(piece)) {
          next.push_back(std::move(w));
        }
        continue;
      }
      if (step.kind == PreTokenizerStep::Kind::kByteLevel) {
        if (step.add_prefix_space && !piece.empty() && piece[0] != U' ') {
          piece.insert(piece.begin(), U' ');
        }
        if (!step.use_regex) {
          next.push_back(std::move(piece));
          continue;
        }
      }
      for (std::u32string_view v :
           internal::SplitByPattern(step.pattern, piece)) {
        next.emplace_back(v);
      }
    }
    pieces.swap(next);
  }
  return pieces;
}

void Tokenizer::Impl::EncodeSegment(std::u32string_view segment,
                                    std::vector<int32_t>& out) const {
  if (segment.empty()) return;
  std::u32string text =
      internal::Normalize(normalizer, std::u32string(segment));
  for (const std::u32string& piece : PreTokenize(std::move(text))) {
    if (kind == Kind::kWordPiece) {
      wordpiece.Tokenize(piece, out);
    } else {
      bpe.Tokenize(internal::EncodeUtf8(piece), out);
    }
  }
}

std::vector<int32_t> Tokenizer::Impl::Encode(std::string_view text,
                                             bool add_special) const {
  const std::u32string u = internal::DecodeUtf8(text);
  std::vector<int32_t> ids;
  size_t segment_start = 0, i = 0;
  while (i < u.size()) {
    const int match = MatchAddedAt(u, i);
    if (match < 0) {
      ++i;
      continue;
    }
    const AddedToken& token = added[match];
    size_t segment_end = i;
    if (token.lstrip) {
      while (segment_end > segment_start &&
             internal::IsWhiteSpace(u[segment_end - 1])) {
        --segment_end;
      }
    }
    EncodeSegment(std::u32string_view(u).substr(segment_start,
                                                segment_end - segment_start),
                  ids);
    ids.push_back(token.id);
    i += added_text[match].size();
    if (token.rstrip) {
      while (i < u.size() && internal::IsWhiteSpace(u[i])) ++i;
    }
    segment_start = i;
  }
  EncodeSegment(std::u32string_view(u).substr(segment_start), ids);
  if (!add_special) return ids;
  std::vector<int32_t> wrapped = prefix_ids;
  wrapped.insert(wrapped.end(), ids.begin(), ids.end());
  wrapped.insert(wrapped.end(), suffix_ids.begin(), suffix_ids.end());
  return wrapped;
}

// Decoding
// -----------------------------------------------------------------------

namespace {

// The tokenizers library's WordPiece decoder cleanup.
std::string CleanUpTokenization(std::string s) {
  static const std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
      {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
      {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) {
    std::string out;
    size_t pos = 0;
    while (true) {
      const size_t hit = s.find(from, pos);
      if (hit == std::string::npos) break;
      out.append(s, pos, hit - pos).append(to);
      pos = hit + from.size();
    }
    out.append(s, pos, std::string::npos);
    s.swap(out);
  }
  return s;
}

}  // namespace

std::string Tokenizer::Impl::TokenBytes(int32_t id) const {
  if (id < 0 || id >= static_cast<int32_t>(id_to_token.size())) return "";
  const std::string& token = id_to_token[id];
  if (decoder == DecoderKind::kWordPiece &&
      token.rfind(decoder_prefix, 0) == 0) {
    return token.substr(decoder_prefix.size());
  }
  if (decoder != DecoderKind::kByteLevel) return token;
  // A token whose every character is in the byte alphabet decodes to those
  // bytes; any other (an added token such as "<|im_end|>" with a character
  // outside it) to its own UTF-8.
  std::string bytes;
  for (char32_t c : internal::DecodeUtf8(token)) {
    const int b = internal::ByteOfByteLevelChar(c);
    if (b < 0) return token;
    bytes.push_back(static_cast<char>(b));
  }
  return bytes;
}

std::string Tokenizer::Impl::Decode(std::span<const int32_t> ids,
                                    bool skip_special) const {
  std::string out;
  bool first = true;
  for (int32_t id : ids) {
    if (id < 0 || id >= static_cast<int32_t>(id_to_token.size())) continue;
    if (skip_special && special[id]) continue;
    const std::string& token = id_to_token[id];
    switch (decoder) {
      case DecoderKind::kByteLevel:
        out += TokenBytes(id);
        break;
      case DecoderKind::kWordPiece: {
        std::string piece = token;
        if (!first) {
          piece = token.rfind(decoder_prefix, 0) == 0
                      ? token.substr(decoder_prefix.size())
                      : " " + token;
        }
        out += decoder_cleanup ? CleanUpTokenization(piece) : piece;
        break;
      }
      case DecoderKind::kNone:
        if (!first) out += ' ';
        out += token;
        break;
    }
    first = false;
  }
  return decoder == DecoderKind::kByteLevel ? internal::LossyUtf8(out) : out;
}

// The public face
// ------------------------------------------------------------------

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

Result<std::unique_ptr<Tokenizer>> Tokenizer::FromJson(std::string_view json) {
  auto impl = std::make_unique<Impl>();
  // Bounded like every file a user names: about three values a token and
  // a merge each, so even the largest vocabularies fit well inside.
  SKILLDB_ASSIGN_OR_RETURN(
      const Json root,
      util::ParseUntrustedJson(json, "tokenizer.json",
                               {.max_bytes = size_t{256} << 20,
                                .max_depth = 64,
                                .max_values = size_t{16} << 20}));
  try {
    SKILLDB_RETURN_IF_ERROR(impl->Load(root));
  } catch (const Json::exception& e) {
    return Status::InvalidArgument(std::string("tokenizer.json: ") + e.what());
  }
  return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(impl)));
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::FromFile(
    const std::string& path) {
  std::string file = path;
  if (util::IsDirectory(path)) file = path + "/tokenizer.json";
  SKILLDB_ASSIGN_OR_RETURN(std::string text, util::ReadFile(file));
  auto tokenizer = FromJson(text);
  if (!tokenizer.ok()) return tokenizer.status().WithContext(file);
  return tokenizer;
}

Tokenizer::Kind Tokenizer::kind() const { return impl_->kind; }

std::vector<int32_t> Tokenizer::Encode(std::string_view text,
                                       bool add_special_tokens) const {
  return impl_->Encode(text, add_special_tokens);
}

std::vector<int32_t> Tokenizer::AddSpecialTokens(
    std::span<const int32_t> ids) const {
  std::vector<int32_t> out = impl_->prefix_ids;
  out.insert(out.end(), ids.begin(), ids.end());
  out.insert(out.end(), impl_->suffix_ids.begin(), impl_->suffix_ids.end());
  return out;
}

size_t Tokenizer::NumSpecialTokensToAdd() const {
  return impl_->prefix_ids.size() + impl_->suffix_ids.size();
}

std::string Tokenizer::Decode(std::span<const int32_t> ids,
                              bool skip_special_tokens) const {
  return impl_->Decode(ids, skip_special_tokens);
}

std::string Tokenizer::TokenBytes(int32_t id) const {
  return impl_->TokenBytes(id);
}

std::optional<int32_t> Tokenizer::TokenToId(std::string_view token) const {
  auto it = impl_->token_to_id.find(std::string(token));
  if (it == impl_->token_to_id.end()) return std::nullopt;
  return it->second;
}

std::string Tokenizer::IdToToken(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return "";
  return impl_->id_to_token[id];
}

bool Tokenizer::IsSpecial(int32_t id) const {
  return id >= 0 && id < vocab_size() && impl_->special[id];
}

int32_t Tokenizer::vocab_size() const {
  return static_cast<int32_t>(impl_->id_to_token.size());
}

const std::vector<AddedToken>& Tokenizer::added_tokens() const {
  return impl_->added;
}

}  // namespace skilldb::models
