// The commands that run on libtorch: `query TEXT --rerank dense` and
// `embed` (the dense stage of retrieval, rerank/dense.h, with models/'s
// sentence encoder), `train` (trainer/) and the in-process model of
// `kernelbench run --local-model` (models/local_backbone.h). `embed` is the background
// pass: it embeds every retained revision the embedding store lacks and
// never blocks commits (it only reads the library). A query embeds what the
// pass has not reached, so its answer never depends on whether the pass
// ran. They run in skilldb-ml, the build of the CLI linked with libtorch
// (this file compiled with SKILLDB_CLI_DENSE): `skilldb` itself hands them
// over (companion.h) so that no other command pays for loading libtorch;
// without skilldb-ml they say where they looked and how to build it.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "companion.h"
#include "context.h"
#include "progress.h"
#include "skilldb/llm/backbone.h"
#include "text.h"

#ifdef SKILLDB_CLI_DENSE
#include "skilldb/models/embedder.h"
#include "skilldb/models/local_backbone.h"
#include "skilldb/rerank/dense.h"
#endif
#ifdef SKILLDB_CLI_TRAINER
#include "skilldb/trainer/train_command.h"
#endif

namespace skilldb::cli {

#ifndef SKILLDB_CLI_DENSE

int RunDenseQuery(const GlobalArgs& g, const QueryArgs&, const Io& io) {
  return Fail(g, io, HandOverToCompanion("query --rerank dense"));
}
int RunEmbed(const GlobalArgs& g, const EmbedArgs&, const Io& io) {
  return Fail(g, io, HandOverToCompanion("embed"));
}
// By value, as commands.h declares it for skilldb-ml's RunTrain, which
// lends the strings to argv.
// NOLINTNEXTLINE(performance-unnecessary-value-param)
int RunTrain(std::vector<std::string>) {
  const Status st = HandOverToCompanion("train");
  std::cerr << "skilldb train: " << st.ToString() << "\n";
  return kExitInternalError;
}
Result<std::unique_ptr<llm::Backbone>> OpenLocalModel(const std::string&,
                                                      const std::string&) {
  return HandOverToCompanion("kernelbench run --local-model");
}

#else

namespace {

std::string ModelDir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("SKILLDB_EMBED_MODEL")) {
    if (*env) return env;
  }
  return SKILLDB_CLI_MINILM_DIR;
}

std::string StorePath(const GlobalArgs& g, const std::string& flag) {
  return SidecarStorePath(g, flag, nullptr, ".embeddings.sqlite");
}

Result<std::unique_ptr<models::Embedder> > OpenEncoder(
    const std::string& flag) {
  const std::string dir = ModelDir(flag);
  auto e = models::Embedder::Open(dir);
  if (!e.ok()) {
    return Status(e.status().code(),
                  "embedding model '" + dir + "': " + e.status().message() +
                      " (give --model DIR or set SKILLDB_EMBED_MODEL)");
  }
  return e;
}

Json ModelJson(const llm::TextEncoder& e) {
  return Json{{"id", e.model_id()},
              {"weights_sha256", e.weights_sha256()},
              {"dimension", e.dimension()}};
}

}  // namespace

int RunDenseQuery(const GlobalArgs& g, const QueryArgs& a, const Io& io) {
  if (!a.file.empty()) {
    return Fail(g, io,
                Status::InvalidArgument(
                    "--rerank dense takes one query TEXT, not --file"));
  }
  auto fusion = rerank::ParseDenseFusion(a.fusion);
  if (!fusion.ok()) return Fail(g, io, fusion.status());
  auto options = MakeQueryOptions(a, g.json);
  if (!options.ok()) return Fail(g, io, options.status());
  auto library = OpenLibrary(g, /*read_only=*/true, io);
  if (!library.ok()) return Fail(g, io, library.status());
  auto encoder = OpenEncoder(a.model);
  if (!encoder.ok()) return Fail(g, io, encoder.status());
  // Writable when it can be (so what this query embeds is kept), else
  // read-only (a library on a read-only medium still answers). A query
  // never creates the store: without one, what it embeds lives in memory
  // for this query only (`skilldb embed` makes the store).
  const std::string path = StorePath(g, a.embeddings);
  auto store = rerank::EmbeddingStore::Open(path, {.create = false});
  if (!store.ok() && store.status().code() != StatusCode::kCorruption &&
      store.status().code() != StatusCode::kNotFound) {
    store = rerank::EmbeddingStore::Open(path, {.read_only = true});
  }
  bool kept = true;
  if (!store.ok() && store.status().code() == StatusCode::kNotFound) {
    store = rerank::EmbeddingStore::Open(":memory:", {.create = true});
    kept = false;
  }
  if (!store.ok()) return Fail(g, io, store.status());
  rerank::DenseOptions dense;
  dense.fusion = *fusion;
  dense.candidates = std::max(a.candidates, a.k);
  auto retriever = rerank::DenseRetriever::Create(
      library->get(), encoder->get(), store->get(), dense);
  if (!retriever.ok()) return Fail(g, io, retriever.status());
  auto r = (*retriever)->Retrieve(a.text, *options);
  if (!r.ok()) return Fail(g, io, r.status());
  const RerankResult& res = r->result;
  if (g.json) {
    Json hits = Json::array();
    for (size_t i = 0; i < res.hits.size(); ++i) {
      const RankedHit& h = res.hits[i];
      Json j{{"rank", i + 1},
             {"id", h.hit.id},
             {"bm25_rank", h.bm25_rank},
             {"bm25_score", h.hit.score},
             {"cosine", h.rerank_score},
             {"score", h.score}};
      Json fields = AsJson(h.hit);
      fields.erase("id");
      fields.erase("score");
      j.update(fields);
      hits.push_back(j);
    }
    PrintJson(io, Json{{"version", r->version},
                       {"query", a.text},
                       {"rerank",
                        {{"mode", res.mode},
                         {"applied", res.applied},
                         {"reason", res.reason},
                         {"fusion", a.fusion},
                         {"model", ModelJson(**encoder)},
                         {"embeddings", path},
                         {"embeddings_kept", kept},
                         {"live", r->live},
                         {"embedded_now", r->embedded_now},
                         {"embed_query_ms", r->embed_query_ms},
                         {"search_ms", r->search_ms}}},
                       {"hits", hits}});
    return kExitOk;
  }
  *io.out << "version " << r->version << ": " << res.hits.size()
          << (res.hits.size() == 1 ? " hit" : " hits") << " for \""
          << EscapeLine(a.text) << "\", ";
  if (res.applied) {
    *io.out << "dense (" << EscapeLine(res.reason) << ")";
  } else {
    *io.out << "in BM25 order: " << EscapeLine(res.reason);
  }
  if (r->embedded_now) {
    *io.out << "; embedded " << r->embedded_now << " now"
            << (kept ? "" : " (not kept: no embedding store; skilldb embed)");
  }
  *io.out << "\n";
  for (size_t i = 0; i < res.hits.size(); ++i) {
    const RankedHit& h = res.hits[i];
    *io.out << (i + 1 < 10 ? " " : "") << i + 1 << "  cos "
            << FormatScore(h.rerank_score) << "  bm25 "
            << (h.bm25_rank ? "#" + std::to_string(h.bm25_rank) : "-") << "  "
            << EscapeLine(h.hit.id) << "  " << EscapeLine(h.hit.title) << "\n";
  }
  return kExitOk;
}

int RunEmbed(const GlobalArgs& g, const EmbedArgs& a, const Io& io) {
  auto library = OpenLibrary(g, /*read_only=*/true, io);
  if (!library.ok()) return Fail(g, io, library.status());
  auto encoder = OpenEncoder(a.model);
  if (!encoder.ok()) return Fail(g, io, encoder.status());
  const std::string path = StorePath(g, a.embeddings);
  auto store = rerank::EmbeddingStore::Open(path);
  if (!store.ok()) return Fail(g, io, store.status());
  Progress progress(g.progress, io.err, "embedding", "revisions");
  rerank::EmbedOptions options;
  options.batch_size = a.batch;
  options.prune = a.prune;
  options.progress = [&](const rerank::EmbedProgress& p) {
    progress.Update(p.done, p.total);
  };
  auto report = rerank::EmbedRevisions(library->get(), encoder->get(),
                                       store->get(), options);
  progress.Finish();
  if (!report.ok()) return Fail(g, io, report.status());
  if (g.json) {
    PrintJson(io, Json{{"embeddings", path},
                       {"model", ModelJson(**encoder)},
                       {"revisions", report->revisions},
                       {"embedded", report->embedded},
                       {"present", report->present},
                       {"repaired", report->repaired},
                       {"pruned", report->pruned},
                       {"seconds", report->seconds}});
    return kExitOk;
  }
  *io.out << "embedded " << report->embedded << " of " << report->revisions
          << " revisions (" << report->present << " already stored";
  if (report->repaired > 0) {
    *io.out << ", " << report->repaired << " unusable ones replaced";
  }
  if (a.prune) *io.out << ", " << report->pruned << " pruned";
  *io.out << ") with " << EscapeLine((*encoder)->model_id()) << " into "
          << EscapeLine(path) << "\n";
  return kExitOk;
}

int RunTrain(std::vector<std::string> args) {
#ifdef SKILLDB_CLI_TRAINER
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return trainer::TrainMain(static_cast<int>(argv.size()) - 1, argv.data());
#else
  (void)args;
  std::cerr << "skilldb train: this skilldb-ml was built without the trainer "
               "(trainer/ needs the agents and the engine in the tree)\n";
  return kExitInternalError;
#endif
}

Result<std::unique_ptr<llm::Backbone>> OpenLocalModel(
    const std::string& dir, const std::string& device) {
  models::LocalBackboneOptions o;
  o.device = device;
  auto b = models::OpenLocalBackbone(dir, o);
  if (!b.ok()) {
    return Status(b.status().code(), "--local-model '" + dir + "' on '" +
                                         device + "': " +
                                         b.status().message());
  }
  return b;
}

#endif  // SKILLDB_CLI_DENSE

}  // namespace skilldb::cli
