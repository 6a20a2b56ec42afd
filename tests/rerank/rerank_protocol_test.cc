// The selection stage end to end over HTTP: the real OpenAI-compatible
// client and rerank client (llm/) against the scripted protocol server
// (tests/llm_server), with a real library. Only the model is scripted.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "scripted_llm_server.h"
#include "skilldb/llm/openai_client.h"
#include "skilldb/llm/rerank_client.h"
#include "skilldb/rerank/endpoint.h"
#include "skilldb/rerank/listwise.h"
#include "skilldb/rerank/pointwise.h"
#include "skilldb/rerank/selection_agent.h"
#include "test_util.h"

namespace skilldb::rerank {
namespace {

using scripted::Endpoint;
using scripted::ScriptedLlmServer;
using scripted::ScriptedReply;
using skilldb::testing::TempLibrary;

std::unique_ptr<ScriptedLlmServer> StartServer(
    const scripted::ServerOptions& options = {}) {
  auto s = ScriptedLlmServer::Start(options);
  REQUIRE(s.ok());
  return std::move(s).value();
}

llm::ClientConfig ConfigFor(const ScriptedLlmServer& server) {
  llm::ClientConfig c;
  c.base_url = server.base_url();
  c.model = "scripted-model";
  c.connect_timeout_ms = 2000;
  c.read_timeout_ms = 5000;
  c.retry.max_retries = 1;
  c.retry.initial_backoff_ms = 1;
  c.retry.max_backoff_ms = 2;
  c.retry.jitter_seed = 1;
  c.request_token_ids = true;
  return c;
}

std::unique_ptr<llm::OpenAiClient> ClientFor(const llm::ClientConfig& c) {
  auto client = llm::OpenAiClient::Create(c);
  REQUIRE(client.ok());
  return std::move(client).value();
}

Skill MakeSkill(std::string id, std::string title, std::string body) {
  Skill s = Skill::Make(std::move(id), std::move(title));
  s.summary = "About " + s.title;
  s.body = std::move(body);
  return s;
}

// Four skills whose BM25 scores for the query are close (no strong signal).
void Fill(TempLibrary& lib) {
  REQUIRE(lib->PutMany({MakeSkill("tile-a", "shared memory tiling a", "x"),
                        MakeSkill("tile-b", "shared memory tiling b", "y"),
                        MakeSkill("tile-c", "shared memory tiling c", "z"),
                        MakeSkill("tile-d", "shared memory tiling d", "w")})
              .ok());
}

constexpr const char* kQuery = "shared memory tiling";

// Options that let any model answer through (tests of the protocol path,
// not of fusion's protection).
RerankerOptions Trusting() {
  RerankerOptions o;
  o.fusion.min_agreement = -1.0;
  o.fusion.guard_ranks = 0;
  o.fusion.top_bm25_weight = o.fusion.middle_bm25_weight =
      o.fusion.tail_bm25_weight = 0.0;
  return o;
}

std::vector<std::string> Bm25Ids(TempLibrary& lib, size_t k) {
  auto r = lib->Query(QueryOptions{.k = k}, kQuery);
  REQUIRE(r.ok());
  std::vector<std::string> ids;
  for (const Hit& h : r->hits) ids.push_back(h.id);
  return ids;
}

std::vector<std::string> Ids(const RerankResult& r) {
  std::vector<std::string> ids;
  for (const RankedHit& h : r.hits) ids.push_back(h.hit.id);
  return ids;
}

Selection Select(TempLibrary& lib, Reranker* reranker, size_t k = 4) {
  SelectionAgent agent(&*lib, reranker);
  auto s = agent.Select(kQuery, SelectionOptions{.k = k, .candidates = 4});
  REQUIRE_MESSAGE(s.ok(), s.status().ToString());
  return std::move(s).value();
}

TEST_CASE(
    "a listwise selection over HTTP keeps the model's tokens and "
    "logprobs for the trainer") {
  TempLibrary lib;
  Fill(lib);
  auto server = StartServer();
  server->Add(scripted::TextReply({"Here you go: [4] > [2] > [1] > [3]"}));
  auto client = ClientFor(ConfigFor(*server));
  auto reranker = MakeListwiseReranker(client.get(), {}, Trusting());
  REQUIRE(reranker.ok());
  const Selection s = Select(lib, reranker->get());
  const auto bm25 = Bm25Ids(lib, 4);
  CHECK(s.result.applied);
  CHECK(Ids(s.result) ==
        std::vector<std::string>{bm25[3], bm25[1], bm25[0], bm25[2]});
  REQUIRE(s.result.generations.size() == 1);
  const GenerationRecord& g = s.result.generations[0];
  CHECK(g.model == "scripted-model");
  CHECK(g.completion == "Here you go: [4] > [2] > [1] > [3]");
  CHECK(!g.completion_token_ids.empty());
  CHECK(g.completion_token_ids.size() == g.completion_logprobs.size());
  CHECK(!g.prompt_token_ids.empty());
  CHECK(server->RequestCount(Endpoint::kChat) == 1);
  CHECK(s.usage.ok());
}

TEST_CASE(
    "a malformed answer from the server keeps BM25 order with the "
    "reason") {
  TempLibrary lib;
  Fill(lib);
  auto server = StartServer();
  server->SetDefault(scripted::RawReply(200, "{\"choices\": [{\"mess"));
  auto client = ClientFor(ConfigFor(*server));
  auto reranker = MakeListwiseReranker(client.get(), {}, Trusting());
  const Selection s = Select(lib, reranker->get());
  CHECK(!s.result.applied);
  CHECK(Ids(s.result) == Bm25Ids(lib, 4));
  CHECK(!s.result.reason.empty());
}

TEST_CASE("an answer without a ranking keeps BM25 order and its generation") {
  TempLibrary lib;
  Fill(lib);
  auto server = StartServer();
  server->SetDefault(scripted::TextReply({"I cannot rank skills."}));
  auto client = ClientFor(ConfigFor(*server));
  auto reranker = MakeListwiseReranker(client.get(), {}, Trusting());
  const Selection s = Select(lib, reranker->get());
  CHECK(!s.result.applied);
  CHECK(s.result.reason.find("unparsable") != std::string::npos);
  CHECK(s.result.generations.size() == 1);
}

TEST_CASE(
    "an answer cut at max_tokens keeps BM25 order and says so, unless told "
    "to rank the ids it reached") {
  TempLibrary lib;
  Fill(lib);
  auto server = StartServer();
  server->SetDefault(scripted::TextReply({"[3] > [4] > [1] > [2]"}));
  auto client = ClientFor(ConfigFor(*server));
  ListwiseOptions lw;
  lw.max_tokens = 6;  // "[3] > [4" in the scripted tokens
  const auto bm25 = Bm25Ids(lib, 4);
  {
    auto reranker = MakeListwiseReranker(client.get(), lw, Trusting());
    const Selection s = Select(lib, reranker->get());
    INFO(s.result.reason);
    CHECK_FALSE(s.result.applied);
    CHECK(Ids(s.result)[0] == bm25[0]);
    CHECK(s.result.reason.find("cut at max_tokens") != std::string::npos);
  }
  lw.reject_cut = false;
  auto reranker = MakeListwiseReranker(client.get(), lw, Trusting());
  const Selection s = Select(lib, reranker->get());
  INFO(s.result.reason);
  CHECK(s.result.applied);
  CHECK(Ids(s.result)[0] == bm25[2]);
  CHECK(s.result.reason.find("missing") != std::string::npos);
  CHECK(s.result.reason.find("cut at max_tokens") != std::string::npos);
}

TEST_CASE(
    "a server slower than the read timeout keeps BM25 order flagged "
    "as a deadline") {
  TempLibrary lib;
  Fill(lib);
  auto server = StartServer();
  ScriptedReply slow = scripted::TextReply({"[2] > [1]"});
  slow.delay_ms = 1500;
  slow.times = -1;
  server->SetDefault(slow);
  llm::ClientConfig c = ConfigFor(*server);
  c.read_timeout_ms = 200;
  c.retry.retry_on_timeout = false;
  auto client = ClientFor(c);
  auto reranker = MakeListwiseReranker(client.get(), {}, Trusting());
  const auto start = std::chrono::steady_clock::now();
  const Selection s = Select(lib, reranker->get());
  CHECK(!s.result.applied);
  CHECK(s.result.reason.find("deadline_exceeded") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  CHECK(Ids(s.result) == Bm25Ids(lib, 4));
}

TEST_CASE("a server that is gone keeps BM25 order flagged as unavailable") {
  TempLibrary lib;
  Fill(lib);
  auto server = StartServer();
  llm::ClientConfig c = ConfigFor(*server);
  server->Stop();
  auto client = ClientFor(c);
  auto reranker = MakeListwiseReranker(client.get(), {}, Trusting());
  const Selection s = Select(lib, reranker->get());
  CHECK(!s.result.applied);
  CHECK(s.result.reason.find("unavailable") != std::string::npos);
  CHECK(Ids(s.result) == Bm25Ids(lib, 4));
  CHECK(s.usage.ok());
}

TEST_CASE(
    "a pointwise selection over HTTP reads P(yes) from the top "
    "logprobs, past an empty think block") {
  TempLibrary lib;
  Fill(lib);
  auto server = StartServer();
  for (const char* id : {"tile-a", "tile-b", "tile-c", "tile-d"}) {
    const bool relevant = std::string(id) == "tile-c";
    ScriptedReply r = scripted::TextReply(
        {std::string("<think>\n\n</think>\n\n") + (relevant ? "yes" : "no")});
    r.endpoint = Endpoint::kChat;
    r.prompt_contains = std::string("<Document>: ") + id + ":";
    r.token_logprob = -0.05;
    r.alternatives = {{relevant ? "no" : "yes", -3.0}};
    server->Add(r);
  }
  auto client = ClientFor(ConfigFor(*server));
  auto reranker = MakePointwiseReranker(client.get(), {}, Trusting());
  REQUIRE(reranker.ok());
  const Selection s = Select(lib, reranker->get());
  CHECK(s.result.applied);
  REQUIRE(s.result.hits.size() == 4);
  CHECK(s.result.hits[0].hit.id == "tile-c");
  const double p = 1.0 / (1.0 + std::exp(-3.0 + 0.05));
  CHECK(s.result.hits[0].rerank_score == doctest::Approx(p));
  CHECK(s.result.hits[1].rerank_score == doctest::Approx(1 - p));
  CHECK(server->RequestCount(Endpoint::kChat) == 4);
  CHECK(s.result.generations.size() == 4);
}

TEST_CASE(
    "pointwise scoring through completions echo sends both verdicts "
    "after the prefix") {
  TempLibrary lib;
  Fill(lib);
  auto server = StartServer();
  llm::ClientConfig c = ConfigFor(*server);
  c.chat_template = "chatml";
  auto client = ClientFor(c);
  PointwiseOptions pw;
  pw.method = VerdictMethod::kScore;
  pw.verdict_prefix = "<think>\n\n</think>\n\n";
  auto reranker = MakePointwiseReranker(client.get(), pw, Trusting());
  const Selection s = Select(lib, reranker->get());
  // The scripted server's logprobs do not depend on relevance: every
  // candidate gets the same P(yes), so what is checked is the protocol.
  CHECK(server->RequestCount(Endpoint::kCompletions) == 8);
  size_t echoed = 0;
  for (const auto& req : server->Requests()) {
    if (req.endpoint != Endpoint::kCompletions) continue;
    CHECK(req.body.find("\"echo\":true") != std::string::npos);
    echoed += req.body.find("</think>\\n\\nyes") != std::string::npos ||
              req.body.find("</think>\\n\\nno") != std::string::npos;
  }
  CHECK(echoed == 8);
  REQUIRE(s.result.generations.size() == 4);
  CHECK(!s.result.generations[0].completion_token_ids.empty());
  CHECK(s.result.hits[0].rerank_score ==
        doctest::Approx(s.result.hits[3].rerank_score));
}

TEST_CASE("an endpoint selection uses the Cohere rerank scores") {
  TempLibrary lib;
  Fill(lib);
  auto server = StartServer();
  const auto bm25 = Bm25Ids(lib, 4);
  ScriptedReply r;
  r.endpoint = Endpoint::kRerank;
  r.scores = {0.1, 0.2, 0.9, 0.3};  // by document index = BM25 rank - 1
  server->Add(r);
  llm::RerankConfig rc;
  rc.client = ConfigFor(*server);
  auto client = llm::RerankClient::Create(rc);
  REQUIRE(client.ok());
  auto reranker = MakeEndpointReranker(client->get(), {}, Trusting());
  REQUIRE(reranker.ok());
  const Selection s = Select(lib, reranker->get());
  CHECK(s.result.applied);
  CHECK(s.result.mode == "endpoint");
  CHECK(Ids(s.result) ==
        std::vector<std::string>{bm25[2], bm25[3], bm25[1], bm25[0]});
  CHECK(server->RequestCount(Endpoint::kRerank) == 1);
}

TEST_CASE("an endpoint selection speaks TEI's shape too") {
  TempLibrary lib;
  Fill(lib);
  auto server = StartServer();
  const auto bm25 = Bm25Ids(lib, 4);
  ScriptedReply r;
  r.endpoint = Endpoint::kTeiRerank;
  r.scores = {-2.0, 3.0, -1.0, 0.0};  // raw logits: the logistic applies
  server->Add(r);
  llm::RerankConfig rc;
  rc.client = ConfigFor(*server);
  rc.client.base_url = server->origin();
  rc.api = llm::RerankApi::kTei;
  auto client = llm::RerankClient::Create(rc);
  REQUIRE(client.ok());
  auto reranker = MakeEndpointReranker(client->get(), {}, Trusting());
  const Selection s = Select(lib, reranker->get());
  CHECK(s.result.applied);
  CHECK(Ids(s.result)[0] == bm25[1]);
  CHECK(s.result.hits[0].rerank_score ==
        doctest::Approx(1 / (1 + std::exp(-3.0))));
  CHECK(server->RequestCount(Endpoint::kTeiRerank) == 1);
}

TEST_CASE("the same selection across a training batch costs one model call") {
  TempLibrary lib;
  Fill(lib);
  scripted::ServerOptions so;
  so.latency.base_ms = 50;  // long enough for the batch to pile up
  auto server = StartServer(so);
  ScriptedReply r = scripted::TextReply({"[2] > [1] > [3] > [4]"});
  r.times = -1;
  server->SetDefault(r);
  auto client = ClientFor(ConfigFor(*server));
  RerankCache cache;
  RerankerOptions o = Trusting();
  o.cache = &cache;
  auto reranker = MakeListwiseReranker(client.get(), {}, o);
  REQUIRE(reranker.ok());
  constexpr int kRollouts = 8;
  std::vector<std::thread> threads;
  std::vector<Selection> selections(kRollouts);
  for (int i = 0; i < kRollouts; ++i) {
    threads.emplace_back(
        [&, i] { selections[i] = Select(lib, reranker->get()); });
  }
  for (auto& t : threads) t.join();
  CHECK(server->RequestCount(Endpoint::kChat) == 1);
  int with_generation = 0;
  for (const Selection& s : selections) {
    CHECK(s.result.applied);
    CHECK(Ids(s.result) == Ids(selections[0].result));
    with_generation += s.result.generations.empty() ? 0 : 1;
  }
  CHECK(with_generation == 1);
  CHECK(cache.Stats().misses == 1);
  // A later batch asks again: still no new call.
  Select(lib, reranker->get());
  CHECK(server->RequestCount(Endpoint::kChat) == 1);
  // A new revision of a candidate is a new selection.
  REQUIRE(lib->Put(MakeSkill("tile-a", "shared memory tiling a", "x2")).ok());
  Select(lib, reranker->get());
  CHECK(server->RequestCount(Endpoint::kChat) == 2);
}

}  // namespace
}  // namespace skilldb::rerank
