#include "scripted_protocol.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

namespace skilldb::scripted {
namespace {

using json = nlohmann::json;

bool IsWordByte(unsigned char c) { return std::isalnum(c) || c >= 0x80; }

std::string Dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Answer Error(int status, const std::string& message) {
  Answer a;
  a.status = status;
  const char* type = status == 404 ? "NotFoundError" : "BadRequestError";
  a.body = Dump({{"error",
                  {{"message", message},
                   {"type", type},
                   {"param", nullptr},
                   {"code", status}}}});
  return a;
}

// Code points in `s` (what Python's len counts, as text_offset does).
size_t Chars(std::string_view s) {
  return std::count_if(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  });
}

// The request's stop strings: a string or an array of strings.
std::vector<std::string> StopsOf(const json& req) {
  std::vector<std::string> stops;
  auto it = req.find("stop");
  if (it == req.end()) return stops;
  if (it->is_string()) stops.push_back(it->get<std::string>());
  if (it->is_array()) {
    for (const json& s : *it) {
      if (s.is_string()) stops.push_back(s.get<std::string>());
    }
  }
  return stops;
}

// One generated completion: the reply's text cut at the first stop string
// and at max_tokens tokens.
struct Completion {
  std::string text;
  std::vector<std::string> tokens;
  std::string finish_reason;
};

Completion Complete(const ScriptedReply& reply, size_t choice, const json& req,
                    int64_t max_tokens) {
  Completion c;
  c.text = reply.texts.empty() ? "" : reply.texts[choice % reply.texts.size()];
  if (reply.numbered) {
    const std::string mark = "{{serial}}";
    const std::string number =
        std::to_string(reply.request_serial) + "." + std::to_string(choice);
    for (size_t at = c.text.find(mark); at != std::string::npos;
         at = c.text.find(mark, at + number.size())) {
      c.text.replace(at, mark.size(), number);
    }
  }
  c.finish_reason = "stop";
  size_t cut = std::string::npos;
  for (const std::string& stop : StopsOf(req)) {
    if (!stop.empty()) cut = std::min(cut, c.text.find(stop));
  }
  if (cut != std::string::npos) c.text.resize(cut);
  c.tokens = ScriptedTokenize(c.text);
  if (static_cast<int64_t>(c.tokens.size()) > max_tokens) {
    c.tokens.resize(max_tokens);
    c.text.clear();
    for (const std::string& t : c.tokens) c.text += t;
    c.finish_reason = "length";
  }
  if (!reply.finish_reason.empty()) c.finish_reason = reply.finish_reason;
  return c;
}

double LogprobOf(const ScriptedReply& reply, const std::string& token) {
  return reply.token_logprob.value_or(ScriptedTokenLogprob(token));
}

json Bytes(const std::string& t) {
  json b = json::array();
  for (char c : t) b.push_back(static_cast<unsigned char>(c));
  return b;
}

// The k alternatives at one position: the sampled token, the reply's
// alternatives best first, then placeholders.
std::vector<std::pair<std::string, double>> TopOf(const ScriptedReply& reply,
                                                  const std::string& token,
                                                  double logprob, int64_t k) {
  std::vector<std::pair<std::string, double>> top;
  if (k <= 0) return top;
  top.emplace_back(token, logprob);
  std::vector<std::pair<std::string, double>> alts(reply.alternatives.begin(),
                                                   reply.alternatives.end());
  std::stable_sort(alts.begin(), alts.end(), [](const auto& a, const auto& b) {
    return a.second > b.second;
  });
  for (const auto& alt : alts) {
    if (static_cast<int64_t>(top.size()) < k && alt.first != token)
      top.push_back(alt);
  }
  for (int64_t i = 1; static_cast<int64_t>(top.size()) < k; ++i) {
    top.emplace_back("<alt" + std::to_string(i) + ">",
                     logprob - 5.0 - static_cast<double>(i));
  }
  return top;
}

json ChatLogprobs(const ScriptedReply& reply, const Completion& c, int64_t k) {
  json content = json::array();
  for (const std::string& t : c.tokens) {
    const double lp = LogprobOf(reply, t);
    json top = json::array();
    for (const auto& [alt, alt_lp] : TopOf(reply, t, lp, k)) {
      top.push_back(
          {{"token", alt}, {"logprob", alt_lp}, {"bytes", Bytes(alt)}});
    }
    content.push_back({{"token", t},
                       {"logprob", lp},
                       {"bytes", Bytes(t)},
                       {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json Ids(const std::vector<std::string>& tokens, bool bos) {
  json ids = json::array();
  if (bos) ids.push_back(1);
  for (const std::string& t : tokens) ids.push_back(ScriptedTokenId(t));
  return ids;
}

json Usage(size_t prompt, size_t completion) {
  return {{"prompt_tokens", prompt},
          {"completion_tokens", completion},
          {"total_tokens", prompt + completion}};
}

// Reads an optional integer field; false when present but not an integer
// in [lo, hi].
bool IntField(const json& req, const char* key, int64_t lo, int64_t hi,
              int64_t* out) {
  auto it = req.find(key);
  if (it == req.end() || it->is_null()) return true;
  if (!it->is_number_integer()) return false;
  const int64_t v = it->get<int64_t>();
  if (v < lo || v > hi) return false;
  *out = v;
  return true;
}

// The checks vLLM makes before generating: 400 or 404, or nullopt to go on.
std::optional<Answer> CheckCommon(const json& req, const ProtocolOptions& o) {
  if (!req.is_object()) return Error(400, "request body is not a JSON object");
  auto model = req.find("model");
  if (model != req.end() && o.check_model &&
      (!model->is_string() || model->get<std::string>() != o.model)) {
    return Error(404,
                 "The model `" +
                     (model->is_string() ? model->get<std::string>() : "?") +
                     "` does not exist.");
  }
  if (req.contains("top_k") && !o.top_k_supported) {
    return Error(400, "Unrecognized request argument supplied: top_k");
  }
  for (const char* key : {"temperature", "top_p"}) {
    auto it = req.find(key);
    if (it != req.end() && !it->is_number()) {
      return Error(400, std::string(key) + " must be a number");
    }
  }
  return std::nullopt;
}

Answer ChatAnswer(const json& req, const ScriptedReply& reply,
                  const ProtocolOptions& o, uint64_t serial) {
  if (auto error = CheckCommon(req, o)) return *error;
  auto messages = req.find("messages");
  if (messages == req.end() || !messages->is_array() || messages->empty()) {
    return Error(400, "messages must be a non-empty array");
  }
  std::vector<std::pair<std::string, std::string>> chat;
  for (const json& m : *messages) {
    if (!m.is_object() || !m.value("role", json()).is_string() ||
        !m.value("content", json()).is_string()) {
      return Error(400, "each message needs a string role and content");
    }
    chat.emplace_back(m["role"].get<std::string>(),
                      m["content"].get<std::string>());
  }
  int64_t n = 1, max_tokens = o.max_model_len, top_logprobs = 0;
  if (!IntField(req, "n", 1, 1024, &n) ||
      !IntField(req, "max_tokens", 1, o.max_model_len, &max_tokens) ||
      !IntField(req, "top_logprobs", 0, 20, &top_logprobs)) {
    return Error(400, "n, max_tokens or top_logprobs out of range");
  }
  const bool logprobs = req.value("logprobs", json(false)) == json(true);
  const bool with_ids =
      req.value("return_token_ids", json(false)) == json(true);
  if (!o.n_supported) n = 1;
  const std::vector<std::string> prompt_tokens =
      ScriptedTokenize(ScriptedChatPrompt(chat));
  Answer a;
  a.prompt_tokens = prompt_tokens.size() + (o.bos_token ? 1 : 0);
  json choices = json::array();
  for (int64_t j = 0; j < n; ++j) {
    Completion c = Complete(reply, j, req, max_tokens);
    a.completion_tokens += c.tokens.size();
    json choice = {
        {"index", j},
        {"message",
         {{"role", "assistant"},
          {"content", c.text},
          {"tool_calls", json::array()}}},
        {"logprobs", logprobs ? ChatLogprobs(reply, c, top_logprobs) : json()},
        {"finish_reason", c.finish_reason},
        {"stop_reason", nullptr}};
    if (with_ids) choice["token_ids"] = Ids(c.tokens, false);
    choices.push_back(std::move(choice));
  }
  json out = {{"id", "chatcmpl-scripted-" + std::to_string(serial)},
              {"object", "chat.completion"},
              {"created", 1764547200},
              {"model", o.model},
              {"choices", std::move(choices)}};
  if (with_ids) out["prompt_token_ids"] = Ids(prompt_tokens, o.bos_token);
  if (!reply.omit_usage)
    out["usage"] = Usage(a.prompt_tokens, a.completion_tokens);
  a.body = Dump(out);
  return a;
}

// Legacy logprobs over `tokens` (the first `null_first` of them without a
// logprob, as an echoed prompt's first token), offsets from `first_offset`.
json LegacyLogprobs(const ScriptedReply& reply,
                    const std::vector<std::string>& tokens, bool null_first,
                    int64_t k, size_t first_offset) {
  json toks = json::array(), lps = json::array(), tops = json::array(),
       offsets = json::array();
  size_t offset = first_offset;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    toks.push_back(t);
    offsets.push_back(offset);
    offset += Chars(t);
    if (i == 0 && null_first) {
      lps.push_back(nullptr);
      tops.push_back(nullptr);
      continue;
    }
    const double lp = LogprobOf(reply, t);
    lps.push_back(lp);
    json top = json::object();
    for (const auto& [alt, alt_lp] : TopOf(reply, t, lp, k)) top[alt] = alt_lp;
    tops.push_back(std::move(top));
  }
  json out = {
      {"tokens", toks}, {"token_logprobs", lps}, {"text_offset", offsets}};
  if (k > 0) out["top_logprobs"] = std::move(tops);
  return out;
}

Answer CompletionAnswer(const json& req, const ScriptedReply& reply,
                        const ProtocolOptions& o, uint64_t serial) {
  if (auto error = CheckCommon(req, o)) return *error;
  std::string prompt;
  auto p = req.find("prompt");
  if (p != req.end() && p->is_string()) {
    prompt = p->get<std::string>();
  } else if (p != req.end() && p->is_array() && p->size() == 1 &&
             (*p)[0].is_string()) {
    prompt = (*p)[0].get<std::string>();
  } else {
    return Error(400, "prompt must be a string");
  }
  const bool echo = req.value("echo", json(false)) == json(true);
  if (echo && !o.echo_supported) return Error(400, "echo is not supported");
  int64_t n = 1, max_tokens = 16, k = -1;
  if (!IntField(req, "n", 1, 1024, &n) ||
      !IntField(req, "max_tokens", 0, o.max_model_len, &max_tokens) ||
      !IntField(req, "logprobs", 0, 20, &k)) {
    return Error(400, "n, max_tokens or logprobs out of range");
  }
  const bool with_ids =
      req.value("return_token_ids", json(false)) == json(true);
  if (!o.n_supported) n = 1;
  const std::vector<std::string> prompt_tokens = ScriptedTokenize(prompt);
  Answer a;
  a.prompt_tokens = prompt_tokens.size() + (o.bos_token ? 1 : 0);
  json choices = json::array();
  for (int64_t j = 0; j < n; ++j) {
    Completion c = Complete(reply, j, req, max_tokens);
    a.completion_tokens += c.tokens.size();
    json logprobs;
    if (k >= 0) {
      std::vector<std::string> listed;
      if (echo) {
        // vLLM lists a BOS the echoed text lacks; its offsets count it.
        if (o.bos_token) listed.push_back("<s>");
        listed.insert(listed.end(), prompt_tokens.begin(), prompt_tokens.end());
      }
      listed.insert(listed.end(), c.tokens.begin(), c.tokens.end());
      logprobs =
          LegacyLogprobs(reply, listed, echo, k, echo ? 0 : Chars(prompt));
    }
    json choice = {{"index", j},
                   {"text", echo ? prompt + c.text : c.text},
                   {"logprobs", logprobs},
                   {"finish_reason", c.finish_reason},
                   {"stop_reason", nullptr}};
    if (with_ids) {
      choice["prompt_token_ids"] = Ids(prompt_tokens, o.bos_token);
      choice["token_ids"] = Ids(c.tokens, false);
    }
    choices.push_back(std::move(choice));
  }
  json out = {{"id", "cmpl-scripted-" + std::to_string(serial)},
              {"object", "text_completion"},
              {"created", 1764547200},
              {"model", o.model},
              {"choices", std::move(choices)}};
  if (!reply.omit_usage)
    out["usage"] = Usage(a.prompt_tokens, a.completion_tokens);
  a.body = Dump(out);
  return a;
}

std::set<std::string> Words(std::string_view text) {
  std::set<std::string> words;
  std::string w;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (IsWordByte(c)) {
      w += static_cast<char>(std::tolower(c));
    } else if (!w.empty()) {
      words.insert(std::move(w));
      w.clear();
    }
  }
  if (!w.empty()) words.insert(std::move(w));
  return words;
}

double Overlap(const std::set<std::string>& query, std::string_view doc) {
  if (query.empty()) return 0.0;
  const std::set<std::string> d = Words(doc);
  size_t hits = 0;
  for (const std::string& w : query) hits += d.count(w);
  return static_cast<double>(hits) / static_cast<double>(query.size());
}

// Documents of a rerank request: strings or {"text": ...} objects.
std::optional<std::vector<std::string>> Documents(const json& list) {
  if (!list.is_array()) return std::nullopt;
  std::vector<std::string> docs;
  for (const json& d : list) {
    if (d.is_string()) {
      docs.push_back(d.get<std::string>());
    } else if (d.is_object() && d.value("text", json()).is_string()) {
      docs.push_back(d["text"].get<std::string>());
    } else {
      return std::nullopt;
    }
  }
  return docs;
}

// (index, score) best first, ties by index.
std::vector<std::pair<size_t, double>> Ranked(
    const ScriptedReply& reply, const std::string& query,
    const std::vector<std::string>& docs) {
  const std::set<std::string> q = Words(query);
  std::vector<std::pair<size_t, double>> ranked;
  for (size_t i = 0; i < docs.size(); ++i) {
    ranked.emplace_back(
        i, i < reply.scores.size() ? reply.scores[i] : Overlap(q, docs[i]));
  }
  std::stable_sort(
      ranked.begin(), ranked.end(),
      [](const auto& a, const auto& b) { return a.second > b.second; });
  return ranked;
}

Answer RerankAnswer(const json& req, const ScriptedReply& reply,
                    const ProtocolOptions& o, uint64_t serial, bool tei) {
  if (auto error = CheckCommon(req, o)) return *error;
  auto query = req.find("query");
  auto docs = Documents(req.value(tei ? "texts" : "documents", json()));
  if (query == req.end() || !query->is_string() || !docs) {
    return Error(400, tei ? "query and texts are required"
                          : "query and documents are required");
  }
  int64_t top_n = static_cast<int64_t>(docs->size());
  if (!tei && !IntField(req, "top_n", 0, 1 << 20, &top_n)) {
    return Error(400, "top_n must be a non-negative integer");
  }
  auto ranked = Ranked(reply, query->get<std::string>(), *docs);
  if (top_n > 0 && static_cast<size_t>(top_n) < ranked.size())
    ranked.resize(top_n);
  Answer a;
  a.prompt_tokens = ScriptedTokenize(query->get<std::string>()).size();
  for (const std::string& d : *docs)
    a.prompt_tokens += ScriptedTokenize(d).size();
  json results = json::array();
  const bool with_docs = req.value(tei ? "return_text" : "return_documents",
                                   json(false)) == json(true);
  for (const auto& [index, score] : ranked) {
    json r = {{"index", index}, {tei ? "score" : "relevance_score", score}};
    if (with_docs && tei) r["text"] = (*docs)[index];
    if (with_docs && !tei) r["document"] = {{"text", (*docs)[index]}};
    results.push_back(std::move(r));
  }
  if (tei) {
    a.body = Dump(results);
    return a;
  }
  json out = {{"id", "rerank-scripted-" + std::to_string(serial)},
              {"model", o.model},
              {"results", std::move(results)}};
  if (!reply.omit_usage) out["usage"] = {{"total_tokens", a.prompt_tokens}};
  a.body = Dump(out);
  return a;
}

Answer ModelsAnswer(const ProtocolOptions& o) {
  Answer a;
  a.body = Dump({{"object", "list"},
                 {"data",
                  {{{"id", o.model},
                    {"object", "model"},
                    {"created", 1764547200},
                    {"owned_by", "skilldb-scripted"},
                    {"root", o.model},
                    {"parent", nullptr},
                    {"max_model_len", o.max_model_len}}}}});
  return a;
}

}  // namespace

std::vector<std::string> ScriptedTokenize(std::string_view text) {
  std::vector<std::string> tokens;
  size_t i = 0;
  auto word_at = [&](size_t k) {
    return k < text.size() && IsWordByte(static_cast<unsigned char>(text[k]));
  };
  while (i < text.size()) {
    const size_t start = i;
    if (text[i] == ' ' && word_at(i + 1)) ++i;  // a leading space joins a word
    if (word_at(i)) {
      while (word_at(i)) ++i;
    } else if (std::isspace(static_cast<unsigned char>(text[i]))) {
      while (i < text.size() &&
             std::isspace(static_cast<unsigned char>(text[i])) &&
             !(text[i] == ' ' && word_at(i + 1))) {
        ++i;
      }
      if (i == start) ++i;
    } else {
      ++i;
    }
    tokens.emplace_back(text.substr(start, i - start));
  }
  return tokens;
}

int32_t ScriptedTokenId(std::string_view token) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (char c : token) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return static_cast<int32_t>(100 + h % 50000);
}

double ScriptedTokenLogprob(std::string_view token) {
  return -0.01 * static_cast<double>(1 + (ScriptedTokenId(token) % 200));
}

std::string ScriptedChatPrompt(
    const std::vector<std::pair<std::string, std::string>>& messages) {
  std::string out;
  for (const auto& [role, content] : messages) {
    out += "<|im_start|>" + role + "\n" + content + "<|im_end|>\n";
  }
  return out + "<|im_start|>assistant\n";
}

std::string MatchText(Endpoint endpoint, std::string_view body) {
  json req = json::parse(body, nullptr, false);
  if (!req.is_object()) return "";
  if (endpoint == Endpoint::kChat) {
    std::string text;
    auto messages = req.find("messages");
    if (messages == req.end() || !messages->is_array()) return "";
    for (const json& m : *messages) {
      if (!m.is_object()) continue;
      auto c = m.find("content");
      if (c != m.end() && c->is_string()) {
        if (!text.empty()) text += "\n";
        text += c->get<std::string>();
      }
    }
    return text;
  }
  const char* key = endpoint == Endpoint::kCompletions ? "prompt" : "query";
  auto v = req.find(key);
  if (v != req.end() && v->is_string()) return v->get<std::string>();
  if (v != req.end() && v->is_array() && !v->empty() && (*v)[0].is_string()) {
    return (*v)[0].get<std::string>();
  }
  return "";
}

Answer Respond(Endpoint endpoint, std::string_view body,
               const ScriptedReply& reply, const ProtocolOptions& options,
               uint64_t serial) {
  if (reply.body || reply.status != 200) {
    Answer a;
    if (reply.body) {
      a.status = reply.status;
      a.body = *reply.body;
    } else {
      a = Error(reply.status,
                "scripted answer " + std::to_string(reply.status));
    }
    a.content_type = reply.content_type;
    a.headers = reply.headers;
    return a;
  }
  json req = json::parse(body, nullptr, false);
  Answer a;
  if (endpoint != Endpoint::kModels && req.is_discarded()) {
    a = Error(400, "request body is not valid JSON");
  } else {
    switch (endpoint) {
      case Endpoint::kModels:
        a = ModelsAnswer(options);
        break;
      case Endpoint::kChat:
        a = ChatAnswer(req, reply, options, serial);
        break;
      case Endpoint::kCompletions:
        a = CompletionAnswer(req, reply, options, serial);
        break;
      case Endpoint::kRerank:
        a = RerankAnswer(req, reply, options, serial, false);
        break;
      case Endpoint::kTeiRerank:
        a = RerankAnswer(req, reply, options, serial, true);
        break;
      case Endpoint::kAny:
        a = Error(404, "no such endpoint");
        break;
    }
  }
  for (const auto& [k, v] : reply.headers) a.headers[k] = v;
  return a;
}

}  // namespace skilldb::scripted
