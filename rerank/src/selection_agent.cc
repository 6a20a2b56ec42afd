#include "skilldb/rerank/selection_agent.h"

#include <string>
#include <utility>
#include <vector>

namespace skilldb::rerank {
namespace {

std::vector<UsageRecord> UsageOf(const std::vector<Hit>& candidates,
                                 const RerankResult& result) {
  std::vector<UsageRecord> records;
  records.reserve(candidates.size() + result.hits.size());
  for (const Hit& h : candidates) {
    records.push_back({h.id, UsageEvent::kRetrieved, 1});
  }
  for (const RankedHit& h : result.hits) {
    records.push_back({h.hit.id, UsageEvent::kSelected, 1});
  }
  return records;
}

}  // namespace

Result<Selection> SelectionAgent::Select(
    std::string_view task, const SelectionOptions& options) const {
  if (options.k == 0) return Status::InvalidArgument("k must be at least 1");
  if (options.candidates < options.k) {
    return Status::InvalidArgument(
        "candidates (" + std::to_string(options.candidates) +
        ") must be at least k (" + std::to_string(options.k) + ")");
  }
  QueryOptions query = options.query;
  query.k = options.candidates;
  query.record_retrieved = false;  // recorded below, with `selected`
  query.fields |= HitField::kTitle;
  query.fields |= HitField::kSummary;
  query.fields |= HitField::kBody;
  SKILLDB_ASSIGN_OR_RETURN(QueryResult found, library_->Query(query, task));

  RerankRequest request;
  request.query = std::string(task);
  request.candidates = std::move(found.hits);
  request.k = options.k;
  request.version = found.version;

  Selection selection;
  selection.version = found.version;
  selection.num_candidates = request.candidates.size();
  if (reranker_ == nullptr) {
    selection.result = Bm25Order(request, "bm25", "no reranker");
  } else {
    SKILLDB_ASSIGN_OR_RETURN(selection.result, reranker_->Rerank(request));
  }
  if (options.record_usage && !request.candidates.empty()) {
    selection.usage =
        library_->RecordUsage(UsageOf(request.candidates, selection.result));
  }
  return selection;
}

}  // namespace skilldb::rerank
