#include "skilldb/llm/chat_template.h"

#include <doctest/doctest.h>

namespace skilldb::llm {
namespace {

const Chat kChat = {{"system", "Be brief."}, {"user", "Tile the K loop?"}};

TEST_CASE("chatml formats each message and opens the assistant turn") {
  auto text = ApplyChatTemplate("chatml", kChat, true);
  REQUIRE(text.ok());
  CHECK(*text ==
        "<|im_start|>system\nBe brief.<|im_end|>\n"
        "<|im_start|>user\nTile the K loop?<|im_end|>\n"
        "<|im_start|>assistant\n");
  auto closed = ApplyChatTemplate("chatml", kChat, false);
  REQUIRE(closed.ok());
  CHECK(closed->find("<|im_start|>assistant") == std::string::npos);
}

TEST_CASE("llama3 formats headers without a BOS the server would add again") {
  auto text = ApplyChatTemplate("llama3", {{"user", "hi"}}, true);
  REQUIRE(text.ok());
  CHECK(*text ==
        "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST_CASE("plain writes role-prefixed lines") {
  auto text = ApplyChatTemplate("plain", {{"user", "hi"}}, true);
  REQUIRE(text.ok());
  CHECK(*text == "user: hi\nassistant: ");
}

TEST_CASE("an unknown template or an empty chat is an invalid argument") {
  CHECK(ApplyChatTemplate("mistral", kChat, true).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(ApplyChatTemplate("chatml", {}, true).status().code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace skilldb::llm
