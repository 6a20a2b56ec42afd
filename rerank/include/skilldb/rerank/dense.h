// The dense stage of retrieval: skill embeddings from a sentence encoder
// (llm::TextEncoder; models/'s Embedder on libtorch), stored per skill
// revision (EmbeddingStore), searched exhaustively by cosine similarity over
// the skills live at the queried version, alone or fused with BM25.
//
//   EmbedRevisions   the background pass: embeds every retained revision
//                    the store lacks (skilldb embed). It only reads the
//                    library, so commits never wait for it.
//   DenseRetriever   one query: BM25 candidates, the dense ranking over
//                    every live skill that passes the query's filters, and
//                    their fusion (reciprocal rank or score blending), as a
//                    RerankResult (mode "dense"): each hit carries its BM25
//                    rank (0 when BM25 did not retrieve it), its cosine
//                    (rerank_score) and its fused score.
//
// A revision the pass has not reached yet is embedded at query time (and
// stored, unless the store is read-only), so results never depend on
// whether the pass ran. An encoder failure is not a query failure: the
// result is BM25's order with applied == false and the reason (see
// reranker.h).
#ifndef SKILLDB_RERANK_DENSE_H_
#define SKILLDB_RERANK_DENSE_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/library.h"
#include "skilldb/llm/encoder.h"
#include "skilldb/options.h"
#include "skilldb/rerank/embedding_store.h"
#include "skilldb/reranker.h"
#include "skilldb/skill.h"
#include "skilldb/status.h"

namespace skilldb::rerank {

// What of a skill is embedded: title, summary, tags and body, one per line
// (the encoder truncates to its window, so the first lines weigh most).
std::string EmbeddingText(const Skill& skill);

// How the dense ranking and BM25's are combined.
enum class DenseFusion {
  kNone,   // the dense ranking alone
  kRrf,    // reciprocal rank fusion: sum of 1 / (rrf_k + rank) per list
  kBlend,  // w * minmax(cosine) + (1 - w) * minmax(BM25) over the union
};
std::string_view DenseFusionName(DenseFusion fusion);
// InvalidArgument naming the accepted values ("none", "rrf", "blend").
Result<DenseFusion> ParseDenseFusion(std::string_view name);

struct DenseOptions {
  // Default: kBlend at dense_weight 0.5, chosen from rerank/RESULTS.md
  // (dense section): on data/relevance it adds +0.022 nDCG@10 to BM25
  // alone (95% CI +-0.013), where rrf adds +0.007 (+-0.015) and the dense
  // ranking alone loses 0.056.
  DenseFusion fusion = DenseFusion::kBlend;
  // Depth of each list that enters fusion (BM25 top and dense top).
  // At least 1, at most kMaxQueryK. Default: 50.
  size_t candidates = 50;
  double rrf_k = 60.0;        // > 0. Default: 60 (Cormack et al.).
  double dense_weight = 0.5;  // kBlend's w, in [0, 1]. Default: 0.5.
  // Embed (and store, when the store is writable) live revisions the
  // store lacks. When false they are left out of the dense ranking and
  // counted in DenseResult::missing. Default: true.
  bool embed_missing = true;
  size_t batch_size = 32;  // texts per Embed call, >= 1. Default: 32.
};
// InvalidArgument naming the field.
Status ValidateDenseOptions(const DenseOptions& options);

struct DenseResult {
  RerankResult result;        // hits best first; result.mode == "dense"
  Version version = 0;        // the version answered as of
  size_t live = 0;            // live skills that passed the filters
  size_t embedded_now = 0;    // revisions embedded during this query
  size_t missing = 0;         // left out (embed_missing false)
  double embed_query_ms = 0;  // encoding the query text
  double search_ms = 0;       // everything else (BM25, scoring, fusion)
};

// Answers queries against one library with one encoder and store.
// REQUIRES: library, encoder and store outlive the retriever.
// Thread-compatible (the per-version view is cached without a lock).
class DenseRetriever {
 public:
  // InvalidArgument for bad options; errors from registering the
  // encoder's model in the store (e.g. a dimension conflict).
  static Result<std::unique_ptr<DenseRetriever>> Create(
      Library* library, llm::TextEncoder* encoder, EmbeddingStore* store,
      const DenseOptions& options = {});
  ~DenseRetriever();

  // The top query.k skills for `text` as of query.as_of (or the head),
  // passing query's filters, with query.fields filled as a BM25 query
  // fills them. query.record_retrieved records `retrieved` for the hits.
  // Errors: the library's (NotFound for an unknown version), the store's;
  // never the encoder's (see the file comment).
  Result<DenseResult> Retrieve(std::string_view text,
                               const QueryOptions& query);

 private:
  struct View;
  DenseRetriever(Library* library, llm::TextEncoder* encoder,
                 EmbeddingStore* store, const DenseOptions& options);
  // The view at `version` (cached); nullptr with *encoder_status set when
  // the encoder failed on a revision the store lacked.
  Result<const View*> ViewAt(Version version, size_t* embedded_now,
                             Status* encoder_status);
  Library* library_;
  llm::TextEncoder* encoder_;
  EmbeddingStore* store_;
  DenseOptions options_;
  std::unique_ptr<View> view_;  // the last version queried
};

struct EmbedProgress {
  size_t done = 0;   // revisions looked at
  size_t total = 0;  // retained revisions (deleted ones excluded)
};

struct EmbedOptions {
  size_t batch_size = 32;  // texts per Embed call and per store write
  // Also delete stored embeddings of revisions the library no longer
  // retains (after gc). Default: false.
  bool prune = false;
  // Called after every batch; may be empty.
  std::function<void(const EmbedProgress&)> progress;
};

struct EmbedReport {
  EmbeddingModel model;
  size_t revisions = 0;  // retained, non-deleted revisions
  size_t embedded = 0;   // computed by this pass
  size_t present = 0;    // already stored
  // Stored but unusable (NaN or wrong size): embedded again, overwritten.
  size_t repaired = 0;
  uint64_t pruned = 0;
  double seconds = 0;
};

// The background pass: embeds every retained revision whose embedding the
// store lacks, writing each batch in its own transaction (a pass killed
// halfway keeps what it wrote). Errors: the library's, the store's, the
// encoder's (the pass stops at the failing batch; earlier ones are kept).
Result<EmbedReport> EmbedRevisions(Library* library, llm::TextEncoder* encoder,
                                   EmbeddingStore* store,
                                   const EmbedOptions& options = {});

}  // namespace skilldb::rerank

#endif  // SKILLDB_RERANK_DENSE_H_
