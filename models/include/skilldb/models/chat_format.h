// ChatFormat: a checkpoint's chat template, recognized and applied in C++.
//
// A checkpoint declares its template as Jinja (chat_template.jinja, or
// tokenizer_config.json's chat_template). Rather than interpret Jinja, the
// template's text is compared with the templates this module knows, exactly
// (up to trailing whitespace), and a known one is applied by code that
// renders the same text transformers' Jinja renders (checked against it by
// the fixtures of models/tools/make_fixtures.py):
//
//   qwen2    Qwen2-*-Instruct: ChatML, a default system prompt
//   qwen2.5  Qwen2.5-*-Instruct, -Coder-Instruct: ChatML with tool support
//            (tools are not passed here), a default system prompt
//   chatml   plain ChatML, no default system prompt
//   llama3   Meta-Llama-3-*-Instruct: header tokens, BOS, trimmed contents
//
// The qwen2 and qwen2.5 patterns accept any default system prompt (it is
// read from the template). Any other template is NotSupported: an unknown
// template is never approximated by a guess.
//
// A ChatFormat is an immutable value: safe to share between threads.
#ifndef SKILLDB_MODELS_CHAT_FORMAT_H_
#define SKILLDB_MODELS_CHAT_FORMAT_H_

#include <string>
#include <string_view>

#include "skilldb/llm/backbone.h"
#include "skilldb/status.h"

namespace skilldb::models {

class ChatFormat {
 public:
  enum class Family { kQwen2, kQwen25, kChatMl, kLlama3 };

  // Recognizes `template_text`. `bos_token` is the tokenizer's BOS text
  // (Llama 3's template starts with it). NotSupported for a template this
  // module does not know; the message quotes its beginning.
  static Result<ChatFormat> FromTemplate(std::string_view template_text,
                                         std::string bos_token);
  // Reads dir/chat_template.jinja, else tokenizer_config.json's
  // chat_template (a string, or the entry named "default" of a list), and
  // its bos_token. NotFound when the checkpoint declares no template.
  static Result<ChatFormat> FromCheckpoint(const std::string& dir);

  Family family() const { return family_; }
  std::string_view name() const;  // "qwen2", "qwen2.5", "chatml", "llama3"
  // The system prompt used when a chat has none ("" for chatml, llama3).
  const std::string& default_system_prompt() const { return system_; }
  // The text that ends a turn: "<|im_end|>" or "<|eot_id|>".
  std::string_view end_of_turn() const;

  // The prompt text for `chat` (what apply_chat_template(tokenize=False)
  // returns), ending with the assistant's header when
  // `add_generation_prompt`. InvalidArgument for an empty chat or a role
  // other than system, user and assistant.
  Result<std::string> Apply(const llm::Chat& chat,
                            bool add_generation_prompt) const;

 private:
  Family family_ = Family::kChatMl;
  std::string system_;
  std::string bos_;
};

}  // namespace skilldb::models

#endif  // SKILLDB_MODELS_CHAT_FORMAT_H_
