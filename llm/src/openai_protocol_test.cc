#include "openai_protocol.h"

#include <doctest/doctest.h>

namespace skilldb::llm::internal {
namespace {

HttpAnswer Answer(std::string body) {
  return HttpAnswer{"POST http://test/v1/chat/completions", 200,
                    std::move(body), 1};
}

StatusCode CodeOf(const Result<ParsedSamples>& r) { return r.status().code(); }

TEST_CASE(
    "a chat answer is read in choice-index order with logprobs and usage") {
  auto r = ParseChatAnswer(Answer(R"({
    "choices": [
      {"index": 1, "message": {"role": "assistant", "content": "B"},
       "finish_reason": "length", "logprobs": null},
      {"index": 0, "message": {"role": "assistant", "content": "A!"},
       "finish_reason": "stop", "token_ids": [5, 6],
       "logprobs": {"content": [
         {"token": "A", "logprob": -0.5, "bytes": [65],
          "top_logprobs": [{"token": "A", "logprob": -0.5},
                           {"token": "Z", "logprob": -1.5}]},
         {"token": "!", "logprob": -0.25, "top_logprobs": []}]}}],
    "prompt_token_ids": [1, 2, 3],
    "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}})"),
                           2);
  REQUIRE(r.ok());
  REQUIRE(r->samples.size() == 2);
  const Sample& a = r->samples[0];
  CHECK(a.text == "A!");
  CHECK(a.finish_reason == "stop");
  CHECK(a.token_logprobs == std::vector<double>{-0.5, -0.25});
  CHECK(a.token_ids == std::vector<int32_t>{5, 6});
  REQUIRE(a.top_logprobs.size() == 2);
  CHECK(a.top_logprobs[0].size() == 2);
  CHECK(a.top_logprobs[0][1].text == "Z");
  CHECK(a.top_logprobs[0][1].logprob == -1.5);
  CHECK(r->samples[1].text == "B");
  CHECK(r->samples[1].token_logprobs.empty());
  CHECK(r->prompt_token_ids == std::vector<int32_t>{1, 2, 3});
  CHECK(r->usage.present);
  CHECK(r->usage.prompt_tokens == 7);
  CHECK(r->usage.completion_tokens == 3);
}

TEST_CASE(
    "a null content is an empty text and a missing usage is recorded as such") {
  auto r = ParseChatAnswer(
      Answer(R"({"choices": [{"message": {"content": null}}]})"), 1);
  REQUIRE(r.ok());
  CHECK(r->samples[0].text.empty());
  CHECK(!r->usage.present);
}

TEST_CASE("malformed chat answers are invalid input, never exceptions") {
  const char* bad[] = {
      "",
      "{\"choices\": [",  // truncated
      "<html>502 Bad Gateway</html>",
      "[]",
      "{}",
      R"({"choices": {}})",
      R"({"choices": [{"index": 0}]})",
      R"({"choices": [{"message": "hi"}]})",
      R"({"choices": [{"message": {"content": 5}}]})",
      R"({"choices": [{"message": {}}]})",
      R"({"choices": [{"index": 3, "message": {"content": "x"}}]})",
      R"({"choices": [{"index": "0", "message": {"content": "x"}}]})",
      R"({"choices": [{"message": {"content": "x"}, "logprobs": {"content": [{"token": "x"}]}}]})",
      R"({"choices": [{"message": {"content": "x"}, "logprobs": {"content": 3}}]})",
      R"({"choices": [{"message": {"content": "x"}, "logprobs": {"content": [{"token": "x", "logprob": "-1"}]}}]})",
      R"({"choices": [1]})",
  };
  for (const char* body : bad) {
    CAPTURE(body);
    CHECK(CodeOf(ParseChatAnswer(Answer(body), 1)) == StatusCode::kInvalidArgument);
  }
}

TEST_CASE("a chat answer with fewer or more choices than asked is an error") {
  const std::string one = R"({"choices": [{"message": {"content": "x"}}]})";
  CHECK(CodeOf(ParseChatAnswer(Answer(one), 2)) == StatusCode::kInvalidArgument);
  const std::string dup =
      R"({"choices": [{"index": 0, "message": {"content": "x"}},
                      {"index": 0, "message": {"content": "y"}}]})";
  CHECK(CodeOf(ParseChatAnswer(Answer(dup), 2)) == StatusCode::kInvalidArgument);
}

TEST_CASE("wrong-typed usage and token ids are ignored rather than trusted") {
  auto r = ParseChatAnswer(Answer(R"({
    "choices": [{"message": {"content": "x"}, "token_ids": [1, "2"]}],
    "prompt_token_ids": [1, 99999999999],
    "usage": {"prompt_tokens": -4, "completion_tokens": "3"}})"),
                           1);
  REQUIRE(r.ok());
  CHECK(r->samples[0].token_ids.empty());
  CHECK(r->prompt_token_ids.empty());
  CHECK(!r->usage.present);
}

TEST_CASE("deeply nested JSON is refused without exhausting the stack") {
  std::string deep(200000, '[');
  deep += std::string(200000, ']');
  CHECK(CodeOf(ParseChatAnswer(Answer(deep), 1)) == StatusCode::kInvalidArgument);
}

TEST_CASE("a legacy completion answer reads logprobs and sorts alternatives") {
  auto r = ParseCompletionAnswer(Answer(R"({
    "choices": [{"index": 0, "text": " world", "finish_reason": "length",
      "logprobs": {"tokens": [" world"], "token_logprobs": [-0.7],
                   "top_logprobs": [{" there": -2.0, " world": -0.7}],
                   "text_offset": [5]}}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1}})"),
                                 1);
  REQUIRE(r.ok());
  const Sample& s = r->samples[0];
  CHECK(s.text == " world");
  CHECK(s.token_logprobs == std::vector<double>{-0.7});
  REQUIRE(s.top_logprobs.size() == 1);
  CHECK(s.top_logprobs[0][0].text == " world");
  CHECK(s.top_logprobs[0][1].text == " there");
  CHECK(
      CodeOf(ParseCompletionAnswer(
          Answer(
              R"({"choices": [{"text": "x", "logprobs": {"tokens": ["x"]}}]})"),
          1)) == StatusCode::kInvalidArgument);
  CHECK(CodeOf(ParseCompletionAnswer(Answer(R"({"choices": [{"text": 1}]})"),
                                     1)) == StatusCode::kInvalidArgument);
}

// An echo answer for the prompt "P: " and completion "ab", then one
// generated token "!".
const char* kEcho = R"({"choices": [{"text": "P: ab!", "logprobs": {
  "tokens": ["P", ": ", "a", "b", "!"],
  "token_logprobs": [null, -1.0, -0.5, -0.25, -3.0],
  "text_offset": [0, 1, 3, 4, 5]}}],
  "usage": {"prompt_tokens": 4, "completion_tokens": 1}})";

TEST_CASE("echoed logprobs score exactly the completion's tokens") {
  UsageCounts usage;
  auto e = ParseEchoAnswer(Answer(kEcho), "P: ab", &usage);
  REQUIRE(e.ok());
  CHECK(usage.prompt_tokens == 4);
  auto s = ScoreFromEcho(*e, 3, 5);
  REQUIRE(s.ok());
  CHECK(s->token_logprobs == std::vector<double>{-0.5, -0.25});
  CHECK(s->sum_logprob == doctest::Approx(-0.75));
}

TEST_CASE("a token straddling the prompt boundary counts as the completion's") {
  UsageCounts usage;
  // "P:" + " ab": the token ": a" spans both.
  const char* body = R"({"choices": [{"text": "P: ab", "logprobs": {
    "tokens": ["P", ": a", "b"], "token_logprobs": [null, -2.0, -0.5]}}]})";
  auto e = ParseEchoAnswer(Answer(body), "P: ab", &usage);
  REQUIRE(e.ok());
  auto s = ScoreFromEcho(*e, 2, 5);
  REQUIRE(s.ok());
  CHECK(s->token_logprobs == std::vector<double>{-2.0, -0.5});
}

TEST_CASE("a BOS the text does not contain takes no bytes") {
  UsageCounts usage;
  const char* body = R"({"choices": [{"text": "Hi there", "logprobs": {
    "tokens": ["<s>", "Hi", " there"], "token_logprobs": [null, -1.0, -2.0],
    "text_offset": [0, 3, 5]}}], "prompt_token_ids": [1, 10, 11]})";
  auto e = ParseEchoAnswer(Answer(body), "Hi there", &usage);
  REQUIRE(e.ok());
  auto s = ScoreFromEcho(*e, 2, 8);
  REQUIRE(s.ok());
  CHECK(s->token_logprobs == std::vector<double>{-2.0});
  CHECK(s->prompt_token_ids == std::vector<int32_t>{1, 10});
  CHECK(s->completion_token_ids == std::vector<int32_t>{11});
}

TEST_CASE(
    "character text offsets map to bytes when tokens do not spell the text") {
  UsageCounts usage;
  // Byte-level tokens shown as "Ġ..." do not spell the text; offsets count
  // characters: "é" is one character but two bytes.
  const char* body = R"({"choices": [{"text": "é x", "logprobs": {
    "tokens": ["Ã©", "Ġx"], "token_logprobs": [null, -0.5],
    "text_offset": [0, 1]}}]})";
  auto e = ParseEchoAnswer(Answer(body), "é x", &usage);
  REQUIRE(e.ok());
  CHECK(e->starts == std::vector<size_t>{0, 2});
  auto s = ScoreFromEcho(*e, 2, 4);
  REQUIRE(s.ok());
  CHECK(s->token_logprobs == std::vector<double>{-0.5});
}

TEST_CASE("a server that does not echo cannot score") {
  UsageCounts usage;
  auto no_echo = ParseEchoAnswer(
      Answer(R"({"choices": [{"text": "!", "logprobs": {"tokens": ["!"],
                 "token_logprobs": [-1.0]}}]})"),
      "P: ab", &usage);
  CHECK(no_echo.status().code() == StatusCode::kNotSupported);
  auto no_logprobs = ParseEchoAnswer(
      Answer(R"({"choices": [{"text": "P: ab!", "logprobs": null}]})"), "P: ab",
      &usage);
  CHECK(no_logprobs.status().code() == StatusCode::kNotSupported);
}

TEST_CASE(
    "unalignable echoes and null completion logprobs are invalid input") {
  UsageCounts usage;
  auto unaligned =
      ParseEchoAnswer(Answer(R"({"choices": [{"text": "P: ab", "logprobs": {
        "tokens": ["X", "Y"], "token_logprobs": [null, -1.0]}}]})"),
                      "P: ab", &usage);
  CHECK(unaligned.status().code() == StatusCode::kInvalidArgument);
  auto e =
      ParseEchoAnswer(Answer(R"({"choices": [{"text": "P: ab", "logprobs": {
        "tokens": ["P: ", "ab"], "token_logprobs": [null, null]}}]})"),
                      "P: ab", &usage);
  REQUIRE(e.ok());
  CHECK(ScoreFromEcho(*e, 3, 5).status().code() == StatusCode::kInternal);
}

TEST_CASE(
    "the models list keeps entries with ids and reads vLLM's context length") {
  HttpAnswer a = Answer(R"({"object": "list", "data": [
    {"id": "qwen", "object": "model", "owned_by": "vllm", "max_model_len": 32768},
    {"object": "model"}, {"id": 5}, {"id": "other"}]})");
  auto models = ParseModelsAnswer(a);
  REQUIRE(models.ok());
  REQUIRE(models->size() == 2);
  CHECK((*models)[0].id == "qwen");
  CHECK((*models)[0].max_model_len == 32768);
  CHECK((*models)[1].owned_by.empty());
  CHECK(ParseModelsAnswer(Answer(R"({"data": 1})")).status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("a chat request carries the sampling fields the server accepts") {
  SamplingOptions o;
  o.n = 3;
  o.temperature = 0.7;
  o.top_k = 40;
  o.stop = {"```"};
  o.top_logprobs = 2;
  ClientConfig config;
  json r =
      json::parse(BuildChatRequest("m", {{"user", "hi"}}, o, {3, 42}, config));
  CHECK(r["model"] == "m");
  CHECK(r["n"] == 3);
  CHECK(r["top_k"] == 40);
  CHECK(r["seed"] == 42);
  CHECK(r["stop"][0] == "```");
  CHECK(r["logprobs"] == true);
  CHECK(r["top_logprobs"] == 2);
  CHECK(r["messages"][0]["content"] == "hi");
  CHECK(!r.contains("return_token_ids"));

  config.send_top_k = false;
  config.request_token_ids = true;
  o.logprobs = false;
  r = json::parse(
      BuildChatRequest("m", {{"user", "hi"}}, o, {1, std::nullopt}, config));
  CHECK(!r.contains("top_k"));
  CHECK(!r.contains("seed"));
  CHECK(!r.contains("logprobs"));
  CHECK(r["return_token_ids"] == true);
}

TEST_CASE("invalid UTF-8 in a prompt is replaced instead of throwing") {
  const std::string bad = "kernel \xff\xfe output";
  std::string body = BuildChatRequest("m", {{"user", bad}}, SamplingOptions(),
                                      {1, {}}, ClientConfig());
  json r = json::parse(body);
  CHECK(r["messages"][0]["content"].get<std::string>().find("kernel") == 0);
}

TEST_CASE("sampling options out of range are invalid arguments") {
  SamplingOptions o;
  CHECK(ValidateSampling(o).ok());
  auto with = [](auto edit) {
    SamplingOptions s;
    edit(s);
    return ValidateSampling(s).code();
  };
  CHECK(with([](SamplingOptions& s) { s.n = 0; }) ==
        StatusCode::kInvalidArgument);
  CHECK(with([](SamplingOptions& s) { s.temperature = -1; }) ==
        StatusCode::kInvalidArgument);
  CHECK(with([](SamplingOptions& s) { s.top_p = 0; }) ==
        StatusCode::kInvalidArgument);
  CHECK(with([](SamplingOptions& s) { s.max_tokens = 0; }) ==
        StatusCode::kInvalidArgument);
  CHECK(with([](SamplingOptions& s) { s.top_logprobs = 21; }) ==
        StatusCode::kInvalidArgument);
  CHECK(with([](SamplingOptions& s) { s.stop = {""}; }) ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace skilldb::llm::internal
