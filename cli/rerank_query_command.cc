// skilldb query TEXT --rerank MODE: the Skill Selection Agent's two stages
// from the command line. BM25 retrieves the top --candidates, the LLM at
// --llm-url reranks them (listwise, pointwise or endpoint), and the output
// says whether the model's judgment applied, why not when it did not, and
// each hit's BM25 rank and score beside its final rank. A model failure is
// never a command failure: the hits are then BM25's, flagged.
#include <algorithm>
#include <memory>

#include "context.h"
#include "llm_options.h"
#include "skilldb/llm/client_config.h"
#include "skilldb/llm/openai_client.h"
#include "skilldb/llm/rerank_client.h"
#include "skilldb/rerank/endpoint.h"
#include "skilldb/rerank/listwise.h"
#include "skilldb/rerank/pointwise.h"
#include "skilldb/rerank/selection_agent.h"

namespace skilldb::cli {
namespace {

// The backend a mode talks to, kept alive for the reranker.
struct Backend {
  std::unique_ptr<llm::OpenAiClient> chat;
  std::unique_ptr<llm::RerankClient> rerank;
  std::unique_ptr<rerank::ModelReranker> reranker;
  std::string model;
};

Result<Backend> MakeBackend(const QueryArgs& a, const Io& io) {
  llm::ClientConfig base;
  // An interactive query should not wait minutes: one retry, and every
  // request answered within a minute (--llm-timeout to change it).
  base.retry.max_retries = 1;
  base.read_timeout_ms = 60000;
  base.request_timeout_ms = 60000;
  SKILLDB_ASSIGN_OR_RETURN(llm::ClientConfig config,
                           ResolveLlmConfig(a.llm, base, io));
  Backend b;
  b.model = config.model;
  const rerank::RerankerOptions options;  // default fusion, no cache
  if (a.rerank == "endpoint") {
    llm::RerankConfig rc;
    rc.client = config;
    rc.api =
        a.rerank_api == "tei" ? llm::RerankApi::kTei : llm::RerankApi::kCohere;
    SKILLDB_ASSIGN_OR_RETURN(b.rerank, llm::RerankClient::Create(rc));
    SKILLDB_ASSIGN_OR_RETURN(
        b.reranker, rerank::MakeEndpointReranker(b.rerank.get(), {}, options));
    return b;
  }
  SKILLDB_ASSIGN_OR_RETURN(b.chat, llm::OpenAiClient::Create(config));
  if (a.rerank == "pointwise") {
    SKILLDB_ASSIGN_OR_RETURN(
        b.reranker, rerank::MakePointwiseReranker(b.chat.get(), {}, options));
  } else {
    SKILLDB_ASSIGN_OR_RETURN(
        b.reranker, rerank::MakeListwiseReranker(b.chat.get(), {}, options));
  }
  return b;
}

Json HitJson(const RankedHit& h, size_t rank) {
  Json j{{"rank", rank},
         {"id", h.hit.id},
         {"bm25_rank", h.bm25_rank},
         {"bm25_score", h.hit.score},
         {"rerank_score", h.rerank_score},
         {"score", h.score}};
  // The fields asked for (--fields), through the API layer's codec.
  Json fields = AsJson(h.hit);
  fields.erase("id");
  fields.erase("score");
  j.update(fields);
  return j;
}

void PrintJsonResult(const Io& io, const std::string& text,
                     const rerank::Selection& s, const Backend& b) {
  const RerankResult& r = s.result;
  Json hits = Json::array();
  for (size_t i = 0; i < r.hits.size(); ++i) {
    hits.push_back(HitJson(r.hits[i], i + 1));
  }
  Json gens = Json::array();
  for (const GenerationRecord& g : r.generations) {
    gens.push_back(AsJson(g));
  }
  PrintJson(
      io, Json{{"version", s.version},
               {"query", text},
               {"rerank",
                {{"mode", r.mode},
                 {"applied", r.applied},
                 {"reason", r.reason},
                 {"cached", r.cached},
                 {"model", r.generations.empty() ? b.model
                                                 : r.generations.front().model},
                 {"candidates", s.num_candidates}}},
               {"hits", hits},
               {"generations", gens}});
}

void PrintHuman(const Io& io, const std::string& text,
                const rerank::Selection& s) {
  const RerankResult& r = s.result;
  *io.out << "version " << s.version << ": " << r.hits.size()
          << (r.hits.size() == 1 ? " hit" : " hits") << " for \""
          << EscapeLine(text) << "\", " << s.num_candidates
          << " BM25 candidates ";
  if (r.applied) {
    *io.out << "reranked " << r.mode << (r.cached ? " (cached)" : "");
    if (!r.reason.empty()) *io.out << " (" << EscapeLine(r.reason) << ")";
  } else {
    *io.out << "in BM25 order: " << EscapeLine(r.reason);
  }
  *io.out << "\n";
  for (size_t i = 0; i < r.hits.size(); ++i) {
    const RankedHit& h = r.hits[i];
    *io.out << (i + 1 < 10 ? " " : "") << i + 1 << "  bm25 #" << h.bm25_rank
            << (h.bm25_rank < 10 ? " " : "") << "  " << FormatScore(h.hit.score)
            << "  " << EscapeLine(h.hit.id) << "  " << EscapeLine(h.hit.title)
            << "\n";
  }
}

}  // namespace

int RunRerankedQuery(const GlobalArgs& g, const QueryArgs& a, const Io& io) {
  if (!a.file.empty()) {
    return Fail(
        g, io,
        Status::InvalidArgument("--rerank takes one query TEXT, not --file"));
  }
  if (a.candidates < a.k) {
    return Fail(g, io,
                Status::InvalidArgument(
                    "--candidates (" + std::to_string(a.candidates) +
                    ") must be at least --k (" + std::to_string(a.k) + ")"));
  }
  auto options = MakeQueryOptions(a, g.json);
  if (!options.ok()) return Fail(g, io, options.status());
  auto backend = MakeBackend(a, io);
  if (!backend.ok()) return Fail(g, io, backend.status());
  auto library = OpenLibrary(g, /*read_only=*/true, io);
  if (!library.ok()) return Fail(g, io, library.status());
  rerank::SelectionAgent agent(library->get(), backend->reranker.get());
  rerank::SelectionOptions so;
  so.k = a.k;
  so.candidates = a.candidates;
  so.query = *options;
  so.record_usage = false;  // a person's query is not an agent's selection
  auto selection = agent.Select(a.text, so);
  if (!selection.ok()) return Fail(g, io, selection.status());
  if (g.json) {
    PrintJsonResult(io, a.text, *selection, *backend);
  } else {
    PrintHuman(io, a.text, *selection);
  }
  return kExitOk;
}

}  // namespace skilldb::cli
