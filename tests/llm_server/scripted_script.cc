// Scripted replies: their names, their constructors for tests, and their
// JSON form (one object per line of a script file).
#include <nlohmann/json.hpp>

#include "scripted_protocol.h"

namespace skilldb::scripted {
namespace {

using json = nlohmann::json;

constexpr std::pair<Endpoint, std::string_view> kNames[] = {
    {Endpoint::kAny, "any"},
    {Endpoint::kChat, "chat"},
    {Endpoint::kCompletions, "completions"},
    {Endpoint::kModels, "models"},
    {Endpoint::kRerank, "rerank"},
    {Endpoint::kTeiRerank, "tei_rerank"},
};

Status Bad(const std::string& what) {
  return Status::InvalidArgument("scripted reply: " + what);
}

// Each key's reader: false when the value has the wrong type.
using Reader = bool (*)(const json&, ScriptedReply*);

bool ReadString(const json& v, std::string* out) {
  if (!v.is_string()) return false;
  *out = v.get<std::string>();
  return true;
}

bool ReadInt(const json& v, int* out) {
  if (!v.is_number_integer()) return false;
  *out = v.get<int>();
  return true;
}

bool ReadEndpoint(const json& v, ScriptedReply* r) {
  if (!v.is_string()) return false;
  auto e = EndpointFromName(v.get<std::string>());
  if (e) r->endpoint = *e;
  return e.has_value();
}

bool ReadDelivery(const json& v, ScriptedReply* r) {
  if (v == "whole")
    r->delivery = Delivery::kWhole;
  else if (v == "truncated")
    r->delivery = Delivery::kTruncated;
  else if (v == "dropped")
    r->delivery = Delivery::kDropped;
  else if (v == "drip")
    r->delivery = Delivery::kDrip;
  else
    return false;
  return true;
}

bool ReadTexts(const json& v, ScriptedReply* r) {
  if (!v.is_array()) return false;
  r->texts.clear();
  for (const json& t : v) {
    if (!t.is_string()) return false;
    r->texts.push_back(t.get<std::string>());
  }
  return true;
}

bool ReadHeaders(const json& v, ScriptedReply* r) {
  if (!v.is_object()) return false;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!it.value().is_string()) return false;
    r->headers[it.key()] = it.value().get<std::string>();
  }
  return true;
}

bool ReadScores(const json& v, ScriptedReply* r) {
  if (!v.is_array()) return false;
  for (const json& s : v) {
    if (!s.is_number()) return false;
    r->scores.push_back(s.get<double>());
  }
  return true;
}

bool ReadAlternatives(const json& v, ScriptedReply* r) {
  if (!v.is_object()) return false;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!it.value().is_number()) return false;
    r->alternatives[it.key()] = it.value().get<double>();
  }
  return true;
}

const std::pair<std::string_view, Reader> kReaders[] = {
    {"endpoint", ReadEndpoint},
    {"prompt_contains",
     [](const json& v, ScriptedReply* r) {
       return ReadString(v, &r->prompt_contains);
     }},
    {"times",
     [](const json& v, ScriptedReply* r) { return ReadInt(v, &r->times); }},
    {"numbered",
     [](const json& v, ScriptedReply* r) {
       if (!v.is_boolean()) return false;
       r->numbered = v.get<bool>();
       return true;
     }},
    {"status",
     [](const json& v, ScriptedReply* r) { return ReadInt(v, &r->status); }},
    {"headers", ReadHeaders},
    {"texts", ReadTexts},
    {"text",
     [](const json& v, ScriptedReply* r) {
       r->texts.assign(1, "");
       return ReadString(v, &r->texts[0]);
     }},
    {"finish_reason",
     [](const json& v, ScriptedReply* r) {
       return ReadString(v, &r->finish_reason);
     }},
    {"token_logprob",
     [](const json& v, ScriptedReply* r) {
       if (!v.is_number()) return false;
       r->token_logprob = v.get<double>();
       return true;
     }},
    {"alternatives", ReadAlternatives},
    {"scores", ReadScores},
    {"body",
     [](const json& v, ScriptedReply* r) {
       r->body.emplace();
       return ReadString(v, &*r->body);
     }},
    {"content_type",
     [](const json& v, ScriptedReply* r) {
       return ReadString(v, &r->content_type);
     }},
    {"omit_usage",
     [](const json& v, ScriptedReply* r) {
       if (!v.is_boolean()) return false;
       r->omit_usage = v.get<bool>();
       return true;
     }},
    {"delivery", ReadDelivery},
    {"truncate_at",
     [](const json& v, ScriptedReply* r) {
       if (!v.is_number_unsigned()) return false;
       r->truncate_at = v.get<size_t>();
       return true;
     }},
    {"delay_ms",
     [](const json& v, ScriptedReply* r) { return ReadInt(v, &r->delay_ms); }},
};

}  // namespace

std::string_view EndpointName(Endpoint endpoint) {
  for (const auto& [e, name] : kNames) {
    if (e == endpoint) return name;
  }
  return "any";
}

std::optional<Endpoint> EndpointFromName(std::string_view name) {
  for (const auto& [e, n] : kNames) {
    if (n == name) return e;
  }
  return std::nullopt;
}

ScriptedReply TextReply(std::vector<std::string> texts) {
  ScriptedReply r;
  r.texts = std::move(texts);
  return r;
}

ScriptedReply StatusReply(int status,
                          std::map<std::string, std::string> headers) {
  ScriptedReply r;
  r.status = status;
  r.headers = std::move(headers);
  return r;
}

ScriptedReply RawReply(int status, std::string body) {
  ScriptedReply r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

Result<ScriptedReply> ReplyFromJson(std::string_view json_text) {
  json j = json::parse(json_text, nullptr, false);
  if (!j.is_object()) return Bad("not a JSON object");
  ScriptedReply reply;
  for (auto it = j.begin(); it != j.end(); ++it) {
    Reader reader = nullptr;
    for (const auto& [key, r] : kReaders) {
      if (key == it.key()) reader = r;
    }
    if (reader == nullptr) return Bad("unknown key \"" + it.key() + "\"");
    if (!reader(it.value(), &reply))
      return Bad("bad value for \"" + it.key() + "\"");
  }
  return reply;
}

Result<std::vector<ScriptedReply>> ParseScript(std::string_view jsonl) {
  std::vector<ScriptedReply> replies;
  size_t line_no = 0;
  while (!jsonl.empty()) {
    const size_t nl = jsonl.find('\n');
    std::string_view line = jsonl.substr(0, nl);
    jsonl.remove_prefix(nl == std::string_view::npos ? jsonl.size() : nl + 1);
    ++line_no;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
      line.remove_suffix(1);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (line.empty() || line.front() == '#') continue;
    auto reply = ReplyFromJson(line);
    if (!reply.ok())
      return reply.status().WithContext("line " + std::to_string(line_no));
    replies.push_back(std::move(reply).value());
  }
  return replies;
}

}  // namespace skilldb::scripted
