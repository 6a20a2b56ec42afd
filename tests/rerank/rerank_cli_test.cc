// skilldb query --rerank and skilldb llm check, run as a user runs them:
// the binary in a child process against the scripted protocol server.
#include <doctest/doctest.h>

#include <chrono>

#include "cli_util.h"
#include "scripted_llm_server.h"

namespace skilldb::testing {
namespace {

using scripted::Endpoint;
using scripted::ScriptedLlmServer;

// Four fixture skills match it, with BM25 scores close enough at the top
// that no strong signal skips the model.
constexpr const char* kQuery = "shared memory tiling warp reduction";
const std::vector<std::string> kBm25 = {"smem-tiling", "warp-shuffle-reduce",
                                        "bank-padding", "triton-autotune"};

std::unique_ptr<ScriptedLlmServer> StartServer() {
  auto s = ScriptedLlmServer::Start();
  REQUIRE(s.ok());
  return std::move(s).value();
}

std::vector<std::string> HitIds(const Json& j) {
  std::vector<std::string> ids;
  for (const Json& h : j["hits"]) ids.push_back(h["id"].get<std::string>());
  return ids;
}

TEST_CASE(
    "query --rerank listwise reports the mode, each hit's BM25 rank and "
    "score, and its final rank") {
  Fixture cli;
  cli.Init();
  auto server = StartServer();
  server->SetDefault(scripted::TextReply({"[1] > [3] > [2] > [4]"}));
  const Run bm25 = cli({"--json", "query", kQuery, "--fields", "title"});
  REQUIRE(bm25.code == 0);
  const Json plain = Json::parse(bm25.out);
  REQUIRE(HitIds(plain) == kBm25);
  const Run r = cli({"--json", "query", kQuery, "--rerank", "listwise",
                     "--llm-url", server->base_url(), "--llm-model",
                     "scripted-model", "--candidates", "4", "-k", "4"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const Json j = Json::parse(r.out);
  CHECK(j["rerank"]["mode"] == "listwise");
  CHECK(j["rerank"]["applied"] == true);
  CHECK(j["rerank"]["candidates"] == 4);
  CHECK(j["rerank"]["model"] == "scripted-model");
  CHECK(HitIds(j) == std::vector<std::string>{"smem-tiling", "bank-padding",
                                              "warp-shuffle-reduce",
                                              "triton-autotune"});
  const Json& second = j["hits"][1];
  CHECK(second["rank"] == 2);
  CHECK(second["bm25_rank"] == 3);
  CHECK(second["bm25_score"].get<double>() ==
        doctest::Approx(plain["hits"][2]["score"].get<double>()));
  CHECK(second["title"] == "Pad shared memory rows to avoid bank conflicts");
  CHECK(j["generations"].size() == 1);
  CHECK(server->RequestCount(Endpoint::kChat) == 1);
}

TEST_CASE(
    "query --rerank with the server gone prints BM25 order flagged "
    "with the reason and succeeds") {
  Fixture cli;
  cli.Init();
  auto server = StartServer();
  const std::string url = server->base_url();
  server->Stop();
  const Run r = cli({"--json", "query", kQuery, "--rerank", "pointwise",
                     "--llm-url", url, "--candidates", "4", "-k", "3"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const Json j = Json::parse(r.out);
  CHECK(j["rerank"]["applied"] == false);
  CHECK(j["rerank"]["reason"].get<std::string>().find("unavailable") !=
        std::string::npos);
  CHECK(HitIds(j) ==
        std::vector<std::string>(kBm25.begin(), kBm25.begin() + 3));
  CHECK(j["hits"][2]["bm25_rank"] == 3);
}

TEST_CASE("query --rerank endpoint orders by the rerank server's scores") {
  Fixture cli;
  cli.Init();
  auto server = StartServer();
  scripted::ScriptedReply reply;
  reply.endpoint = Endpoint::kRerank;
  reply.scores = {0.9, 0.1, 0.8, 0.2};  // by BM25 rank
  server->Add(reply);
  const Run r =
      cli({"--json", "query", kQuery, "--rerank", "endpoint", "--llm-url",
           server->base_url(), "--candidates", "4", "-k", "4"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const Json j = Json::parse(r.out);
  CHECK(j["rerank"]["mode"] == "endpoint");
  CHECK(j["rerank"]["applied"] == true);
  CHECK(HitIds(j)[1] == "bank-padding");
  CHECK(server->RequestCount(Endpoint::kRerank) == 1);
}

TEST_CASE("query --rerank prints people a line per hit with its BM25 rank") {
  Fixture cli;
  cli.Init();
  auto server = StartServer();
  server->SetDefault(scripted::TextReply({"[1] > [3] > [2] > [4]"}));
  const Run r = cli({"query", kQuery, "--rerank", "listwise", "--llm-url",
                     server->base_url(), "--candidates", "4", "-k", "2"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("4 BM25 candidates reranked listwise") != std::string::npos);
  CHECK(r.out.find(" 2  bm25 #3 ") != std::string::npos);
  CHECK(r.out.find("bank-padding") != std::string::npos);
}

TEST_CASE("query --rerank refuses fewer candidates than hits and --file") {
  Fixture cli;
  cli.Init();
  const Run few =
      cli({"query", kQuery, "--rerank", "listwise", "--llm-url",
           "http://127.0.0.1:9/v1", "--candidates", "2", "-k", "5"});
  CHECK(few.code == 1);
  CHECK(few.err.find("--candidates") != std::string::npos);
  const Run file = cli({"query", "--file", cli.file, "--rerank", "listwise",
                        "--llm-url", "http://127.0.0.1:9/v1"});
  CHECK(file.code == 1);
  const Run bad = cli({"query", kQuery, "--rerank", "bogus"});
  CHECK(bad.code == 1);
}

TEST_CASE("llm check lists the endpoint's models and its latency") {
  Fixture cli;
  auto server = StartServer();
  const Run r =
      cli({"--json", "llm", "check", "--llm-url", server->base_url()});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const Json j = Json::parse(r.out);
  CHECK(j["models"][0]["id"] == "scripted-model");
  CHECK(j["models_latency_ms"].get<double>() >= 0.0);
  const Run human = cli({"llm", "check", "--llm-url", server->base_url()});
  REQUIRE(human.code == 0);
  CHECK(human.out.find("scripted-model") != std::string::npos);
  server->Stop();
  const Run down =
      cli({"--json", "llm", "check", "--llm-url", server->base_url()});
  CHECK(down.code == 1);
  CHECK(down.err.find("unavailable") != std::string::npos);
}

TEST_CASE("llm check --probe fails with the generation's error, not a latency") {
  Fixture cli;
  auto server = StartServer();
  scripted::ScriptedReply broken = scripted::StatusReply(500);
  broken.endpoint = Endpoint::kChat;
  broken.times = -1;
  server->Add(broken);
  const Run r = cli({"llm", "check", "--probe", "--llm-url",
                     server->base_url(), "--llm-retries", "0"});
  CHECK(r.code == 1);
  CHECK(r.out.find("one-token generation") == std::string::npos);
  CHECK(r.err.find("generation probe") != std::string::npos);
}

TEST_CASE("a malformed answer is the server's input error: exit 1, not 2") {
  Fixture cli;
  auto server = StartServer();
  scripted::ScriptedReply junk = scripted::RawReply(200, "{\"data\": 1}");
  junk.endpoint = Endpoint::kModels;
  server->Add(junk);
  const Run r =
      cli({"--json", "llm", "check", "--llm-url", server->base_url()});
  CHECK(r.code == 1);
  CHECK(r.err.find("invalid_argument") != std::string::npos);
}

TEST_CASE("query and llm check take --llm-key and send it") {
  Fixture cli;
  cli.Init();
  auto server = StartServer();
  server->SetDefault(scripted::TextReply({"[1] > [2]"}));
  const Run q = cli({"--json", "query", kQuery, "--rerank", "listwise",
                     "--llm-url", server->base_url(), "--llm-model",
                     "scripted-model", "--llm-key", "sk-query-key-0001",
                     "--candidates", "4", "-k", "2"});
  REQUIRE_MESSAGE(q.code == 0, q.err);
  const Run c = cli({"llm", "check", "--llm-url", server->base_url(),
                     "--llm-key", "sk-check-key-0002"});
  REQUIRE_MESSAGE(c.code == 0, c.err);
  auto log = server->Requests();
  REQUIRE(log.size() >= 2);
  CHECK(log.front().headers.at("authorization") == "Bearer sk-query-key-0001");
  CHECK(log.back().headers.at("authorization") == "Bearer sk-check-key-0002");
}

TEST_CASE("query --rerank gives up at --llm-timeout, in BM25 order with why") {
  Fixture cli;
  cli.Init();
  auto server = StartServer();
  scripted::ScriptedReply silent = scripted::TextReply({"[1] > [2]"});
  silent.delay_ms = 60000;  // answered when the server stops
  silent.times = -1;
  server->Add(silent);
  const auto start = std::chrono::steady_clock::now();
  const Run r = cli({"--json", "query", kQuery, "--rerank", "listwise",
                     "--llm-url", server->base_url(), "--llm-model",
                     "scripted-model", "--llm-timeout", "1", "--candidates",
                     "4", "-k", "3"});
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const Json j = Json::parse(r.out);
  CHECK(j["rerank"]["applied"] == false);
  CHECK(j["rerank"]["reason"].get<std::string>().find("deadline") !=
        std::string::npos);
  CHECK(took < std::chrono::seconds(20));
}

}  // namespace
}  // namespace skilldb::testing
