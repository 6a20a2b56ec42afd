#include "skilldb/llm/chat_template.h"

namespace skilldb::llm {
namespace {

// ChatML as Qwen2's tokenizer_config.json declares it, without the default
// system message some Qwen2.5 templates insert when none is given: the
// client scores exactly the messages it is handed.
std::string ChatMl(const Chat& chat, bool add_generation_prompt) {
  std::string out;
  for (const Message& m : chat) {
    out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  }
  if (add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

// Llama 3's template without <|begin_of_text|>: /v1/completions servers
// tokenize the prompt with special tokens added, so BOS would appear twice.
std::string Llama3(const Chat& chat, bool add_generation_prompt) {
  std::string out;
  for (const Message& m : chat) {
    out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" +
           m.content + "<|eot_id|>";
  }
  if (add_generation_prompt) {
    out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  }
  return out;
}

std::string Plain(const Chat& chat, bool add_generation_prompt) {
  std::string out;
  for (const Message& m : chat) out += m.role + ": " + m.content + "\n";
  if (add_generation_prompt) out += "assistant: ";
  return out;
}

}  // namespace

Result<std::string> ApplyChatTemplate(std::string_view name, const Chat& chat,
                                      bool add_generation_prompt) {
  if (chat.empty()) return Status::InvalidArgument("chat template: empty chat");
  if (name == "chatml") return ChatMl(chat, add_generation_prompt);
  if (name == "llama3") return Llama3(chat, add_generation_prompt);
  if (name == "plain") return Plain(chat, add_generation_prompt);
  return Status::InvalidArgument("unknown chat template '" + std::string(name) +
                                 "' (known: chatml, llama3, plain)");
}

}  // namespace skilldb::llm
