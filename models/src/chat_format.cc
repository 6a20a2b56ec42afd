#include "skilldb/models/chat_format.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "skilldb/util/file.h"
#include "unicode.h"

namespace skilldb::models {
namespace {

using Json = nlohmann::json;

// The templates, verbatim as checkpoints ship them (models/tools/
// chat_templates.py holds the same texts). "\x01" marks where a template
// carries its default system prompt (inside a single-quoted Jinja string).
constexpr std::string_view kSystemSlot = "\x01";

constexpr std::string_view kQwen2Template =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != "
    "'system' %}{{ '<|im_start|>system\\n\x01<|im_end|>\\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}";

constexpr std::string_view kQwen25Template =
    R"TPL({%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- ')TPL"
    "\x01"
    R"TPL(' }}
    {%- endif %}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\n)TPL"
    "\x01"
    R"TPL(<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
)TPL";

constexpr std::string_view kChatMlTemplate =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' "
    "+ message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if "
    "add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

constexpr std::string_view kLlama3Template =
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + "
    "'<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' %}"
    "{% if loop.index0 == 0 %}{% set content = bos_token + content %}"
    "{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";

std::string_view TrimTrailingSpace(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' ||
                        s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// The contents of a single-quoted Jinja string literal, unescaped; false
// when it holds an unescaped quote (it would not be one literal) or an
// escape this module does not decode.
bool UnescapeJinjaLiteral(std::string_view raw, std::string* out) {
  out->clear();
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c == '\'') return false;
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (++i == raw.size()) return false;
    switch (raw[i]) {
      case 'n':
        out->push_back('\n');
        break;
      case 't':
        out->push_back('\t');
        break;
      case '\\':
        out->push_back('\\');
        break;
      case '\'':
        out->push_back('\'');
        break;
      case '"':
        out->push_back('"');
        break;
      default:
        return false;
    }
  }
  return true;
}

// Whether `text` is `pattern` with one string in every system slot; that
// string (unescaped) goes to `system`.
bool MatchPattern(std::string_view pattern, std::string_view text,
                  std::string* system) {
  pattern = TrimTrailingSpace(pattern);
  text = TrimTrailingSpace(text);
  const size_t slot = pattern.find(kSystemSlot);
  if (slot == std::string_view::npos) {
    system->clear();
    return pattern == text;
  }
  if (text.substr(0, slot) != pattern.substr(0, slot)) return false;
  const std::string_view after = pattern.substr(slot + 1);
  const size_t next_slot = after.find(kSystemSlot);
  const std::string_view anchor = after.substr(0, next_slot);
  const size_t end = text.find(anchor, slot);
  if (end == std::string_view::npos) return false;
  const std::string_view raw = text.substr(slot, end - slot);
  std::string rebuilt;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == kSystemSlot[0]) {
      rebuilt.append(raw);
    } else {
      rebuilt.push_back(pattern[i]);
    }
  }
  return rebuilt == text && UnescapeJinjaLiteral(raw, system);
}

// Python's str.strip(), which Jinja's trim filter applies.
std::string PythonStrip(std::string_view s) {
  const std::u32string u = internal::DecodeUtf8(s);
  size_t b = 0, e = u.size();
  while (b < e && internal::IsPythonSpace(u[b])) ++b;
  while (e > b && internal::IsPythonSpace(u[e - 1])) --e;
  return internal::EncodeUtf8(std::u32string_view(u).substr(b, e - b));
}

std::string ChatMlTurn(const llm::Message& m) {
  return "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
}

}  // namespace

Result<ChatFormat> ChatFormat::FromTemplate(std::string_view template_text,
                                            std::string bos_token) {
  struct Known {
    Family family;
    std::string_view pattern;
  };
  static constexpr Known kKnown[] = {
      {Family::kQwen2, kQwen2Template},
      {Family::kQwen25, kQwen25Template},
      {Family::kChatMl, kChatMlTemplate},
      {Family::kLlama3, kLlama3Template},
  };
  for (const Known& k : kKnown) {
    std::string system;
    if (!MatchPattern(k.pattern, template_text, &system)) continue;
    ChatFormat f;
    f.family_ = k.family;
    f.system_ = std::move(system);
    f.bos_ = std::move(bos_token);
    if (f.family_ == Family::kLlama3 && f.bos_.empty()) {
      return Status::InvalidArgument(
          "the Llama 3 chat template needs the tokenizer's bos_token");
    }
    return f;
  }
  std::string head(template_text.substr(0, 120));
  return Status::NotSupported(
      "chat template not recognized (known: qwen2, qwen2.5, chatml, llama3); "
      "it begins: " +
      head);
}

Result<ChatFormat> ChatFormat::FromCheckpoint(const std::string& dir) {
  std::string template_text, bos;
  const std::string config_path = dir + "/tokenizer_config.json";
  if (util::IsRegularFile(config_path)) {
    SKILLDB_ASSIGN_OR_RETURN(std::string text, util::ReadFile(config_path));
    try {
      const Json config = Json::parse(text);
      const Json b = config.value("bos_token", Json());
      if (b.is_string()) bos = b.get<std::string>();
      if (b.is_object()) bos = b.value("content", std::string());
      const Json t = config.value("chat_template", Json());
      if (t.is_string()) template_text = t.get<std::string>();
      if (t.is_array()) {
        for (const Json& entry : t) {
          if (entry.value("name", std::string()) == "default") {
            template_text = entry.value("template", std::string());
          }
        }
      }
    } catch (const Json::exception& e) {
      return Status::InvalidArgument(config_path + ": " + e.what());
    }
  }
  const std::string jinja_path = dir + "/chat_template.jinja";
  if (util::IsRegularFile(jinja_path)) {
    SKILLDB_ASSIGN_OR_RETURN(template_text, util::ReadFile(jinja_path));
  }
  if (template_text.empty()) {
    return Status::NotFound(dir + ": the checkpoint declares no chat template");
  }
  auto format = FromTemplate(template_text, bos);
  if (!format.ok()) return format.status().WithContext(dir);
  return format;
}

std::string_view ChatFormat::name() const {
  switch (family_) {
    case Family::kQwen2:
      return "qwen2";
    case Family::kQwen25:
      return "qwen2.5";
    case Family::kChatMl:
      return "chatml";
    case Family::kLlama3:
      return "llama3";
  }
  return "";
}

std::string_view ChatFormat::end_of_turn() const {
  return family_ == Family::kLlama3 ? "<|eot_id|>" : "<|im_end|>";
}

Result<std::string> ChatFormat::Apply(const llm::Chat& chat,
                                      bool add_generation_prompt) const {
  if (chat.empty()) return Status::InvalidArgument("chat: no messages");
  for (const llm::Message& m : chat) {
    if (m.role != "system" && m.role != "user" && m.role != "assistant") {
      return Status::InvalidArgument("chat: role '" + m.role +
                                     "' (system, user or assistant expected)");
    }
  }
  std::string out;
  switch (family_) {
    case Family::kQwen2:
      for (size_t i = 0; i < chat.size(); ++i) {
        if (i == 0 && chat[0].role != "system") {
          out += "<|im_start|>system\n" + system_ + "<|im_end|>\n";
        }
        out += ChatMlTurn(chat[i]);
      }
      break;
    case Family::kQwen25:
      out += "<|im_start|>system\n" +
             (chat[0].role == "system" ? chat[0].content : system_) +
             "<|im_end|>\n";
      for (size_t i = 0; i < chat.size(); ++i) {
        if (i == 0 && chat[i].role == "system") continue;
        out += ChatMlTurn(chat[i]);
      }
      break;
    case Family::kChatMl:
      for (const llm::Message& m : chat) out += ChatMlTurn(m);
      break;
    case Family::kLlama3:
      for (size_t i = 0; i < chat.size(); ++i) {
        if (i == 0) out += bos_;
        out += "<|start_header_id|>" + chat[i].role + "<|end_header_id|>\n\n" +
               PythonStrip(chat[i].content) + "<|eot_id|>";
      }
      break;
  }
  if (add_generation_prompt) {
    out += family_ == Family::kLlama3
               ? "<|start_header_id|>assistant<|end_header_id|>\n\n"
               : "<|im_start|>assistant\n";
  }
  return out;
}

}  // namespace skilldb::models
