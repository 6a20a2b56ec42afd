#include "openai_protocol.h"

#include <algorithm>
#include <cstdint>

namespace skilldb::llm::internal {
namespace {

std::string At(size_t i) { return "choice " + std::to_string(i); }

json SamplingFields(const std::string& model, const SamplingOptions& o,
                    const RequestSampling& part, const ClientConfig& config) {
  json r = json::object();
  r["model"] = model;
  r["n"] = part.n;
  r["temperature"] = o.temperature;
  r["top_p"] = o.top_p;
  r["max_tokens"] = o.max_tokens;
  r["stream"] = false;
  if (o.top_k > 0 && config.send_top_k) r["top_k"] = o.top_k;
  if (!o.stop.empty()) r["stop"] = o.stop;
  if (part.seed) r["seed"] = *part.seed;
  if (config.request_token_ids) r["return_token_ids"] = true;
  return r;
}

// One position of chat logprobs: {"token", "logprob", "top_logprobs": [...]}.
bool ReadChatPosition(const json& pos, Sample* s) {
  auto token = AsString(Find(pos, "token"));
  auto logprob = AsNumber(Find(pos, "logprob"));
  if (!token || !logprob) return false;
  s->token_logprobs.push_back(*logprob);
  std::vector<TokenChoice> alternatives;
  if (const json* top = Find(pos, "top_logprobs"); top && top->is_array()) {
    for (const json& alt : *top) {
      auto t = AsString(Find(alt, "token"));
      auto lp = AsNumber(Find(alt, "logprob"));
      if (!t || !lp) return false;
      alternatives.push_back({*t, -1, *lp});
    }
  }
  s->top_logprobs.push_back(std::move(alternatives));
  return true;
}

// The legacy alternatives of one position: {"tok": logprob, ...} (or null).
bool ReadLegacyTop(const json& entry, std::vector<TokenChoice>* out) {
  if (entry.is_null()) return true;
  if (!entry.is_object()) return false;
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    auto lp = AsNumber(&it.value());
    if (!lp) return false;
    out->push_back({it.key(), -1, *lp});
  }
  std::stable_sort(out->begin(), out->end(),
                   [](const TokenChoice& a, const TokenChoice& b) {
                     return a.logprob > b.logprob;
                   });
  return true;
}

// Reads legacy logprobs {"tokens", "token_logprobs", "top_logprobs"} into
// `s` (the sampled tokens of a completion: every logprob must be a number).
bool ReadLegacyLogprobs(const json& lp, Sample* s) {
  const json* tokens = Find(lp, "tokens");
  const json* logprobs = Find(lp, "token_logprobs");
  if (!tokens || !logprobs || !tokens->is_array() || !logprobs->is_array() ||
      tokens->size() != logprobs->size()) {
    return false;
  }
  for (const json& v : *logprobs) {
    auto x = AsNumber(&v);
    if (!x) return false;
    s->token_logprobs.push_back(*x);
  }
  const json* top = Find(lp, "top_logprobs");
  if (top && top->is_array()) {
    if (top->size() != tokens->size()) return false;
    for (const json& entry : *top) {
      std::vector<TokenChoice> alternatives;
      if (!ReadLegacyTop(entry, &alternatives)) return false;
      s->top_logprobs.push_back(std::move(alternatives));
    }
  }
  return true;
}

// Puts choices in their "index" order; each index in [0, n) exactly once
// (a missing index means the choice's position).
Result<std::vector<const json*>> OrderChoices(const HttpAnswer& answer,
                                              const json& root, int n) {
  const json* choices = Find(root, "choices");
  if (choices == nullptr || !choices->is_array()) {
    return BadAnswer(answer, "answer has no \"choices\" array");
  }
  if (choices->size() != static_cast<size_t>(n)) {
    std::string hint =
        choices->size() < static_cast<size_t>(n)
            ? " (a server that ignores n: --llm-native-n false or "
              "SKILLDB_LLM_NATIVE_N=0)"
            : "";
    return BadAnswer(answer, "asked for " + std::to_string(n) +
                                 " choices, the answer has " +
                                 std::to_string(choices->size()) + hint);
  }
  std::vector<const json*> ordered(n, nullptr);
  for (size_t i = 0; i < choices->size(); ++i) {
    const json& c = (*choices)[i];
    if (!c.is_object()) return BadAnswer(answer, At(i) + " is not an object");
    const json* idx = Find(c, "index");
    std::optional<int64_t> index =
        idx ? AsInt(idx) : std::optional<int64_t>(static_cast<int64_t>(i));
    if (!index || *index < 0 || *index >= n || ordered[*index] != nullptr) {
      return BadAnswer(answer, At(i) + " has a bad or repeated \"index\"");
    }
    ordered[*index] = &c;
  }
  return ordered;
}

void ReadIds(const json& choice, const json& root, Sample* s,
             std::vector<int32_t>* prompt_ids) {
  if (auto ids = AsTokenIds(Find(choice, "token_ids"))) s->token_ids = *ids;
  if (prompt_ids->empty()) {
    auto p = AsTokenIds(Find(choice, "prompt_token_ids"));
    if (!p) p = AsTokenIds(Find(root, "prompt_token_ids"));
    if (p) *prompt_ids = *p;
  }
}

// Byte offset of each code point boundary: byte_of[k] is where character k
// starts (text_offset counts characters, as Python's len does).
std::vector<size_t> CharToByte(const std::string& text) {
  std::vector<size_t> byte_of;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80)
      byte_of.push_back(i);
  }
  byte_of.push_back(text.size());
  return byte_of;
}

// Spans by spelling: each token's text must continue the echoed text where
// the previous one ended, except that a first token the text does not start
// with (a BOS like "<|begin_of_text|>", which vLLM lists but does not echo)
// takes no bytes. Exact in bytes where it applies; vLLM's text_offset is
// shifted by such a BOS, which is why this is tried first.
bool SpansBySpelling(const std::vector<std::string>& tokens,
                     const std::string& text, std::vector<size_t>* starts,
                     std::vector<size_t>* ends) {
  size_t pos = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (text.compare(pos, t.size(), t) == 0) {
      starts->push_back(pos);
      pos += t.size();
    } else if (i == 0) {
      starts->push_back(0);
    } else {
      return false;
    }
    ends->push_back(pos);
  }
  return true;
}

// Spans from text_offset (character offsets, non-decreasing, in the text).
bool SpansByOffsets(const json& offsets, size_t count, const std::string& text,
                    std::vector<size_t>* starts, std::vector<size_t>* ends) {
  if (!offsets.is_array() || offsets.size() != count) return false;
  const std::vector<size_t> byte_of = CharToByte(text);
  size_t previous = 0;
  for (const json& o : offsets) {
    auto v = AsCount(&o);
    if (!v || *v < previous || *v >= byte_of.size()) return false;
    previous = *v;
    starts->push_back(byte_of[*v]);
  }
  for (size_t i = 0; i < count; ++i) {
    ends->push_back(i + 1 < count ? (*starts)[i + 1] : text.size());
  }
  return true;
}

}  // namespace

Status ValidateSampling(const SamplingOptions& o) {
  auto bad = [](const std::string& what) {
    return Status::InvalidArgument("sampling options: " + what);
  };
  if (o.n < 1 || o.n > 1024) return bad("n must be in [1, 1024]");
  if (!(o.temperature >= 0.0) || !std::isfinite(o.temperature)) {
    return bad("temperature must be >= 0");
  }
  if (!(o.top_p > 0.0 && o.top_p <= 1.0)) return bad("top_p must be in (0, 1]");
  if (o.top_k < 0) return bad("top_k must be >= 0");
  if (o.max_tokens < 1) return bad("max_tokens must be >= 1");
  if (o.top_logprobs < 0 || o.top_logprobs > 20) {
    return bad("top_logprobs must be in [0, 20]");
  }
  for (const std::string& s : o.stop) {
    if (s.empty()) return bad("empty stop string");
  }
  return Status::Ok();
}

std::string BuildChatRequest(const std::string& model, const Chat& chat,
                             const SamplingOptions& o,
                             const RequestSampling& part,
                             const ClientConfig& config) {
  json r = SamplingFields(model, o, part, config);
  json messages = json::array();
  for (const Message& m : chat) {
    messages.push_back({{"role", m.role}, {"content", m.content}});
  }
  r["messages"] = std::move(messages);
  if (o.logprobs) {
    r["logprobs"] = true;
    if (o.top_logprobs > 0) r["top_logprobs"] = o.top_logprobs;
  }
  return Dump(r);
}

std::string BuildCompletionRequest(const std::string& model,
                                   const std::string& prompt,
                                   const SamplingOptions& o,
                                   const RequestSampling& part,
                                   const ClientConfig& config) {
  json r = SamplingFields(model, o, part, config);
  r["prompt"] = prompt;
  // The legacy field is a count of alternatives; some servers read 0 as
  // "no logprobs", so ask for at least one and drop it when unwanted.
  if (o.logprobs) r["logprobs"] = std::max(o.top_logprobs, 1);
  return Dump(r);
}

std::string BuildEchoScoreRequest(const std::string& model,
                                  const std::string& text,
                                  const ClientConfig& config) {
  json r = json::object();
  r["model"] = model;
  r["prompt"] = text;
  r["max_tokens"] = config.score_max_tokens;
  r["temperature"] = 0.0;
  r["n"] = 1;
  r["echo"] = true;
  r["logprobs"] = 1;
  r["stream"] = false;
  if (config.request_token_ids) r["return_token_ids"] = true;
  return Dump(r);
}

UsageCounts ReadUsage(const json& root) {
  UsageCounts u;
  const json* usage = Find(root, "usage");
  auto prompt = AsCount(usage ? Find(*usage, "prompt_tokens") : nullptr);
  auto completion =
      AsCount(usage ? Find(*usage, "completion_tokens") : nullptr);
  if (!prompt && !completion) return u;
  u.present = true;
  u.prompt_tokens = prompt.value_or(0);
  u.completion_tokens = completion.value_or(0);
  return u;
}

namespace {

// a * b + c, saturating at SIZE_MAX (the factors come from options that
// are only bounded below).
size_t MulAdd(size_t a, size_t b, size_t c) {
  if (a != 0 && b > (SIZE_MAX - c) / a) return SIZE_MAX;
  return a * b + c;
}

}  // namespace

AnswerBudget SamplesBudget(const SamplingOptions& o, int n) {
  // Per generated position: the text (escaped, up to 6 bytes a byte), a
  // token id, and with logprobs an entry per alternative ({"token",
  // "logprob", "bytes": [...]}, as vLLM writes them).
  const size_t alternatives = o.logprobs ? 1 + o.top_logprobs : 0;
  const size_t position_bytes = 128 + 256 * alternatives;
  const size_t position_values = 4 + 16 * alternatives;
  const size_t positions =
      MulAdd(static_cast<size_t>(std::max(n, 1)),
             static_cast<size_t>(std::max(o.max_tokens, 1)), 0);
  return {MulAdd(positions, position_bytes, size_t{64} << 10),
          MulAdd(positions, position_values, 4096)};
}

AnswerBudget EchoBudget(const std::string& text, int score_max_tokens) {
  // At most a token per byte of the echoed text, each with its logprob,
  // offset and id.
  const size_t positions =
      text.size() + static_cast<size_t>(std::max(score_max_tokens, 1));
  return {MulAdd(positions, 256, size_t{64} << 10),
          MulAdd(positions, 16, 4096)};
}

AnswerBudget ModelsBudget() { return {size_t{4} << 20, size_t{1} << 18}; }

Result<ParsedSamples> ParseChatAnswer(const HttpAnswer& answer, int n,
                                      size_t max_values) {
  SKILLDB_ASSIGN_OR_RETURN(json root, ParseJson(answer, max_values));
  SKILLDB_ASSIGN_OR_RETURN(std::vector<const json*> choices,
                           OrderChoices(answer, root, n));
  ParsedSamples out;
  for (size_t i = 0; i < choices.size(); ++i) {
    const json& c = *choices[i];
    const json* message = Find(c, "message");
    if (message == nullptr || !message->is_object()) {
      return BadAnswer(answer, At(i) + " has no \"message\" object");
    }
    const json* content = Find(*message, "content");
    if (content == nullptr || !(content->is_string() || content->is_null())) {
      return BadAnswer(answer, At(i) + " message has no \"content\" string");
    }
    Sample s;
    s.text = AsString(content).value_or("");
    s.finish_reason = AsString(Find(c, "finish_reason")).value_or("");
    const json* lp = Find(c, "logprobs");
    if (lp != nullptr && !lp->is_null()) {
      const json* positions = Find(*lp, "content");
      if (positions == nullptr || !positions->is_array()) {
        return BadAnswer(answer, At(i) + " logprobs has no \"content\" array");
      }
      for (const json& pos : *positions) {
        if (!ReadChatPosition(pos, &s)) {
          return BadAnswer(answer, At(i) + " has a malformed logprobs entry");
        }
      }
    }
    ReadIds(c, root, &s, &out.prompt_token_ids);
    out.samples.push_back(std::move(s));
  }
  out.usage = ReadUsage(root);
  return out;
}

Result<ParsedSamples> ParseCompletionAnswer(const HttpAnswer& answer, int n,
                                            size_t max_values) {
  SKILLDB_ASSIGN_OR_RETURN(json root, ParseJson(answer, max_values));
  SKILLDB_ASSIGN_OR_RETURN(std::vector<const json*> choices,
                           OrderChoices(answer, root, n));
  ParsedSamples out;
  for (size_t i = 0; i < choices.size(); ++i) {
    const json& c = *choices[i];
    auto text = AsString(Find(c, "text"));
    if (!text) return BadAnswer(answer, At(i) + " has no \"text\" string");
    Sample s;
    s.text = *text;
    s.finish_reason = AsString(Find(c, "finish_reason")).value_or("");
    const json* lp = Find(c, "logprobs");
    if (lp != nullptr && !lp->is_null() && !ReadLegacyLogprobs(*lp, &s)) {
      return BadAnswer(answer, At(i) + " has malformed logprobs");
    }
    ReadIds(c, root, &s, &out.prompt_token_ids);
    out.samples.push_back(std::move(s));
  }
  out.usage = ReadUsage(root);
  return out;
}

Result<EchoedTokens> ParseEchoAnswer(const HttpAnswer& answer,
                                     const std::string& sent_text,
                                     UsageCounts* usage, size_t max_values) {
  SKILLDB_ASSIGN_OR_RETURN(json root, ParseJson(answer, max_values));
  const json* choices = Find(root, "choices");
  if (choices == nullptr || !choices->is_array() || choices->empty()) {
    return BadAnswer(answer, "answer has no \"choices\" array");
  }
  const json& c = (*choices)[0];
  EchoedTokens out;
  auto text = AsString(Find(c, "text"));
  if (!text) return BadAnswer(answer, At(0) + " has no \"text\" string");
  out.text = *text;
  auto unsupported = [&](std::string_view what) {
    return Status::NotSupported(answer.request +
                                ": cannot score: " + std::string(what));
  };
  if (out.text.compare(0, sent_text.size(), sent_text) != 0) {
    return unsupported("the answer does not echo the prompt (no echo support)");
  }
  const json* lp = Find(c, "logprobs");
  const json* tokens = lp ? Find(*lp, "tokens") : nullptr;
  const json* logprobs = lp ? Find(*lp, "token_logprobs") : nullptr;
  if (!tokens || !logprobs || !tokens->is_array() || !logprobs->is_array() ||
      tokens->empty()) {
    return unsupported("the answer has no logprobs of the echoed prompt");
  }
  if (tokens->size() != logprobs->size()) {
    return BadAnswer(answer,
                     "logprobs tokens and token_logprobs differ in length");
  }
  for (size_t i = 0; i < tokens->size(); ++i) {
    auto t = AsString(&(*tokens)[i]);
    const json& v = (*logprobs)[i];
    auto x = AsNumber(&v);
    if (!t || (!x && !v.is_null())) {
      return BadAnswer(answer, "malformed logprobs entry " + std::to_string(i));
    }
    out.tokens.push_back(*t);
    out.logprobs.push_back(x);
  }
  std::vector<size_t> starts, ends;
  const json* offsets = Find(*lp, "text_offset");
  if (!SpansBySpelling(out.tokens, out.text, &starts, &ends)) {
    starts.clear();
    ends.clear();
    if (!offsets || !SpansByOffsets(*offsets, out.tokens.size(), out.text,
                                    &starts, &ends)) {
      return BadAnswer(answer,
                       "echoed tokens neither spell the text nor carry a "
                       "usable text_offset");
    }
  }
  out.starts = std::move(starts);
  out.ends = std::move(ends);
  auto prompt_ids = AsTokenIds(Find(c, "prompt_token_ids"));
  if (!prompt_ids) prompt_ids = AsTokenIds(Find(root, "prompt_token_ids"));
  auto gen_ids = AsTokenIds(Find(c, "token_ids"));
  std::vector<int32_t> ids = prompt_ids.value_or(std::vector<int32_t>{});
  if (gen_ids && ids.size() + gen_ids->size() == out.tokens.size()) {
    ids.insert(ids.end(), gen_ids->begin(), gen_ids->end());
  }
  if (ids.size() == out.tokens.size()) out.token_ids = std::move(ids);
  *usage = ReadUsage(root);
  return out;
}

Result<ScoreResult> ScoreFromEcho(const EchoedTokens& e, size_t prompt_bytes,
                                  size_t total_bytes) {
  ScoreResult r;
  const bool with_ids = e.token_ids.size() == e.tokens.size();
  for (size_t i = 0; i < e.tokens.size(); ++i) {
    const size_t start = e.starts[i], end = e.ends[i];
    if (start >= total_bytes) break;  // what the server generated after
    const bool completion = end > prompt_bytes && end > start;
    if (!completion) {
      if (with_ids) r.prompt_token_ids.push_back(e.token_ids[i]);
      continue;
    }
    if (!e.logprobs[i]) {
      return Status::Internal("echoed completion token " + std::to_string(i) +
                              " has no logprob");
    }
    r.token_logprobs.push_back(*e.logprobs[i]);
    r.sum_logprob += *e.logprobs[i];
    if (with_ids) r.completion_token_ids.push_back(e.token_ids[i]);
  }
  if (total_bytes > prompt_bytes && r.token_logprobs.empty()) {
    return Status::Internal("no echoed token covers the completion");
  }
  return r;
}

Result<std::vector<ModelInfo>> ParseModelsAnswer(const HttpAnswer& answer) {
  SKILLDB_ASSIGN_OR_RETURN(json root,
                           ParseJson(answer, ModelsBudget().max_values));
  const json* data = Find(root, "data");
  if (data == nullptr || !data->is_array()) {
    return BadAnswer(answer, "answer has no \"data\" array");
  }
  std::vector<ModelInfo> models;
  for (const json& m : *data) {
    auto id = AsString(Find(m, "id"));
    if (!id || id->empty()) continue;  // an entry without an id names nothing
    ModelInfo info;
    info.id = *id;
    info.owned_by = AsString(Find(m, "owned_by")).value_or("");
    info.max_model_len = AsInt(Find(m, "max_model_len")).value_or(0);
    models.push_back(std::move(info));
  }
  return models;
}

}  // namespace skilldb::llm::internal
