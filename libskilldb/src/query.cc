// BM25 queries as of a version.
//
// The statistics of version V come from storage, not from the index: N and
// the total length from V's commit record, each term's document frequency
// from the dfs history (one seek). The index itself holds every document of
// every retained version; the searcher keeps those live at V. Together this
// makes a query as of V score exactly as a fresh index of V's skills would.
#include <algorithm>
#include <atomic>
#include <thread>

#include "library_impl.h"
#include "skilldb/util/parallel.h"
#include "usage_store.h"

namespace skilldb::internal {

Result<uint64_t> LibraryImpl::DocFreq(const ReadState& state,
                                      std::unique_ptr<rocksdb::Iterator>* it,
                                      std::string_view term,
                                      Version version) const {
  // The head's cache is keyed by term, the past versions' by term and
  // version (their df-history key).
  const bool at_head = version == state.head;
  const DfCache& cache = at_head ? state.head_dfs : state.past_dfs;
  const std::string key = at_head ? std::string(term) : DfKey(term, version);
  uint64_t df = 0;
  if (cache.Lookup(key, &df)) return df;
  if (*it == nullptr) *it = storage_->NewIterator(kDfs, state.snap());
  SKILLDB_ASSIGN_OR_RETURN(df, ReadDocFreq(it->get(), term, version));
  cache.Insert(key, df);
  return df;
}

Result<uint64_t> LibraryImpl::ReadDocFreq(rocksdb::Iterator* it,
                                          std::string_view term,
                                          Version version,
                                          bool ascending) const {
  const std::string key = DfKey(term, version);
  // The iterator stands at the first entry at or after the previous key;
  // every entry before it is below that key, hence below this one, so the
  // first entry at or after this key is here or a few steps on.
  constexpr int kMaxSteps = 16;
  bool positioned = false;
  if (ascending && it->Valid()) {
    for (int step = 0; step < kMaxSteps && it->Valid(); ++step) {
      if (it->key().compare(rocksdb::Slice(key)) >= 0) {
        positioned = true;
        break;
      }
      it->Next();
    }
    // Walked off the end (status ok): no entry at or after the key.
    if (!it->Valid() && it->status().ok()) positioned = true;
  }
  if (!positioned) it->Seek(key);
  if (!it->Valid()) {
    SKILLDB_RETURN_IF_ERROR(FromRocks(it->status(), "reading a df"));
    return uint64_t{0};
  }
  const size_t prefix = term.size() + 1;
  const rocksdb::Slice found = it->key();
  if (found.size() != prefix + 8 || std::string_view(found.data(), prefix) !=
                                        std::string_view(key.data(), prefix)) {
    return uint64_t{0};
  }
  uint64_t df = 0;
  if (!ParseVarint64(std::string_view(it->value().data(), it->value().size()),
                     &df)) {
    return Status::Corruption("malformed df entry");
  }
  return df;
}

namespace {

std::vector<std::string> QueryFilters(const QueryOptions& options) {
  std::vector<std::string> filters;
  for (const auto& t : options.tags)
    filters.push_back(retrieval::FilterTerm("tag", t));
  for (const auto& o : options.ops)
    filters.push_back(retrieval::FilterTerm("op", o));
  for (const auto& a : options.arch)
    filters.push_back(retrieval::FilterTerm("arch", a));
  if (options.language) {
    filters.push_back(
        retrieval::FilterTerm("lang", LanguageName(*options.language)));
  }
  if (!options.all_statuses) {
    filters.push_back(
        options.status
            ? retrieval::FilterTerm("status", SkillStatusName(*options.status))
            : retrieval::FilterTerm("visible", "1"));
  }
  std::sort(filters.begin(), filters.end());
  filters.erase(std::unique(filters.begin(), filters.end()), filters.end());
  return filters;
}

}  // namespace

Result<std::shared_ptr<const VersionStats>> LibraryImpl::StatsAt(
    const ReadState& state, Version version) const {
  std::shared_ptr<const VersionStats> stats;
  if (state.stats.Lookup(version, &stats)) return stats;
  CommitInfo commit;
  if (version == state.head) {
    commit = state.head_commit;
  } else {
    SKILLDB_ASSIGN_OR_RETURN(commit, ReadCommit(state, version));
  }
  auto made = std::make_shared<VersionStats>();
  made->num_skills = commit.num_skills;
  if (commit.num_skills > 0 && commit.total_length > 0) {
    made->bm25.emplace(bm25_params_,
                       static_cast<double>(commit.total_length) /
                           static_cast<double>(commit.num_skills));
  }
  state.stats.Insert(version, made);
  return std::shared_ptr<const VersionStats>(std::move(made));
}

Result<QueryResult> LibraryImpl::QueryState(const ReadState& state,
                                            const QueryOptions& options,
                                            std::string_view text) const {
  SKILLDB_ASSIGN_OR_RETURN(Version version,
                           ResolveVersion(state, options.as_of));
  if (options.k > kMaxQueryK) {
    return Status::InvalidArgument("k must be at most " +
                                   std::to_string(kMaxQueryK) + ", got " +
                                   std::to_string(options.k));
  }
  QueryResult result;
  result.version = version;
  if (options.k == 0 || version == 0) return result;

  SKILLDB_ASSIGN_OR_RETURN(const std::shared_ptr<const VersionStats> stats,
                           StatsAt(state, version));
  if (!stats->bm25) return result;

  std::vector<std::string> terms = analyzer_->Terms(text);
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());

  retrieval::SearchRequest request;
  request.as_of = version;
  request.k = options.k;
  request.algorithm =
      options.exhaustive       ? retrieval::SearchAlgorithm::kExhaustive
      : options.block_max_wand ? retrieval::SearchAlgorithm::kBlockMaxWand
                               : retrieval::SearchAlgorithm::kBlockMaxMaxScore;
  request.filter_terms = QueryFilters(options);
  std::unique_ptr<rocksdb::Iterator> df_it;  // made on the first cache miss
  for (std::string& term : terms) {
    SKILLDB_ASSIGN_OR_RETURN(const uint64_t df,
                             DocFreq(state, &df_it, term, version));
    if (df == 0) continue;
    const double idf = retrieval::Bm25::Idf(stats->num_skills, df);
    request.terms.push_back({std::move(term), idf});
  }
  if (request.terms.empty()) return result;

  const retrieval::Bm25& bm25 = *stats->bm25;

  std::vector<std::unique_ptr<StoragePostingSource>> sources;
  std::vector<retrieval::SegmentInput> inputs;
  for (const auto& segment : state.segments) {
    SKILLDB_ASSIGN_OR_RETURN(const retrieval::SegmentDocs* docs,
                             segment->Docs(*storage_));
    sources.push_back(std::make_unique<StoragePostingSource>(
        *storage_, posting_cache_.get(), segment->meta().id, state.snap()));
    inputs.push_back({docs, sources.back().get()});
  }
  SKILLDB_ASSIGN_OR_RETURN(auto scored,
                           retrieval::Search(request, bm25, inputs));
  result.hits.reserve(scored.size());
  for (const retrieval::ScoredDoc& doc : scored) {
    Hit hit;
    hit.id.assign(doc.id);
    hit.score = doc.score;
    result.hits.push_back(std::move(hit));
  }
  SKILLDB_RETURN_IF_ERROR(FillHits(state, version, options.fields, &result));
  return result;
}

Status LibraryImpl::FillHits(const ReadState& state, Version version,
                             HitFields fields, QueryResult* result) const {
  for (Hit& hit : result->hits) hit.fields = fields;
  if (fields.needs_record()) {
    for (Hit& hit : result->hits) {
      SKILLDB_ASSIGN_OR_RETURN(auto rev, ReadRevision(state, hit.id, version));
      if (!rev || rev->kind != RevisionKind::kPut) {
        return Status::Corruption("hit '" + hit.id + "' has no live revision");
      }
      SKILLDB_ASSIGN_OR_RETURN(Skill skill, ParseSkillJson(rev->skill_json));
      hit.revision = rev->version;
      if (fields.has(HitField::kTitle)) hit.title = std::move(skill.title);
      if (fields.has(HitField::kSummary))
        hit.summary = std::move(skill.summary);
      if (fields.has(HitField::kBody)) hit.body = std::move(skill.body);
      if (fields.has(HitField::kCode)) hit.code = std::move(skill.code);
      if (fields.has(HitField::kTags)) hit.tags = std::move(skill.tags);
      if (fields.has(HitField::kOps)) hit.ops = std::move(skill.ops);
      if (fields.has(HitField::kArch)) hit.arch = std::move(skill.arch);
      if (fields.has(HitField::kLanguage)) hit.language = skill.language;
      if (fields.has(HitField::kStatus)) hit.status = skill.status;
    }
  }
  if (fields.has(HitField::kUsage) && !result->hits.empty()) {
    std::vector<std::string> ids;
    ids.reserve(result->hits.size());
    for (const Hit& hit : result->hits) ids.push_back(hit.id);
    SKILLDB_ASSIGN_OR_RETURN(std::vector<UsageCounters> usage, usage_->Of(ids));
    for (size_t i = 0; i < ids.size(); ++i) {
      result->hits[i].usage = usage[i];
    }
  }
  return Status::Ok();
}

Result<QueryResult> LibraryImpl::Query(const QueryOptions& options,
                                       std::string_view text) {
  auto s = state();
  SKILLDB_ASSIGN_OR_RETURN(QueryResult result, QueryState(*s, options, text));
  if (options.record_retrieved) {
    SKILLDB_RETURN_IF_ERROR(RecordRetrieved({&result, 1}));
  }
  return result;
}

Status LibraryImpl::RecordRetrieved(std::span<const QueryResult> results) {
  std::vector<UsageRecord> records;
  for (const QueryResult& r : results) {
    for (const Hit& hit : r.hits) {
      records.push_back({hit.id, UsageEvent::kRetrieved, 1});
    }
  }
  if (records.empty()) return Status::Ok();
  return RecordUsage(records).WithContext("recording retrieved hits");
}

Result<std::vector<QueryResult>> LibraryImpl::QueryBatch(
    const QueryOptions& options, const std::vector<std::string>& texts,
    int threads) {
  auto s = state();
  // Pin the version once so every query of the batch answers as of it.
  QueryOptions pinned = options;
  SKILLDB_ASSIGN_OR_RETURN(Version version, ResolveVersion(*s, options.as_of));
  pinned.as_of = version;
  std::vector<std::optional<Result<QueryResult>>> results(texts.size());
  int n =
      threads > 0
          ? threads
          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  n = std::min<int>(n, static_cast<int>(texts.size()));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < texts.size(); i = next++) {
      results[i].emplace(QueryState(*s, pinned, texts[i]));
    }
  };
  util::RunOnThreads(static_cast<size_t>(std::max(n, 1)), work);
  std::vector<QueryResult> out;
  out.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    if (!results[i]->ok()) {
      return results[i]->status().WithContext("query " + std::to_string(i + 1));
    }
    out.push_back(std::move(*results[i]).value());
  }
  if (options.record_retrieved) SKILLDB_RETURN_IF_ERROR(RecordRetrieved(out));
  return out;
}

Result<SkillCounts> LibraryImpl::CountsAt(const ReadState& state,
                                          Version version) const {
  SkillCounts counts;
  if (version == 0) return counts;
  std::optional<SkillCounts> stored = state.head_counts;
  if (version != state.head) {
    SKILLDB_RETURN_IF_ERROR(ReadCommit(state, version, &stored).status());
  }
  if (stored) return *stored;
  // A commit record from before the counts were kept.
  return CountsByScan(state, version);
}

Result<SkillCounts> LibraryImpl::CountsByScan(const ReadState& state,
                                              Version version) const {
  SkillCounts counts;
  Status counting = Status::Ok();
  SKILLDB_RETURN_IF_ERROR(ScanAt(state, version, [&](const Skill& skill) {
    counting = CountSkill(skill, +1, &counts);
    return counting.ok();
  }));
  SKILLDB_RETURN_IF_ERROR(counting);
  return counts;
}

}  // namespace skilldb::internal
