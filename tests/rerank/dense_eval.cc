#include "dense_eval.h"

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>

namespace skilldb::testing {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

std::vector<std::string> IdsOf(const std::vector<RankedHit>& hits) {
  std::vector<std::string> ids;
  for (const RankedHit& h : hits) ids.push_back(h.hit.id);
  return ids;
}

template <typename Fn>
Result<DenseEvalResult> Score(const std::vector<RelevanceQuery>& queries,
                              size_t k, Fn ranked_ids) {
  DenseEvalResult r;
  for (const RelevanceQuery& q : queries) {
    const auto start = Clock::now();
    SKILLDB_ASSIGN_OR_RETURN(std::vector<std::string> ids, ranked_ids(q));
    r.latency_ms.push_back(MsSince(start));
    const double n = NdcgAtK(ids, q.grades, k);
    r.per_query_ndcg.push_back(n);
    r.ndcg += n / queries.size();
    r.recall += RecallAtK(ids, q.grades, k) / queries.size();
  }
  return r;
}

}  // namespace

Result<std::unique_ptr<DenseEvaluator>> DenseEvaluator::Create(
    const std::string& seed_dir, const std::string& queries_path,
    const std::string& model_dir) {
  std::unique_ptr<DenseEvaluator> e(new DenseEvaluator());
  SKILLDB_ASSIGN_OR_RETURN(e->base_,
                           RerankEvaluator::Create(seed_dir, queries_path));
  models::EmbedderOptions eo;
  eo.model_id = "all-MiniLM-L6-v2";
  SKILLDB_ASSIGN_OR_RETURN(e->embedder_, models::Embedder::Open(model_dir, eo));
  std::string pattern = "/tmp/skilldb-dense-eval-XXXXXX";
  if (const char* t = ::getenv("TMPDIR")) {
    pattern = std::string(t) + "/skilldb-dense-eval-XXXXXX";
  }
  if (!::mkdtemp(pattern.data())) {
    return Status::IOError("cannot create a temporary directory " + pattern);
  }
  e->dir_ = pattern;
  SKILLDB_ASSIGN_OR_RETURN(e->store_,
                           rerank::EmbeddingStore::Open(e->dir_ + "/e.sqlite"));
  SKILLDB_ASSIGN_OR_RETURN(
      e->pass_, rerank::EmbedRevisions(e->base_->library(), e->embedder_.get(),
                                       e->store_.get()));
  return e;
}

DenseEvaluator::~DenseEvaluator() {
  store_.reset();
  if (!dir_.empty()) {
    for (const char* f : {"/e.sqlite", "/e.sqlite-wal", "/e.sqlite-shm"}) {
      ::unlink((dir_ + f).c_str());
    }
    ::rmdir(dir_.c_str());
  }
}

Result<DenseEvalResult> DenseEvaluator::RunBm25(size_t k) {
  Library* lib = base_->library();
  return Score(
      queries(), k,
      [&](const RelevanceQuery& q) -> Result<std::vector<std::string>> {
        QueryOptions o;
        o.k = k;
        SKILLDB_ASSIGN_OR_RETURN(QueryResult r, lib->Query(o, q.text));
        std::vector<std::string> ids;
        for (const Hit& h : r.hits) ids.push_back(h.id);
        return ids;
      });
}

Result<DenseEvalResult> DenseEvaluator::RunDense(
    const rerank::DenseOptions& options, size_t k) {
  SKILLDB_ASSIGN_OR_RETURN(
      auto retriever,
      rerank::DenseRetriever::Create(base_->library(), embedder_.get(),
                                     store_.get(), options));
  return Score(
      queries(), k,
      [&](const RelevanceQuery& q) -> Result<std::vector<std::string>> {
        QueryOptions o;
        o.k = k;
        SKILLDB_ASSIGN_OR_RETURN(rerank::DenseResult r,
                                 retriever->Retrieve(q.text, o));
        if (!r.result.applied) {
          return Status::Internal("dense stage not applied: " +
                                  r.result.reason);
        }
        return IdsOf(r.result.hits);
      });
}

}  // namespace skilldb::testing
