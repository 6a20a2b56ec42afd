// rerank_latency_bench: what reranking adds to a selection's latency, and
// how the permutation parser fares on the committed adversarial answers.
//
// Latency: every judged query of data/relevance retrieves its 20 BM25
// candidates from the seed library; the timed part is Reranker::Rerank
// alone (what reranking adds to retrieval), through the real llm/ clients
// against the scripted protocol server with a latency model of a real
// server (below, printed with the results). Each mode runs the queries
// three ways: no cache (every selection asks the model), a warm cache (the
// same selections again), and a training batch (8 rollouts asking for the
// same selection at once through one cache).
//
// Usage: rerank_latency_bench [--queries N] [--testdata DIR]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "rerank_eval.h"
#include "scripted_llm_server.h"
#include "seed_data.h"
#include "skilldb/llm/openai_client.h"
#include "skilldb/llm/rerank_client.h"
#include "skilldb/rerank/endpoint.h"
#include "skilldb/rerank/listwise.h"
#include "skilldb/rerank/permutation.h"
#include "skilldb/rerank/pointwise.h"
#include "build_paths.h"

namespace skilldb::testing {
namespace {

using Clock = std::chrono::steady_clock;

// A 7B-class decoder behind vLLM on one data-centre GPU: ~20 ms to the
// first token, prefill at ~20k tokens/s, decoding at ~80 tokens/s per
// stream. A cross-encoder reranker (bge-reranker class) behind TEI or
// vLLM's /v1/rerank: ~10 ms plus ~200k tokens/s.
constexpr scripted::LatencyModel kDecoder{20, 50, 12000};
constexpr scripted::LatencyModel kCrossEncoder{10, 5, 0};

double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t i =
      std::min(v.size() - 1, static_cast<size_t>(p / 100.0 * v.size()));
  return v[i];
}

struct Row {
  std::string mode, run;
  std::vector<double> ms;
  size_t applied = 0, skipped = 0, calls = 0;
};

void Print(const Row& r) {
  double mean = 0.0;
  for (double x : r.ms) mean += x / r.ms.size();
  std::printf("| %s | %s | %zu | %.1f | %.1f | %.3f | %.3f | %zu | %zu |\n",
              r.mode.c_str(), r.run.c_str(), r.ms.size(), Percentile(r.ms, 50),
              Percentile(r.ms, 99), mean, Percentile(r.ms, 0), r.applied,
              r.calls);
}

std::unique_ptr<scripted::ScriptedLlmServer> Start(
    const scripted::LatencyModel& latency) {
  scripted::ServerOptions o;
  o.latency = latency;
  o.threads = 64;
  o.keep_alive = true;  // as vLLM serves
  auto s = scripted::ScriptedLlmServer::Start(o);
  if (!s.ok()) {
    std::cerr << s.status().ToString() << "\n";
    std::exit(2);
  }
  return std::move(s).value();
}

llm::ClientConfig Config(const scripted::ScriptedLlmServer& server) {
  llm::ClientConfig c;
  c.base_url = server.base_url();
  c.model = "scripted-model";
  c.max_in_flight = 32;
  c.read_timeout_ms = 30000;
  return c;
}

// The listwise answer the scripted server gives: a full ranking of 20.
std::string Ranking20() {
  const int order[20] = {3,  1,  2,  5,  4,  8,  6,  7,  10, 9,
                         12, 11, 14, 13, 16, 15, 18, 17, 20, 19};
  std::string s;
  for (int i : order) s += (s.empty() ? "[" : " > [") + std::to_string(i) + "]";
  return s;
}

// One pass over the queries through `reranker`; per query, the candidates
// are retrieved first and only Rerank is timed.
Row Pass(const std::string& mode, const std::string& run, Reranker* reranker,
         const std::vector<std::vector<Hit>>& candidates,
         const std::vector<RelevanceQuery>& queries, size_t batch,
         const scripted::ScriptedLlmServer& server) {
  Row row{mode, run, {}, 0, 0, 0};
  const size_t before = server.RequestCount();
  for (size_t q = 0; q < queries.size(); ++q) {
    RerankRequest req;
    req.query = queries[q].text;
    req.candidates = candidates[q];
    req.k = 10;
    std::vector<double> times(batch);
    std::vector<std::thread> threads;
    std::vector<RerankResult> results(batch);
    for (size_t b = 0; b < batch; ++b) {
      threads.emplace_back([&, b] {
        const auto start = Clock::now();
        auto r = reranker->Rerank(req);
        times[b] = Ms(Clock::now() - start);
        if (r.ok()) results[b] = std::move(r).value();
      });
    }
    for (auto& t : threads) t.join();
    for (size_t b = 0; b < batch; ++b) {
      row.ms.push_back(times[b]);
      row.applied += results[b].applied ? 1 : 0;
      row.skipped += results[b].reason.rfind("strong BM25", 0) == 0 ? 1 : 0;
    }
  }
  row.calls = server.RequestCount() - before;
  return row;
}

void RunMode(const std::string& mode, RerankEvaluator& eval,
             const std::vector<RelevanceQuery>& queries,
             const std::vector<std::vector<Hit>>& candidates) {
  auto server = Start(mode == "endpoint" ? kCrossEncoder : kDecoder);
  scripted::ScriptedReply reply;
  reply.times = -1;
  if (mode == "listwise") reply.texts = {Ranking20()};
  server->SetDefault(reply);
  if (mode == "pointwise") {
    // A verdict per skill (yes for about half), so the judgments differ.
    std::set<std::string> ids;
    for (const auto& hits : candidates) {
      for (const Hit& h : hits) ids.insert(h.id);
    }
    for (const std::string& id : ids) {
      const bool yes = std::hash<std::string>()(id) % 2 == 0;
      scripted::ScriptedReply r = scripted::TextReply({yes ? "yes" : "no"});
      r.endpoint = scripted::Endpoint::kChat;
      r.prompt_contains = "<Document>: " + id + ":";
      r.times = -1;
      r.token_logprob = -0.2;
      r.alternatives = {{yes ? "no" : "yes", -1.7}};
      server->Add(r);
    }
  }
  auto client = llm::OpenAiClient::Create(Config(*server));
  llm::RerankConfig rc;
  rc.client = Config(*server);
  auto rerank_client = llm::RerankClient::Create(rc);
  if (!client.ok() || !rerank_client.ok()) std::exit(2);
  for (const bool cached : {false, true}) {
    rerank::RerankCache cache;
    rerank::RerankerOptions o;
    if (cached) o.cache = &cache;
    Result<std::unique_ptr<rerank::ModelReranker>> reranker =
        mode == "listwise" ? rerank::MakeListwiseReranker(client->get(), {}, o)
        : mode == "pointwise"
            ? rerank::MakePointwiseReranker(client->get(), {}, o)
            : rerank::MakeEndpointReranker(rerank_client->get(), {}, o);
    if (!reranker.ok()) std::exit(2);
    // Open the client's connections first, as a long-running agent's are.
    Pass(mode, "warm-up", reranker->get(), candidates, {queries[0]}, 1,
         *server);
    if (cached) cache.Clear();
    if (!cached) {
      Print(Pass(mode, "no cache", reranker->get(), candidates, queries, 1,
                 *server));
      continue;
    }
    Print(Pass(mode, "cache, first pass", reranker->get(), candidates, queries,
               1, *server));
    Print(Pass(mode, "cache, warm", reranker->get(), candidates, queries, 1,
               *server));
    cache.Clear();
    Print(Pass(mode, "cache, batch of 8 at once", reranker->get(), candidates,
               queries, 8, *server));
  }
  (void)eval;
}

std::string FromHex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

void ParseSuccess(const std::string& testdata) {
  std::ifstream in(testdata + "/adversarial_outputs.jsonl");
  size_t cases = 0, as_expected = 0, ranked = 0, refused = 0;
  std::string line, wrong;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line);
    const std::string answer = j.contains("answer_hex")
                                   ? FromHex(j["answer_hex"].get<std::string>())
                                   : j["answer"].get<std::string>();
    auto p = rerank::ParsePermutation(answer, j["n"].get<size_t>());
    ++cases;
    ranked += p.ok() ? 1 : 0;
    refused += p.ok() ? 0 : 1;
    bool ok;
    if (j["expect"].is_null()) {
      ok = !p.ok();
    } else {
      std::vector<size_t> ids;
      if (p.ok()) {
        for (size_t i : p->order) ids.push_back(i + 1);
      }
      ok = p.ok() && ids == j["expect"].get<std::vector<size_t>>();
    }
    as_expected += ok ? 1 : 0;
    if (!ok) wrong += " " + j["name"].get<std::string>() + ";";
  }
  std::printf(
      "\nAdversarial answers (rerank/testdata/adversarial_outputs.jsonl)"
      ": %zu cases, %zu handled as expected, %zu read as a ranking, "
      "%zu refused (BM25 order kept), 0 crashes%s%s\n",
      cases, as_expected, ranked, refused,
      wrong.empty() ? "" : "; not as expected:", wrong.c_str());
}

int Main(int argc, char** argv) {
  size_t limit = 0;
  std::string testdata = SKILLDB_RERANK_TESTDATA;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--queries") limit = std::stoul(argv[i + 1]);
    if (a == "--testdata") testdata = argv[i + 1];
  }
  auto eval = RerankEvaluator::Create(SeedDir(SKILLDB_SEED_DIR),
                                      SKILLDB_RELEVANCE_QUERIES);
  if (!eval.ok()) {
    std::cerr << eval.status().ToString() << "\n";
    return 2;
  }
  std::vector<RelevanceQuery> queries = (*eval)->queries();
  if (limit > 0 && limit < queries.size()) queries.resize(limit);
  std::vector<std::vector<Hit>> candidates;
  QueryOptions qo;
  qo.k = 20;
  qo.fields = {HitField::kTitle, HitField::kSummary, HitField::kBody};
  for (const RelevanceQuery& q : queries) {
    auto r = (*eval)->library()->Query(qo, q.text);
    if (!r.ok()) return 2;
    candidates.push_back(std::move(r->hits));
  }
  std::printf(
      "Latency model: decoder %d ms + %d us/prompt token + %d "
      "us/completion token (listwise, pointwise); cross-encoder %d ms + "
      "%d us/prompt token (endpoint). %zu queries, 20 candidates.\n\n",
      kDecoder.base_ms, kDecoder.per_prompt_token_us,
      kDecoder.per_completion_token_us, kCrossEncoder.base_ms,
      kCrossEncoder.per_prompt_token_us, queries.size());
  std::printf(
      "| mode | run | selections | p50 ms | p99 ms | mean ms | min ms "
      "| applied | HTTP requests |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const char* mode : {"listwise", "pointwise", "endpoint"}) {
    RunMode(mode, **eval, queries, candidates);
  }
  ParseSuccess(testdata);
  return 0;
}

}  // namespace
}  // namespace skilldb::testing

int main(int argc, char** argv) { return skilldb::testing::Main(argc, argv); }
