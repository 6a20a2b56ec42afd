#include "skilldb/retrieval/searcher.h"

#include "posting_list.h"
#include "segment_search.h"
#include "top_k.h"

namespace skilldb::retrieval {
namespace internal {
namespace {

// Every block's bound, each rounded up to a float (so still a bound).
BlockBoundCache::Table BoundTable(const PostingCursor& cursor, const Bm25& bm25,
                                  double idf) {
  auto table = std::make_shared<std::vector<float>>(cursor.num_blocks());
  for (uint32_t b = 0; b < cursor.num_blocks(); ++b) {
    const double bound = cursor.BoundOf(b, bm25, idf);
    float f = static_cast<float>(bound);
    if (f < bound)
      f = std::nextafter(f, std::numeric_limits<float>::infinity());
    (*table)[b] = f;
  }
  return table;
}

}  // namespace

Result<bool> SegmentSearch::Open(PostingSource* source) {
  terms_.resize(request_.terms.size());
  for (size_t i = 0; i < request_.terms.size(); ++i) {
    TermCursor& t = terms_[i];
    t.order = i;
    t.idf = request_.terms[i].idf;
    SKILLDB_RETURN_IF_ERROR(source->Get(request_.terms[i].term, &t.blob));
    if (t.blob == nullptr) continue;
    SKILLDB_RETURN_IF_ERROR(t.cursor.Init(t.blob->data()));
    const auto& frontier = t.cursor.TermFrontier();
    t.max_score =
        internal::MaxScore(bm25_, t.idf, frontier.data(), frontier.size());
    BlockBoundCache* cache = t.blob->bound_cache();
    // Short lists never walk windows (EvaluateShortLists).
    if (cache != nullptr && t.cursor.num_docs() > kShortList &&
        cache->blocks() == t.cursor.num_blocks()) {
      t.bounds = cache->Find(bm25_, t.idf);
      if (t.bounds == nullptr) {
        t.bounds = BoundTable(t.cursor, bm25_, t.idf);
        cache->Put(bm25_, t.idf, t.bounds);
      }
    }
  }
  std::erase_if(terms_, [](const TermCursor& t) { return t.blob == nullptr; });
  if (terms_.empty()) return false;
  for (const std::string& term : request_.filter_terms) {
    std::unique_ptr<Blob> blob;
    SKILLDB_RETURN_IF_ERROR(source->Get(term, &blob));
    if (blob == nullptr) return false;  // a required filter matches nothing
    PostingCursor filter;
    SKILLDB_RETURN_IF_ERROR(filter.Init(blob->data()));
    // A list holding every docid of the segment filters nothing (the
    // common case of the default "visible" filter): leave it out. Docids
    // strictly ascend, so count, first and last decide it.
    if (filter.num_docs() == docs_.count() && filter.doc() == docs_.base() &&
        filter.last_doc() == docs_.limit() - 1) {
      continue;
    }
    filters_.push_back(std::move(filter));
    filter_blobs_.push_back(std::move(blob));
  }
  for (TermCursor& t : terms_) by_doc_.push_back(&t);
  return true;
}

Status SegmentSearch::Finish(SearchStats* stats) const {
  for (const TermCursor& t : terms_) {
    if (t.cursor.corrupt())
      return Status::Corruption("malformed posting block");
  }
  for (const PostingCursor& f : filters_) {
    if (f.corrupt()) return Status::Corruption("malformed posting block");
  }
  if (stats != nullptr) {
    stats->docs_scored += docs_scored_;
    for (const TermCursor& t : terms_) {
      stats->blocks_decoded += t.cursor.blocks_decoded();
    }
    for (const PostingCursor& f : filters_) {
      stats->blocks_decoded += f.blocks_decoded();
    }
  }
  return Status::Ok();
}

}  // namespace internal

size_t PostingListBlocks(std::string_view posting_list) {
  internal::PostingCursor cursor;
  if (!cursor.Init(posting_list).ok()) return 0;
  return cursor.num_blocks();
}

Result<std::vector<ScoredDoc>> Search(const SearchRequest& request,
                                      const Bm25& bm25,
                                      const std::vector<SegmentInput>& segments,
                                      SearchStats* stats) {
  internal::TopK top(request.k);
  if (request.k == 0 || request.terms.empty()) return top.Take();
  for (const SegmentInput& segment : segments) {
    const SegmentDocs& docs = *segment.docs;
    if (docs.count() == 0 || docs.min_start() > request.as_of) continue;
    internal::SegmentSearch search(request, bm25, docs, &top);
    SKILLDB_ASSIGN_OR_RETURN(const bool any, search.Open(segment.postings));
    if (!any) continue;
    switch (request.algorithm) {
      case SearchAlgorithm::kExhaustive:
        search.RunExhaustive();
        break;
      case SearchAlgorithm::kBlockMaxWand:
        search.RunBlockMaxWand();
        break;
      case SearchAlgorithm::kBlockMaxMaxScore:
        search.RunBlockMaxMaxScore();
        break;
    }
    SKILLDB_RETURN_IF_ERROR(search.Finish(stats));
  }
  return top.Take();
}

}  // namespace skilldb::retrieval
