#include "skilldb/policy/selection.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "skilldb/policy/pitfall_notes.h"
#include "skilldb/util/clock.h"

namespace skilldb::policy {
namespace {

// What a prompt and a reranker read of a hit.
constexpr HitFields kHitFields = {
    HitField::kTitle, HitField::kSummary, HitField::kBody, HitField::kCode,
    HitField::kTags,  HitField::kOps,     HitField::kArch, HitField::kLanguage};

// The filter stages: all filters, then without the op filter, then none.
std::vector<QueryOptions> Stages(const SelectionRequest& request,
                                 const SelectionOptions& options) {
  QueryOptions all;
  all.k = options.retrieve_k;
  all.fields = kHitFields;
  all.ops = request.ops;
  all.arch = request.arch;
  all.language = request.language;
  std::vector<QueryOptions> stages = {all};
  if (!options.backfill) return stages;
  QueryOptions no_ops = all;
  no_ops.ops.clear();
  QueryOptions none = no_ops;
  none.arch.clear();
  none.language.reset();
  auto same = [](const QueryOptions& a, const QueryOptions& b) {
    return a.ops == b.ops && a.arch == b.arch && a.language == b.language;
  };
  if (!same(no_ops, all)) stages.push_back(no_ops);
  if (!same(none, stages.back())) stages.push_back(none);
  return stages;
}

SkillRef RefOf(const Hit& hit, size_t rank) {
  SkillRef r;
  r.id = hit.id;
  r.revision = hit.revision;
  r.title = hit.title;
  r.bm25_score = hit.score;
  r.bm25_rank = rank;
  r.score = hit.score;
  return r;
}

}  // namespace

Result<std::vector<Hit>> RetrieveStaged(Library& library,
                                        const SelectionRequest& request,
                                        const SelectionOptions& options,
                                        SelectionRecord* record) {
  if (options.select_k == 0 || options.retrieve_k < options.select_k) {
    return Status::InvalidArgument(
        "selection needs 1 <= select_k <= retrieve_k");
  }
  record->query = request.query;
  std::set<std::string, std::less<>> taken(request.exclude.begin(),
                                           request.exclude.end());
  std::vector<Hit> hits;
  std::optional<Version> version = request.as_of;
  for (QueryOptions q : Stages(request, options)) {
    if (hits.size() >= options.retrieve_k) break;
    q.as_of = version;  // every stage answers as of the first one's version
    // Ask for enough to fill the list after dropping what is taken.
    q.k = options.retrieve_k + taken.size();
    SKILLDB_ASSIGN_OR_RETURN(QueryResult result,
                             library.Query(q, request.query));
    version = result.version;
    for (Hit& hit : result.hits) {
      if (hits.size() >= options.retrieve_k) break;
      if (!taken.insert(hit.id).second) continue;
      hits.push_back(std::move(hit));
    }
  }
  record->library_version = version.value_or(library.CurrentVersion());
  record->retrieved.clear();
  for (size_t i = 0; i < hits.size(); ++i) {
    record->retrieved.push_back(RefOf(hits[i], i + 1));
  }
  return hits;
}

Status FinishSelection(Library& library, const SelectionOptions& options,
                       std::vector<RankedHit> ordered, Selection* selection) {
  selection->record.selected.clear();
  selection->skills.clear();
  for (RankedHit& ranked : ordered) {
    SkillRef ref = RefOf(ranked.hit, ranked.bm25_rank);
    ref.score = ranked.score;
    selection->record.selected.push_back(std::move(ref));
    SelectedSkill skill;
    auto stored = library.Get(
        ranked.hit.id, ReadOptions{.as_of = selection->record.library_version});
    if (stored.ok()) {
      std::vector<PitfallNote> notes = ReadPitfalls(stored->extra_json);
      for (size_t i = 0; i < notes.size() && i < options.pitfalls_per_skill;
           ++i) {
        skill.pitfalls.push_back(notes[i].note);
      }
    } else if (!stored.status().IsNotFound()) {
      return stored.status();
    }
    skill.hit = std::move(ranked.hit);
    selection->skills.push_back(std::move(skill));
  }
  return Status::Ok();
}

Result<Selection> Bm25Selector::Select(const SelectionRequest& request) {
  Selection selection;
  const auto start = std::chrono::steady_clock::now();
  SKILLDB_ASSIGN_OR_RETURN(
      std::vector<Hit> hits,
      RetrieveStaged(*library_, request, options_, &selection.record));
  std::vector<RankedHit> ordered;
  for (size_t i = 0; i < hits.size() && i < options_.select_k; ++i) {
    RankedHit r;
    r.bm25_rank = i + 1;
    r.score = hits[i].score;
    r.hit = std::move(hits[i]);
    ordered.push_back(std::move(r));
  }
  SKILLDB_RETURN_IF_ERROR(
      FinishSelection(*library_, options_, std::move(ordered), &selection));
  selection.retrieval_ms = util::MsSince(start);
  return selection;
}

Result<Selection> RerankingSelector::Select(const SelectionRequest& request) {
  Selection selection;
  auto start = std::chrono::steady_clock::now();
  RerankRequest rerank;
  SKILLDB_ASSIGN_OR_RETURN(
      rerank.candidates,
      RetrieveStaged(*library_, request, options_, &selection.record));
  selection.retrieval_ms = util::MsSince(start);
  rerank.query = request.query;
  rerank.k = options_.select_k;
  rerank.version = selection.record.library_version;
  rerank.seed = request.seed;
  start = std::chrono::steady_clock::now();
  std::vector<RankedHit> ordered;
  if (!rerank.candidates.empty()) {
    SKILLDB_ASSIGN_OR_RETURN(RerankResult result, reranker_->Rerank(rerank));
    selection.record.reranked = result.applied;
    selection.record.rerank_mode = result.mode;
    selection.record.rerank_reason = result.reason;
    selection.record.generations = std::move(result.generations);
    ordered = std::move(result.hits);
  }
  if (ordered.size() > options_.select_k) ordered.resize(options_.select_k);
  selection.rerank_ms = util::MsSince(start);
  SKILLDB_RETURN_IF_ERROR(
      FinishSelection(*library_, options_, std::move(ordered), &selection));
  return selection;
}

}  // namespace skilldb::policy
