// Server answers are untrusted: malformed JSON, missing fields, wrong types,
// truncated bodies, dropped connections, oversized answers and error pages
// end in a Status that names the endpoint, never in a crash or a throw.
#include <nlohmann/json.hpp>
#include <random>

#include "llm_test_util.h"

namespace skilldb::llm::testing {
namespace {

using scripted::Delivery;
using scripted::RawReply;
using scripted::StatusReply;
using scripted::TextReply;

StatusCode GenerateCode(OpenAiClient& client) {
  return client.Generate(OnePrompt(), Greedy()).status().code();
}

TEST_CASE(
    "malformed JSON in a 200 answer is invalid input and not retried") {
  auto server = StartServer();
  server->Add(
      RawReply(200, "{\"choices\": [{\"message\": {\"content\": \"x\""));
  auto client = ClientFor(ConfigFor(*server));
  auto r = client->Generate(OnePrompt(), Greedy());
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  CHECK(server->RequestCount() == 1);
  // Naming the endpoint is the behaviour under test.
  CHECK(r.status().message().find("POST " + server->base_url() +
                                  "/chat/completions") != std::string::npos);
}

TEST_CASE("answers with missing fields or wrong types are invalid input") {
  const char* bodies[] = {
      "{}",
      "[]",
      "null",
      R"({"choices": null})",
      R"({"choices": []})",
      R"({"choices": [{}]})",
      R"({"choices": [{"message": null}]})",
      R"({"choices": [{"message": {"role": "assistant"}}]})",
      R"({"choices": [{"message": {"content": ["a"]}}]})",
      R"({"choices": [{"index": -1, "message": {"content": "x"}}]})",
      R"({"choices": [{"message": {"content": "x"}, "logprobs": {"content": [{"logprob": 1}]}}]})",
      R"({"choices": "x"})",
  };
  auto server = StartServer();
  auto client = ClientFor(ConfigFor(*server));
  for (const char* body : bodies) {
    CAPTURE(body);
    server->Add(RawReply(200, body));
    CHECK(GenerateCode(*client) == StatusCode::kInvalidArgument);
  }
  CHECK(server->RequestCount() == std::size(bodies));
}

TEST_CASE("a body cut short inside the JSON is invalid input") {
  auto server = StartServer();
  ScriptedReply cut = TextReply({"a long enough completion text"});
  cut.delivery = Delivery::kTruncated;
  cut.truncate_at = 40;
  server->Add(cut);
  auto client = ClientFor(ConfigFor(*server));
  CHECK(GenerateCode(*client) == StatusCode::kInvalidArgument);
}

TEST_CASE(
    "a connection dropped mid-answer is retried like a connection error") {
  auto server = StartServer();
  ScriptedReply dropped = TextReply({"a long enough completion text"});
  dropped.delivery = Delivery::kDropped;
  dropped.truncate_at = 30;
  server->Add({dropped, TextReply({"second try"})});
  auto client = ClientFor(ConfigFor(*server));
  auto r = client->Generate(OnePrompt(), Greedy());
  REQUIRE(r.ok());
  CHECK((*r)[0].samples[0].text == "second try");
  CHECK(server->RequestCount() == 2);

  dropped.times = -1;
  server->Add(dropped);
  CHECK(GenerateCode(*client) == StatusCode::kUnavailable);
}

TEST_CASE(
    "an answer over max_response_bytes is refused without reading it all") {
  auto server = StartServer();
  server->Add(TextReply({std::string(100000, 'x')}));
  ClientConfig config = ConfigFor(*server);
  config.max_response_bytes = 4096;
  auto client = ClientFor(config);
  CHECK(GenerateCode(*client) == StatusCode::kInvalidArgument);
  CHECK(server->RequestCount() == 1);
}

TEST_CASE("refused requests map to codes and are not retried") {
  struct Case {
    int status;
    StatusCode code;
  };
  for (Case c : {Case{400, StatusCode::kInvalidArgument},
                 Case{401, StatusCode::kFailedPrecondition},
                 Case{403, StatusCode::kFailedPrecondition},
                 Case{404, StatusCode::kNotFound},
                 Case{413, StatusCode::kInvalidArgument},
                 Case{422, StatusCode::kInvalidArgument}}) {
    CAPTURE(c.status);
    auto server = StartServer();
    server->Add(StatusReply(c.status));
    auto client = ClientFor(ConfigFor(*server));
    CHECK(GenerateCode(*client) == c.code);
    CHECK(server->RequestCount() == 1);
  }
}

TEST_CASE("an unknown model is a not-found error from the server") {
  auto server = StartServer();
  ClientConfig config = ConfigFor(*server);
  config.model = "no/such-model";
  CHECK(GenerateCode(*ClientFor(config)) == StatusCode::kNotFound);
}

TEST_CASE("an error names the endpoint, the status and a bounded excerpt") {
  auto server = StartServer();
  std::string page = "<html>" + std::string(1 << 20, 'E') + "</html>";
  ScriptedReply bad_gateway = RawReply(502, page);
  bad_gateway.times = -1;
  bad_gateway.content_type = "text/html";
  server->Add(bad_gateway);
  ClientConfig config = ConfigFor(*server);
  config.retry.max_retries = 1;
  auto r = ClientFor(config)->Generate(OnePrompt(), Greedy());
  REQUIRE(!r.ok());
  CHECK(r.status().code() == StatusCode::kUnavailable);
  const std::string& m = r.status().message();
  // What the message says is the behaviour under test here.
  CHECK(m.find(server->base_url() + "/chat/completions") != std::string::npos);
  CHECK(m.find("HTTP 502") != std::string::npos);
  CHECK(m.find("2 attempts") != std::string::npos);
  CHECK(m.find("<html>EEEE") != std::string::npos);
  CHECK(m.size() < 1000);
  CHECK(m.find("sk-scripted") == std::string::npos);  // the key never leaks
}

TEST_CASE("mutated and truncated answers never crash the client") {
  // A good answer, then every prefix at a stride and random byte flips: each
  // must come back as a value or a Status.
  auto server = StartServer();
  const std::string good = nlohmann::json::parse(R"({"id": "x", "choices": [
      {"index": 0, "message": {"role": "assistant", "content": "use smem"},
       "logprobs": {"content": [{"token": "use", "logprob": -0.5,
                                 "top_logprobs": [{"token": "use", "logprob": -0.5}]}]},
       "finish_reason": "stop", "token_ids": [1, 2]}],
      "prompt_token_ids": [3], "usage": {"prompt_tokens": 3, "completion_tokens": 2}})")
                               .dump();
  std::vector<std::string> bodies;
  for (size_t n = 0; n < good.size(); n += 5)
    bodies.push_back(good.substr(0, n));
  std::mt19937 rng(17);
  for (int i = 0; i < 150; ++i) {
    std::string b = good;
    for (int k = 0; k < 3; ++k)
      b[rng() % b.size()] = static_cast<char>(rng() % 256);
    bodies.push_back(b);
  }
  for (const std::string& b : bodies) server->Add(RawReply(200, b));
  ClientConfig config = ConfigFor(*server);
  config.retry.max_retries = 0;
  auto client = ClientFor(config);
  SamplingOptions o = Greedy();
  o.top_logprobs = 1;
  size_t ok = 0, invalid = 0, other = 0;
  for (size_t i = 0; i < bodies.size(); ++i) {
    auto r = client->Generate(OnePrompt(), o);
    if (r.ok()) {
      ++ok;
    } else if (r.status().code() == StatusCode::kInvalidArgument) {
      ++invalid;
    } else {
      ++other;
    }
  }
  CHECK(ok + invalid + other == bodies.size());
  CHECK(invalid > 0);
  CHECK(other == 0);
}

TEST_CASE("an API key a server echoes never leaves the client") {
  auto server = StartServer();
  const std::string key = "sk-test-0123456789abcdef";
  server->Add(RawReply(401, "{\"error\": \"invalid key " + key + "\"}"));
  // Also as a JSON encoder escapes it, and inside generated text.
  ScriptedReply echoed = TextReply({"your key is " + key});
  server->Add(echoed);
  ClientConfig config = ConfigFor(*server);
  config.api_key = key;
  auto client = ClientFor(config);
  auto refused = client->Generate(OnePrompt(), Greedy());
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find(key) == std::string::npos);
  CHECK(refused.status().message().find("[redacted]") != std::string::npos);
  auto answered = client->Generate(OnePrompt(), Greedy());
  REQUIRE(answered.ok());
  CHECK((*answered)[0].samples[0].text == "your key is [redacted]");
  // The server did receive it: only what comes back is redacted.
  CHECK(server->Requests()[0].headers.at("authorization") == "Bearer " + key);
}

TEST_CASE("an answer is bounded by what was asked, in bytes and in values") {
  auto server = StartServer();
  // 64 tokens asked; an answer of 3 MB of text is refused unread.
  server->Add(TextReply({std::string(3 << 20, 'x')}));
  // Small in bytes, huge in values: [0,0,...] logprobs.
  std::string many = R"({"choices": [{"index": 0, "message": {"content": "x"},
    "logprobs": {"content": [{"token": "x", "logprob": -1, "bytes": [)";
  for (int i = 0; i < 30000; ++i) many += i ? ",0" : "0";
  many += "]}]}}]}";
  server->Add(RawReply(200, many));
  auto client = ClientFor(ConfigFor(*server));
  auto big = client->Generate(OnePrompt(), Greedy());
  CHECK(big.status().code() == StatusCode::kInvalidArgument);
  CHECK(big.status().message().find("the bound for this request") !=
        std::string::npos);
  auto dense = client->Generate(OnePrompt(), Greedy());
  CHECK(dense.status().code() == StatusCode::kInvalidArgument);
  CHECK(dense.status().message().find("values (the limit)") !=
        std::string::npos);
}

}  // namespace
}  // namespace skilldb::llm::testing
