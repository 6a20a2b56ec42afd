#include "skilldb/models/chat_format.h"

#include <doctest/doctest.h>

#include "test_fixtures.h"

namespace skilldb::models {
namespace {

using nlohmann::json;

llm::Chat ChatOf(const json& j) {
  llm::Chat chat;
  for (const json& m : j) chat.push_back({m["role"], m["content"]});
  return chat;
}

std::string TemplateText(const std::string& name) {
  // The same texts as models/tools/chat_templates.py, read back from the
  // fixture checkpoints where they were written, or rebuilt here.
  static const std::map<std::string, std::string> kTexts = {
      {"qwen2",
       "{% for message in messages %}{% if loop.first and messages[0]['role'] "
       "!= 'system' %}{{ '<|im_start|>system\\nYou are a helpful "
       "assistant.<|im_end|>\\n' }}{% endif %}{{'<|im_start|>' + "
       "message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
       "'\\n'}}{% endfor %}{% if add_generation_prompt %}{{ "
       "'<|im_start|>assistant\\n' }}{% endif %}"},
      {"chatml",
       "{% for message in messages %}{{'<|im_start|>' + message['role'] + "
       "'\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if "
       "add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"},
  };
  if (name == "qwen2.5") {
    std::ifstream in(testing::FixtureDir() + "/qwen2-tiny/chat_template.jinja");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  if (name == "llama3") {
    std::ifstream in(testing::FixtureDir() + "/llama-tiny/chat_template.jinja");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  return kTexts.at(name);
}

TEST_CASE("every known template renders what transformers' Jinja renders") {
  const json ref =
      testing::ReadJsonFile(testing::FixtureDir() + "/reference/chat.json");
  int compared = 0;
  for (const char* kind : {"qwen2", "llama"}) {
    const json& r = ref[kind];
    for (const auto& [key, rows] : r["rendered"].items()) {
      const std::string name = key;  // clang 14 captures no structured binding
      CAPTURE(kind);
      CAPTURE(name);
      auto format =
          ChatFormat::FromTemplate(TemplateText(name), r["bos_token"]);
      REQUIRE_MESSAGE(format.ok(), format.status().ToString());
      CHECK(format->name() == name);
      size_t row = 0;
      for (const json& chat : ref["chats"]) {
        for (bool gen : {false, true}) {
          const json& expected = rows[row++];
          REQUIRE(expected["add_generation_prompt"].get<bool>() == gen);
          auto text = format->Apply(ChatOf(chat), gen);
          REQUIRE(text.ok());
          CHECK(*text == expected["text"].get<std::string>());
          ++compared;
        }
      }
    }
  }
  MESSAGE(compared << " chat renderings compared");
  CHECK(compared >= 48);
}

TEST_CASE("a checkpoint's template is found in chat_template.jinja") {
  auto qwen = ChatFormat::FromCheckpoint(testing::FixtureDir() + "/qwen2-tiny");
  REQUIRE_MESSAGE(qwen.ok(), qwen.status().ToString());
  CHECK(qwen->family() == ChatFormat::Family::kQwen25);
  CHECK(qwen->default_system_prompt() ==
        "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.");
  CHECK(qwen->end_of_turn() == "<|im_end|>");
  auto llama =
      ChatFormat::FromCheckpoint(testing::FixtureDir() + "/llama-tiny");
  REQUIRE_MESSAGE(llama.ok(), llama.status().ToString());
  CHECK(llama->family() == ChatFormat::Family::kLlama3);
}

TEST_CASE("a template that differs from a known one is NotSupported") {
  std::string altered = TemplateText("chatml");
  altered.replace(altered.find("'\\n'"), 4, "'\\n\\n'");
  CHECK(ChatFormat::FromTemplate(altered, "").status().code() ==
        StatusCode::kNotSupported);
  CHECK(ChatFormat::FromTemplate("{{ messages }}", "").status().code() ==
        StatusCode::kNotSupported);
  // A system slot that would break out of its string literal is no match.
  std::string escape = TemplateText("qwen2");
  escape.replace(escape.find("You are a helpful assistant."), 28,
                 "x' + messages[0]['content'] + '");
  CHECK(ChatFormat::FromTemplate(escape, "").status().code() ==
        StatusCode::kNotSupported);
}

TEST_CASE("a custom default system prompt is read from a qwen2 template") {
  std::string custom = TemplateText("qwen2");
  custom.replace(custom.find("You are a helpful assistant."), 28,
                 "Be brief.\\nVery.");
  auto format = ChatFormat::FromTemplate(custom, "");
  REQUIRE(format.ok());
  CHECK(format->default_system_prompt() == "Be brief.\nVery.");
  auto text = format->Apply({{"user", "hi"}}, true);
  REQUIRE(text.ok());
  CHECK(*text ==
        "<|im_start|>system\nBe brief.\nVery.<|im_end|>\n<|im_start|>user\nhi"
        "<|im_end|>\n<|im_start|>assistant\n");
}

TEST_CASE("empty chats and unknown roles are InvalidArgument") {
  auto format = ChatFormat::FromTemplate(TemplateText("chatml"), "");
  REQUIRE(format.ok());
  CHECK(format->Apply({}, true).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(format->Apply({{"tool", "x"}}, true).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(ChatFormat::FromTemplate(TemplateText("llama3"), "").status().code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace skilldb::models
