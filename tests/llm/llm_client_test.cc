// OpenAiClient's good paths against the scripted protocol server: what it
// sends, what it reads back, usage accounting, model resolution, raw
// completions and echo scoring.
#include <nlohmann/json.hpp>

#include "llm_test_util.h"
#include "skilldb/llm/chat_template.h"

namespace skilldb::llm::testing {
namespace {

using nlohmann::json;
using scripted::ScriptedTokenId;
using scripted::ScriptedTokenize;
using scripted::ScriptedTokenLogprob;
using scripted::TextReply;

double SumLogprobs(const std::string& text) {
  double sum = 0;
  for (const std::string& t : ScriptedTokenize(text))
    sum += ScriptedTokenLogprob(t);
  return sum;
}

TEST_CASE(
    "Generate returns n samples per prompt in prompt order with logprobs") {
  auto server = StartServer();
  ScriptedReply gemm = TextReply({"tile K", "use tensor cores"});
  gemm.prompt_contains = "gemm";
  ScriptedReply softmax = TextReply({"online softmax"});
  softmax.prompt_contains = "softmax";
  server->Add({gemm, softmax});
  auto client = ClientFor(ConfigFor(*server));
  SamplingOptions o = Greedy();
  o.n = 2;
  o.top_logprobs = 3;
  auto r = client->Generate({{{"user", "softmax"}}, {{"user", "gemm"}}}, o);
  REQUIRE(r.ok());
  REQUIRE(r->size() == 2);
  REQUIRE((*r)[0].samples.size() == 2);
  CHECK((*r)[0].samples[0].text == "online softmax");
  CHECK((*r)[0].samples[1].text == "online softmax");
  REQUIRE((*r)[1].samples.size() == 2);
  const Sample& s = (*r)[1].samples[1];
  CHECK(s.text == "use tensor cores");
  CHECK(s.finish_reason == "stop");
  REQUIRE(s.token_logprobs.size() == 3);
  CHECK(s.token_logprobs[1] == ScriptedTokenLogprob(" tensor"));
  REQUIRE(s.top_logprobs.size() == 3);
  CHECK(s.top_logprobs[1].size() == 3);
  CHECK(s.top_logprobs[1][0].text == " tensor");
  CHECK(s.token_ids.empty());  // not asked for
}

TEST_CASE(
    "a chat request carries the sampling options, the model and the key") {
  auto server = StartServer();
  auto client = ClientFor(ConfigFor(*server));
  SamplingOptions o;
  o.n = 1;
  o.temperature = 0.6;
  o.top_p = 0.9;
  o.top_k = 20;
  o.max_tokens = 77;
  o.stop = {"</code>", "```"};
  o.seed = 1234;
  o.top_logprobs = 5;
  REQUIRE(client->Generate({{{"system", "be fast"}, {"user", "go"}}}, o).ok());
  auto log = server->Requests();
  REQUIRE(log.size() == 1);
  CHECK(log[0].path == "/v1/chat/completions");
  CHECK(log[0].headers.at("authorization") == "Bearer sk-scripted");
  json body = json::parse(log[0].body);
  CHECK(body["model"] == "scripted-model");
  CHECK(body["messages"] ==
        json::parse(R"([{"role":"system","content":"be fast"},
                                            {"role":"user","content":"go"}])"));
  CHECK(body["temperature"] == 0.6);
  CHECK(body["top_p"] == 0.9);
  CHECK(body["top_k"] == 20);
  CHECK(body["max_tokens"] == 77);
  CHECK(body["stop"] == json({"</code>", "```"}));
  CHECK(body["seed"] == 1234);
  CHECK(body["logprobs"] == true);
  CHECK(body["top_logprobs"] == 5);
}

TEST_CASE("top_k is left out for servers that reject it") {
  ServerOptions options;
  options.protocol.top_k_supported = false;
  auto server = StartServer(options);
  ClientConfig config = ConfigFor(*server);
  SamplingOptions o = Greedy();
  o.top_k = 10;
  auto refused = ClientFor(config)->Generate(OnePrompt(), o);
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  config.send_top_k = false;
  CHECK(ClientFor(config)->Generate(OnePrompt(), o).ok());
}

TEST_CASE("without native n, n samples are n requests with consecutive seeds") {
  ServerOptions options;
  options.protocol.n_supported = false;
  auto server = StartServer(options);
  server->Add({TextReply({"a"}), TextReply({"b"}), TextReply({"c"})});
  ClientConfig config = ConfigFor(*server);
  SamplingOptions o = Greedy();
  o.n = 3;
  o.seed = 10;
  // A server that ignores n is caught, not silently short of samples.
  auto short_answer = ClientFor(config)->Generate(OnePrompt(), o);
  CHECK(short_answer.status().code() == StatusCode::kInvalidArgument);

  config.native_n = false;
  config.max_in_flight = 1;  // one at a time: the replies keep their order
  server->ClearLog();
  auto r = ClientFor(config)->Generate(OnePrompt(), o);
  REQUIRE(r.ok());
  REQUIRE((*r)[0].samples.size() == 3);
  std::vector<uint64_t> seeds;
  for (const auto& req : server->Requests()) {
    json body = json::parse(req.body);
    CHECK(body["n"] == 1);
    seeds.push_back(body["seed"].get<uint64_t>());
  }
  std::sort(seeds.begin(), seeds.end());
  CHECK(seeds == std::vector<uint64_t>{10, 11, 12});
}

TEST_CASE("usage adds up the servers' usage objects across requests") {
  auto server = StartServer();
  ScriptedReply no_usage = TextReply({"x y"});
  no_usage.omit_usage = true;
  server->Add({TextReply({"one two three"}), TextReply({"four"}), no_usage});
  ClientConfig config = ConfigFor(*server);
  config.max_in_flight = 1;
  auto client = ClientFor(config);
  REQUIRE(
      client->Generate({{{"user", "p1"}}, {{"user", "p2"}}}, Greedy()).ok());
  const size_t prompt_tokens =
      ScriptedTokenize(scripted::ScriptedChatPrompt({{"user", "p1"}})).size();
  TokenUsage u = client->Usage();
  CHECK(u.requests == 2);
  CHECK(u.prompt_tokens == 2 * prompt_tokens);
  CHECK(u.completion_tokens == 3 + 1);
  REQUIRE(client->Generate(OnePrompt("p3"), Greedy()).ok());
  u = client->Usage();
  CHECK(u.requests == 3);
  CHECK(u.completion_tokens == 4);  // the third answer had no usage
  CHECK(client->Stats().answers_without_usage == 1);
}

TEST_CASE("token ids are read when the server returns them") {
  auto server = StartServer();
  server->Add(TextReply({"smem tile"}));
  ClientConfig config = ConfigFor(*server);
  config.request_token_ids = true;
  auto r = ClientFor(config)->Generate(OnePrompt("hi"), Greedy());
  REQUIRE(r.ok());
  CHECK(
      (*r)[0].samples[0].token_ids ==
      std::vector<int32_t>{ScriptedTokenId("smem"), ScriptedTokenId(" tile")});
  CHECK(
      (*r)[0].prompt_token_ids.size() ==
      ScriptedTokenize(scripted::ScriptedChatPrompt({{"user", "hi"}})).size());
  CHECK(json::parse(server->Requests()[0].body)["return_token_ids"] == true);
}

TEST_CASE("an unset model is resolved once from /v1/models") {
  ServerOptions options;
  options.protocol.model = "served/model";
  auto server = StartServer(options);
  ClientConfig config = ConfigFor(*server);
  config.model = "";
  auto client = ClientFor(config);
  CHECK(client->Model().empty());
  REQUIRE(client->Generate(OnePrompt(), Greedy()).ok());
  REQUIRE(client->Generate(OnePrompt(), Greedy()).ok());
  CHECK(client->Model() == "served/model");
  CHECK(server->RequestCount(Endpoint::kModels) == 1);
  CHECK(server->RequestCount(Endpoint::kChat) == 2);
  CHECK(json::parse(server->Requests()[1].body)["model"] == "served/model");
}

TEST_CASE("ListModels reads the server's models") {
  auto server = StartServer();
  auto models = ClientFor(ConfigFor(*server))->ListModels();
  REQUIRE(models.ok());
  REQUIRE(models->size() == 1);
  CHECK((*models)[0].id == "scripted-model");
  CHECK((*models)[0].max_model_len == 4096);
}

TEST_CASE(
    "Complete sends raw text to /v1/completions and reads legacy logprobs") {
  auto server = StartServer();
  server->Add(TextReply({" __syncthreads();"}));
  auto client = ClientFor(ConfigFor(*server));
  SamplingOptions o = Greedy();
  o.top_logprobs = 2;
  auto g = client->Complete("__global__ void k() {", o);
  REQUIRE(g.ok());
  CHECK(g->prompt_text == "__global__ void k() {");
  REQUIRE(g->samples.size() == 1);
  const Sample& s = g->samples[0];
  CHECK(s.text == " __syncthreads();");
  CHECK(s.token_logprobs.size() == ScriptedTokenize(s.text).size());
  CHECK(s.top_logprobs[0].size() == 2);
  json body = json::parse(server->Requests()[0].body);
  CHECK(body["prompt"] == "__global__ void k() {");
  CHECK(body["logprobs"] == 2);
  CHECK(client->Usage().requests == 1);
}

TEST_CASE(
    "Score sums the completion's token logprobs under the chat template") {
  for (bool bos : {false, true}) {
    CAPTURE(bos);
    ServerOptions options;
    options.protocol.bos_token = bos;
    auto server = StartServer(options);
    ClientConfig config = ConfigFor(*server);
    config.chat_template = "chatml";
    config.request_token_ids = true;
    auto client = ClientFor(config);
    const std::string completion = "Tile K through shared memory.";
    auto r = client->Score({{{{"user", "How to speed up GEMM?"}}, completion},
                            {{{"user", "q"}}, "yes"}});
    REQUIRE(r.ok());
    REQUIRE(r->size() == 2);
    const ScoreResult& s = (*r)[0];
    CHECK(s.sum_logprob == doctest::Approx(SumLogprobs(completion)));
    CHECK(s.token_logprobs.size() == ScriptedTokenize(completion).size());
    CHECK(s.completion_token_ids.size() == s.token_logprobs.size());
    CHECK(s.completion_token_ids.front() == ScriptedTokenId("Tile"));
    CHECK((*r)[1].sum_logprob == doctest::Approx(ScriptedTokenLogprob("yes")));
    // The text sent is the template's prompt followed by the completion.
    auto prompt = ApplyChatTemplate("chatml", {{"user", "q"}}, true);
    REQUIRE(prompt.ok());
    bool found = false;
    for (const auto& req : server->Requests()) {
      json body = json::parse(req.body);
      CHECK(body["echo"] == true);
      found = found || body["prompt"] == *prompt + "yes";
    }
    CHECK(found);
  }
}

TEST_CASE("Score is not supported without a template or without echo") {
  auto server = StartServer();
  ClientConfig config = ConfigFor(*server);
  auto no_template = ClientFor(config)->Score({{OnePrompt()[0], "x"}});
  CHECK(no_template.status().code() == StatusCode::kNotSupported);
  CHECK(server->RequestCount() == 0);

  ServerOptions options;
  options.protocol.echo_supported = false;
  auto hosted = StartServer(options);
  ClientConfig hosted_config = ConfigFor(*hosted);
  hosted_config.chat_template = "chatml";
  auto refused = ClientFor(hosted_config)->Score({{OnePrompt()[0], "x"}});
  CHECK(refused.status().code() == StatusCode::kNotSupported);
  CHECK(hosted->RequestCount() == 1);  // a refusal is not retried

  // A server that answers but does not echo is caught from the answer.
  auto plain = StartServer();
  ScriptedReply not_echoed;
  not_echoed.body =
      R"({"choices": [{"index": 0, "text": "!", "logprobs": null}]})";
  plain->Add(not_echoed);
  ClientConfig plain_config = ConfigFor(*plain);
  plain_config.chat_template = "chatml";
  auto ignored = ClientFor(plain_config)->Score({{OnePrompt()[0], "x"}});
  CHECK(ignored.status().code() == StatusCode::kNotSupported);
}

TEST_CASE("bad input is refused before any request is sent") {
  auto server = StartServer();
  auto client = ClientFor(ConfigFor(*server));
  CHECK(client->Generate({}, Greedy()).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(client->Generate({{}}, Greedy()).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(client->Generate({{{"", "no role"}}}, Greedy()).status().code() ==
        StatusCode::kInvalidArgument);
  SamplingOptions bad = Greedy();
  bad.n = 0;
  CHECK(client->Generate(OnePrompt(), bad).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(client->Complete("", Greedy()).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(server->RequestCount() == 0);
  ClientConfig broken = ConfigFor(*server);
  broken.base_url = "localhost:8000";
  CHECK(OpenAiClient::Create(broken).status().code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace skilldb::llm::testing
