// The scripted protocol server, checked with a plain HTTP client: it must
// speak the protocol (shapes as vLLM serves them) and play each scripted
// behaviour, or the client tests built on it prove nothing.
#include "scripted_llm_server.h"

#include <doctest/doctest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <thread>

namespace skilldb::scripted {
namespace {

using nlohmann::json;

struct Fixture {
  explicit Fixture(ServerOptions options = ServerOptions()) {
    auto started = ScriptedLlmServer::Start(options);
    REQUIRE(started.ok());
    server = std::move(started).value();
    client = std::make_unique<httplib::Client>("127.0.0.1", server->port());
    client->set_read_timeout(5, 0);
  }
  httplib::Result Post(const std::string& path, const json& body) {
    return client->Post(path.c_str(), body.dump(), "application/json");
  }
  json PostJson(const std::string& path, const json& body,
                int expect_status = 200) {
    auto res = Post(path, body);
    REQUIRE(res);
    CHECK(res->status == expect_status);
    return json::parse(res->body);
  }
  std::unique_ptr<ScriptedLlmServer> server;
  std::unique_ptr<httplib::Client> client;
};

json Chat(const std::string& content) {
  return {{"model", "scripted-model"},
          {"messages", {{{"role", "user"}, {"content", content}}}}};
}

TEST_CASE("the scripted server tokenizer spells its input exactly") {
  const std::string text = "  __shfl_down_sync(mask, v, 16);\n\n  tile é 32x ";
  std::string joined;
  for (const std::string& t : ScriptedTokenize(text)) {
    CHECK(!t.empty());
    joined += t;
  }
  CHECK(joined == text);
  CHECK(ScriptedTokenize("hello world") ==
        std::vector<std::string>{"hello", " world"});
  CHECK(ScriptedTokenLogprob("x") <= -0.01);
  CHECK(ScriptedTokenLogprob("x") >= -2.0);
}

TEST_CASE("the scripted server lists its model as vLLM does") {
  ServerOptions options;
  options.protocol.model = "Qwen/Qwen2.5-Coder-7B-Instruct";
  Fixture f(options);
  auto res = f.client->Get("/v1/models");
  REQUIRE(res);
  json j = json::parse(res->body);
  CHECK(j["object"] == "list");
  CHECK(j["data"][0]["id"] == "Qwen/Qwen2.5-Coder-7B-Instruct");
  CHECK(j["data"][0]["max_model_len"] == 4096);
}

TEST_CASE(
    "a scripted chat answer has n choices, logprobs, token ids and usage") {
  Fixture f;
  f.server->Add(TextReply({"use shared memory", "unroll"}));
  json req = Chat("optimize this");
  req["n"] = 3;
  req["logprobs"] = true;
  req["top_logprobs"] = 2;
  req["return_token_ids"] = true;
  json j = f.PostJson("/v1/chat/completions", req);
  REQUIRE(j["choices"].size() == 3);
  CHECK(j["object"] == "chat.completion");
  CHECK(j["choices"][0]["message"]["content"] == "use shared memory");
  CHECK(j["choices"][1]["message"]["content"] == "unroll");
  CHECK(j["choices"][2]["message"]["content"] == "use shared memory");
  const json& lp = j["choices"][0]["logprobs"]["content"];
  REQUIRE(lp.size() == 3);
  CHECK(lp[1]["token"] == " shared");
  CHECK(lp[1]["logprob"].get<double>() == ScriptedTokenLogprob(" shared"));
  CHECK(lp[1]["top_logprobs"].size() == 2);
  CHECK(j["choices"][0]["token_ids"][1] == ScriptedTokenId(" shared"));
  const size_t prompt_tokens =
      ScriptedTokenize(ScriptedChatPrompt({{"user", "optimize this"}})).size();
  CHECK(j["usage"]["prompt_tokens"] == prompt_tokens);
  CHECK(j["prompt_token_ids"].size() == prompt_tokens);
  CHECK(j["usage"]["completion_tokens"] == 3 + 1 + 3);
}

TEST_CASE("a scripted chat answer honours stop strings and max_tokens") {
  Fixture f;
  ScriptedReply reply = TextReply({"a b c d e"});
  reply.times = 2;
  f.server->Add(reply);
  json req = Chat("x");
  req["stop"] = {" c"};
  json j = f.PostJson("/v1/chat/completions", req);
  CHECK(j["choices"][0]["message"]["content"] == "a b");
  CHECK(j["choices"][0]["finish_reason"] == "stop");
  req.erase("stop");
  req["max_tokens"] = 2;
  j = f.PostJson("/v1/chat/completions", req);
  CHECK(j["choices"][0]["message"]["content"] == "a b");
  CHECK(j["choices"][0]["finish_reason"] == "length");
}

TEST_CASE("scripted replies match by endpoint and prompt substring, in order") {
  Fixture f;
  ScriptedReply softmax = TextReply({"softmax answer"});
  softmax.prompt_contains = "softmax";
  ScriptedReply completions = TextReply({"completion answer"});
  completions.endpoint = Endpoint::kCompletions;
  f.server->Add(
      {softmax, completions, TextReply({"first"}), TextReply({"second"})});
  CHECK(f.PostJson("/v1/chat/completions",
                   Chat("gemm"))["choices"][0]["message"]["content"] ==
        "first");
  CHECK(f.PostJson("/v1/chat/completions",
                   Chat("fused softmax"))["choices"][0]["message"]["content"] ==
        "softmax answer");
  CHECK(
      f.PostJson("/v1/completions", {{"prompt", "p"}})["choices"][0]["text"] ==
      "completion answer");
  CHECK(f.PostJson("/v1/chat/completions",
                   Chat("y"))["choices"][0]["message"]["content"] == "second");
  CHECK(f.server->PendingReplies() == 0);
  // Used up: the default reply answers.
  CHECK(f.PostJson("/v1/chat/completions",
                   Chat("z"))["choices"][0]["message"]["content"] == "OK");
  CHECK(f.server->RequestCount() == 5);
  CHECK(f.server->RequestCount(Endpoint::kCompletions) == 1);
}

TEST_CASE(
    "an echoed completion lists the prompt's tokens with character offsets") {
  Fixture f;
  f.server->Add(TextReply({" world"}));
  json j = f.PostJson("/v1/completions", {{"prompt", "héllo"},
                                          {"echo", true},
                                          {"logprobs", 1},
                                          {"max_tokens", 1}});
  const json& c = j["choices"][0];
  CHECK(c["text"] == "héllo world");
  CHECK(c["logprobs"]["tokens"] == json({"héllo", " world"}));
  CHECK(c["logprobs"]["token_logprobs"][0].is_null());
  CHECK(c["logprobs"]["text_offset"] == json({0, 5}));  // characters, not bytes
  CHECK(c["logprobs"]["top_logprobs"][0].is_null());
  CHECK(j["usage"]["prompt_tokens"] == 1);
}

TEST_CASE("with a BOS the echo lists a token its text does not contain") {
  ServerOptions options;
  options.protocol.bos_token = true;
  Fixture f(options);
  json j = f.PostJson(
      "/v1/completions",
      {{"prompt", "hi"}, {"echo", true}, {"logprobs", 0}, {"max_tokens", 0}});
  CHECK(j["choices"][0]["text"] == "hi");
  CHECK(j["choices"][0]["logprobs"]["tokens"] == json({"<s>", "hi"}));
  CHECK(j["usage"]["prompt_tokens"] == 2);
}

TEST_CASE("the scripted server plays the variations between servers") {
  ServerOptions options;
  options.protocol.echo_supported = false;
  options.protocol.top_k_supported = false;
  options.protocol.n_supported = false;
  Fixture f(options);
  f.PostJson("/v1/completions", {{"prompt", "p"}, {"echo", true}}, 400);
  json req = Chat("x");
  req["top_k"] = 5;
  f.PostJson("/v1/chat/completions", req, 400);
  req.erase("top_k");
  req["n"] = 4;
  CHECK(f.PostJson("/v1/chat/completions", req)["choices"].size() == 1);
  req["model"] = "other";
  CHECK(f.PostJson("/v1/chat/completions", req, 404)["error"]["code"] == 404);
  auto res =
      f.client->Post("/v1/chat/completions", "{not json", "application/json");
  REQUIRE(res);
  CHECK(res->status == 400);
}

TEST_CASE("scripted error statuses carry their headers and bodies") {
  Fixture f;
  f.server->Add(StatusReply(429, {{"Retry-After", "3"}}));
  f.server->Add(RawReply(200, "{\"choices\": [{\"mess"));
  auto res = f.Post("/v1/chat/completions", Chat("x"));
  REQUIRE(res);
  CHECK(res->status == 429);
  CHECK(res->get_header_value("Retry-After") == "3");
  CHECK(json::parse(res->body)["error"]["code"] == 429);
  res = f.Post("/v1/chat/completions", Chat("x"));
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(res->body == "{\"choices\": [{\"mess");
}

TEST_CASE(
    "truncated delivery cuts the body and dropped delivery kills the connection") {
  Fixture f;
  ScriptedReply truncated = TextReply({"long enough answer"});
  truncated.delivery = Delivery::kTruncated;
  truncated.truncate_at = 10;
  ScriptedReply dropped = truncated;
  dropped.delivery = Delivery::kDropped;
  f.server->Add({truncated, dropped});
  auto res = f.Post("/v1/chat/completions", Chat("x"));
  REQUIRE(res);
  CHECK(res->body.size() == 10);
  res = f.Post("/v1/chat/completions", Chat("x"));
  CHECK(!res);
  CHECK(res.error() == httplib::Error::Read);
}

TEST_CASE("rerank answers come in the Cohere and the TEI shapes") {
  Fixture f;
  json cohere = f.PostJson(
      "/v1/rerank",
      {{"model", "scripted-model"},
       {"query", "shared memory tiling"},
       {"documents", {"warp shuffle", "shared memory tiling of K", "memory"}},
       {"top_n", 2}});
  REQUIRE(cohere["results"].size() == 2);
  CHECK(cohere["results"][0]["index"] == 1);
  CHECK(cohere["results"][0]["relevance_score"] == 1.0);
  CHECK(cohere["results"][1]["index"] == 2);
  CHECK(cohere["usage"]["total_tokens"].get<int>() > 0);

  ScriptedReply scored;
  scored.endpoint = Endpoint::kTeiRerank;
  scored.scores = {0.1, 0.9};
  f.server->Add(scored);
  json tei = f.PostJson("/rerank", {{"query", "q"}, {"texts", {"a", "b"}}});
  REQUIRE(tei.is_array());
  CHECK(tei[0]["index"] == 1);
  CHECK(tei[0]["score"] == 0.9);
  CHECK(f.server->RequestCount(Endpoint::kTeiRerank) == 1);
}

TEST_CASE("the request log keeps headers and bodies and the peak concurrency") {
  Fixture f;
  ScriptedReply slow = TextReply({"x"});
  slow.times = -1;
  slow.delay_ms = 150;
  f.server->Add(slow);
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&f] {
      httplib::Client c("127.0.0.1", f.server->port());
      c.set_bearer_token_auth("sk-test");
      c.Post("/v1/chat/completions", Chat("hi").dump(), "application/json");
    });
  }
  CHECK(f.server->WaitForRequests(3, std::chrono::seconds(5)));
  for (std::thread& t : threads) t.join();
  CHECK(f.server->MaxConcurrent() == 3);
  auto log = f.server->Requests();
  REQUIRE(log.size() == 3);
  CHECK(log[0].headers.at("authorization") == "Bearer sk-test");
  CHECK(log[0].prompt == "hi");
  CHECK(log[0].status == 200);
  CHECK(json::parse(log[0].body)["messages"][0]["content"] == "hi");
}

TEST_CASE("a stopped scripted server refuses connections") {
  Fixture f;
  f.server->Stop();
  auto res = f.client->Get("/v1/models");
  CHECK(!res);
  CHECK(res.error() == httplib::Error::Connection);
}

TEST_CASE("a delayed answer is cut short when the server stops") {
  Fixture f;
  ScriptedReply slow = TextReply({"x"});
  slow.delay_ms = 60000;
  f.server->Add(slow);
  std::thread caller([&f] { f.Post("/v1/chat/completions", Chat("x")); });
  REQUIRE(f.server->WaitForRequests(1, std::chrono::seconds(5)));
  const auto start = std::chrono::steady_clock::now();
  f.server->Stop();
  caller.join();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("replies can be added and the log read over HTTP") {
  Fixture f;
  auto res = f.client->Post(
      "/scripted/replies",
      "{\"text\": \"from the wire\"}\n# a comment\n\n{\"status\": 503}\n",
      "application/x-ndjson");
  REQUIRE(res);
  CHECK(json::parse(res->body)["added"] == 2);
  CHECK(f.PostJson("/v1/chat/completions",
                   Chat("x"))["choices"][0]["message"]["content"] ==
        "from the wire");
  f.PostJson("/v1/chat/completions", Chat("x"), 503);
  res = f.client->Get("/scripted/requests");
  REQUIRE(res);
  json log = json::parse(res->body);
  CHECK(log["count"] == 2);
  CHECK(log["by_endpoint"]["chat"] == 2);
  CHECK(log["requests"][1]["status"] == 503);
  res = f.client->Post("/scripted/replies", "{\"txet\": 1}",
                       "application/x-ndjson");
  REQUIRE(res);
  CHECK(res->status == 400);
}

TEST_CASE("a numbered reply makes every answer distinct, per request and choice") {
  Fixture f;
  auto script = ParseScript(
      "{\"texts\": [\"v{{serial}} and {{serial}}\"], \"times\": -1, \"numbered\": true}\n");
  REQUIRE(script.ok());
  f.server->Add(*script);
  json req = Chat("x");
  req["n"] = 2;
  json j = f.PostJson("/v1/chat/completions", req);
  CHECK(j["choices"][0]["message"]["content"] == "v1.0 and 1.0");
  CHECK(j["choices"][1]["message"]["content"] == "v1.1 and 1.1");
  j = f.PostJson("/v1/chat/completions", Chat("y"));
  CHECK(j["choices"][0]["message"]["content"] == "v2.0 and 2.0");
  CHECK(f.PostJson("/v1/completions", {{"prompt", "p"}})["choices"][0]["text"] ==
        "v3.0 and 3.0");
  // Without the flag the text is sent as written.
  Fixture g;
  g.server->Add(TextReply({"as {{serial}} is"}));
  CHECK(g.PostJson("/v1/chat/completions", Chat("x"))["choices"][0]["message"]["content"] ==
        "as {{serial}} is");
  CHECK(!ParseScript("{\"numbered\": 1}").ok());
}

TEST_CASE("script lines are read strictly, naming the bad line") {
  auto ok = ParseScript(
      "{\"endpoint\": \"chat\", \"prompt_contains\": \"gemm\", \"times\": -1,"
      " \"texts\": [\"a\", \"b\"], \"headers\": {\"Retry-After\": \"1\"},"
      " \"delivery\": \"dropped\", \"truncate_at\": 5, \"delay_ms\": 7,"
      " \"alternatives\": {\"no\": -2.5}, \"token_logprob\": -0.1}\n");
  REQUIRE(ok.ok());
  REQUIRE(ok->size() == 1);
  const ScriptedReply& r = (*ok)[0];
  CHECK(r.endpoint == Endpoint::kChat);
  CHECK(r.times == -1);
  CHECK(r.texts == std::vector<std::string>{"a", "b"});
  CHECK(r.delivery == Delivery::kDropped);
  CHECK(r.truncate_at == 5);
  CHECK(r.alternatives.at("no") == -2.5);
  CHECK(r.token_logprob == -0.1);
  for (const char* bad :
       {"{\"endpoint\": \"nope\"}", "{\"times\": \"1\"}", "[1]",
        "{\"delivery\": \"lost\"}", "{\"truncate_at\": -1}"}) {
    CAPTURE(bad);
    CHECK(ParseScript(bad).status().code() == StatusCode::kInvalidArgument);
  }
  auto second_line = ParseScript("{}\n{\"bogus\": 1}\n");
  REQUIRE(!second_line.ok());
  // The line number is the behaviour under test.
  CHECK(second_line.status().message().find("line 2") != std::string::npos);
}

}  // namespace
}  // namespace skilldb::scripted
