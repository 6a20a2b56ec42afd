// RerankClient in both wire shapes and CheckEndpoint, against the scripted
// protocol server.
#include <nlohmann/json.hpp>

#include "llm_test_util.h"
#include "skilldb/llm/check.h"
#include "skilldb/llm/rerank_client.h"

namespace skilldb::llm::testing {
namespace {

using nlohmann::json;
using scripted::RawReply;

std::unique_ptr<RerankClient> RerankerFor(const ScriptedLlmServer& server,
                                          RerankApi api) {
  RerankConfig config;
  config.client = ConfigFor(server);
  config.api = api;
  auto client = RerankClient::Create(config);
  REQUIRE(client.ok());
  return std::move(client).value();
}

const std::vector<std::string> kDocs = {"warp shuffle reduction",
                                        "shared memory tiling for GEMM",
                                        "tiling the K loop"};

TEST_CASE(
    "a Cohere-shape rerank returns documents best first and sends top_n") {
  auto server = StartServer();
  ScriptedReply scored;
  scored.endpoint = Endpoint::kRerank;
  scored.scores = {0.2, 0.9, 0.5};
  server->Add(scored);
  auto client = RerankerFor(*server, RerankApi::kCohere);
  auto r = client->Rerank("tiling", kDocs, 2);
  REQUIRE(r.ok());
  CHECK(*r == std::vector<RerankScore>{{1, 0.9}, {2, 0.5}});
  auto log = server->Requests();
  REQUIRE(log.size() == 1);
  CHECK(log[0].path == "/v1/rerank");
  json body = json::parse(log[0].body);
  CHECK(body["model"] == "scripted-model");
  CHECK(body["query"] == "tiling");
  CHECK(body["documents"] == json(kDocs));
  CHECK(body["top_n"] == 2);
  CHECK(client->Usage().requests == 1);
  CHECK(client->Usage().prompt_tokens > 0);
}

TEST_CASE(
    "a TEI rerank posts texts under the base URL's path and cuts top_n "
    "itself") {
  auto server = StartServer();
  auto client = RerankerFor(*server, RerankApi::kTei);  // base URL ".../v1"
  auto r = client->Rerank("shared memory tiling", kDocs, 2);
  REQUIRE(r.ok());
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].index == 1);  // every query word is in document 1
  auto log = server->Requests();
  REQUIRE(log.size() == 1);
  CHECK(log[0].path == "/v1/rerank");
  CHECK(log[0].endpoint == Endpoint::kTeiRerank);
  json body = json::parse(log[0].body);
  CHECK(body["texts"] == json(kDocs));
  CHECK(!body.contains("top_n"));
}

TEST_CASE("rerank answers with bad indices or scores are invalid input") {
  const char* cohere[] = {
      R"({"results": [{"index": 3, "relevance_score": 1}]})",
      R"({"results": [{"index": 0, "relevance_score": 1}, {"index": 0, "relevance_score": 2}]})",
      R"({"results": [{"index": 0}]})",
      R"({"results": [{"index": 0, "relevance_score": "high"}]})",
      R"({"results": {}})",
      R"([{"index": 0, "score": 1}])",
      "not json",
  };
  auto server = StartServer();
  auto client = RerankerFor(*server, RerankApi::kCohere);
  for (const char* body : cohere) {
    CAPTURE(body);
    server->Add(RawReply(200, body));
    CHECK(client->Rerank("q", kDocs).status().code() == StatusCode::kInvalidArgument);
  }
  auto tei = RerankerFor(*server, RerankApi::kTei);
  server->Add(RawReply(200, R"({"results": []})"));
  CHECK(tei->Rerank("q", kDocs).status().code() == StatusCode::kInvalidArgument);
  CHECK(client->Usage().requests == 0);
}

TEST_CASE("a rerank without a query or documents is refused before sending") {
  auto server = StartServer();
  auto client = RerankerFor(*server, RerankApi::kCohere);
  CHECK(client->Rerank("", kDocs).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(client->Rerank("q", {}).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(server->RequestCount() == 0);
}

TEST_CASE("the endpoint check lists models and times the listing") {
  auto server = StartServer();
  auto report = CheckEndpoint(ConfigFor(*server));
  REQUIRE(report.ok());
  CHECK(report->base_url == server->base_url());
  REQUIRE(report->models.size() == 1);
  CHECK(report->models[0].id == "scripted-model");
  CHECK(report->model_listed);
  CHECK(report->models_latency_ms > 0.0);
  CHECK(!report->generation_latency_ms.has_value());
  json j = json::parse(CheckReportJson(*report));
  CHECK(j["models"][0]["id"] == "scripted-model");
  CHECK(j["model_listed"] == true);
}

TEST_CASE(
    "the endpoint check can probe a generation and flags an unlisted model") {
  ServerOptions options;
  options.latency.base_ms = 30;
  auto server = StartServer(options);
  ClientConfig config = ConfigFor(*server);
  CheckOptions probe;
  probe.probe_generation = true;
  auto report = CheckEndpoint(config, probe);
  REQUIRE(report.ok());
  REQUIRE(report->generation_latency_ms.has_value());
  CHECK(*report->generation_latency_ms >= 30.0);
  CHECK(report->generation_status.ok());
  CHECK(server->RequestCount(Endpoint::kChat) == 1);

  config.model = "missing/model";
  auto unlisted = CheckEndpoint(config, probe);
  REQUIRE(unlisted.ok());
  CHECK(!unlisted->model_listed);
  CHECK(unlisted->generation_status.code() == StatusCode::kNotFound);
  CHECK(json::parse(CheckReportJson(*unlisted)).contains("generation_error"));
}

TEST_CASE("the endpoint check reports an unreachable server at once") {
  auto server = StartServer();
  ClientConfig config = ConfigFor(*server);
  server->Stop();
  SleepRecorder sleeps;
  sleeps.InstallIn(&config);
  auto report = CheckEndpoint(config);
  CHECK(report.status().code() == StatusCode::kUnavailable);
  CHECK(sleeps.waits().empty());  // one attempt, no retries
}

TEST_CASE("a failed generation probe is its error, never a latency") {
  auto server = StartServer();
  scripted::ScriptedReply broken = scripted::StatusReply(500);
  broken.endpoint = Endpoint::kChat;
  broken.times = -1;
  server->Add(broken);
  CheckOptions probe;
  probe.probe_generation = true;
  auto report = CheckEndpoint(ConfigFor(*server), probe);
  REQUIRE(report.ok());
  CHECK_FALSE(report->generation_latency_ms.has_value());
  CHECK(report->generation_status.code() == StatusCode::kUnavailable);
  json j = json::parse(CheckReportJson(*report));
  CHECK_FALSE(j.contains("generation_latency_ms"));
  CHECK(j.contains("generation_error"));
}

TEST_CASE("a TEI base URL with a path keeps it; one without posts at /rerank") {
  auto server = StartServer();
  RerankConfig config;
  config.client = ConfigFor(*server);
  config.client.base_url = server->origin() + "/tei";
  config.api = RerankApi::kTei;
  auto proxied = RerankClient::Create(config);
  REQUIRE(proxied.ok());
  (void)(*proxied)->Rerank("tiling", kDocs);
  config.client.base_url = server->origin();
  auto plain = RerankClient::Create(config);
  REQUIRE(plain.ok());
  (void)(*plain)->Rerank("tiling", kDocs);
  auto log = server->Requests();
  REQUIRE(log.size() == 2);
  CHECK(log[0].path == "/tei/rerank");
  CHECK(log[1].path == "/rerank");
}

}  // namespace
}  // namespace skilldb::llm::testing
