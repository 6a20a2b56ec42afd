// Chat templates the HTTP client applies itself: the raw prompt text that a
// chat becomes when it is sent to /v1/completions (scoring). Chat requests
// to /v1/chat/completions are formatted by the server, not by these.
//
// Pure functions: safe to call from any thread.
#ifndef SKILLDB_LLM_CHAT_TEMPLATE_H_
#define SKILLDB_LLM_CHAT_TEMPLATE_H_

#include <string>
#include <string_view>

#include "skilldb/llm/backbone.h"
#include "skilldb/status.h"

namespace skilldb::llm {

// Returns the text of `chat` under the template named `name` ("chatml",
// "llama3" or "plain"; see client_config.h), followed by the opening of
// the assistant's turn when `add_generation_prompt` (so that a completion
// appended to it is the assistant's answer). Message contents are copied
// verbatim. Errors: InvalidArgument for an unknown template name or an
// empty chat.
Result<std::string> ApplyChatTemplate(std::string_view name, const Chat& chat,
                                      bool add_generation_prompt);

}  // namespace skilldb::llm

#endif  // SKILLDB_LLM_CHAT_TEMPLATE_H_
