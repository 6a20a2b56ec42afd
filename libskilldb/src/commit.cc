// The write path: one call, one version, one atomic batch.
//
// A commit at head H builds version V = H + 1:
//   revisions   a new revision (put or tombstone) per changed id, keyed at V
//   changes     one entry per changed id
//   segment(s)  the new revisions' documents: doc table + posting lists
//   ends        the replaced or deleted documents' end version (V)
//   dfs         for every term whose live document frequency changed, its
//               new value at V (so df as of any version is one seek)
//   commits     the commit record with N and the total length at V
//   meta        head = V, counters, manifest
// Everything goes into one WriteBatch written with a synced WAL, so a commit
// is all or nothing. A commit too large for one batch writes revisions,
// changes and segments in staged batches first: staged keys are invisible
// (their version is above the head and their segments are not in the
// manifest) until the final batch lands, and RecoverStaging removes them if
// it never does.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <thread>
#include <unordered_map>

#include "analysis.h"
#include "batch_writer.h"
#include "dedup.h"
#include "library_impl.h"
#include "records.h"

namespace skilldb::internal {
namespace {

using retrieval::DocInput;
using retrieval::FilterTerm;
using retrieval::SegmentBuilder;

// A segment builder above this footprint is cut into a segment of its own.
constexpr size_t kMaxBuilderBytes = size_t{1} << 30;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string DefaultAuthor() {
  const char* user = std::getenv("USER");
  return user != nullptr && *user != '\0' ? user : "unknown";
}

// A put's skill-only work, done ahead of indexing (see CommitLocked).
struct PreparedPut {
  uint32_t length = 0;
  std::vector<std::pair<std::string, uint32_t>> term_freqs;
  std::vector<std::string> filter_terms;
  std::string revision;  // the encoded revision record
};

constexpr size_t kPrepareChunk = 1024;

// Produces items 0 .. n-1 in order, computed by `fill` in chunks of `chunk`:
// while the caller consumes chunk c, a helper thread fills chunk c + 1.
// Small inputs (one chunk) are filled inline. `fill` must be safe to run
// concurrently with the consumer (it only reads shared state). The helper is
// joined before the next chunk is handed out and on destruction, so an early
// return by the consumer is safe.
template <typename T>
class ChunkPipeline {
 public:
  ChunkPipeline(size_t n, size_t chunk, std::function<void(size_t, T*)> fill)
      : n_(n), chunk_(chunk), fill_(std::move(fill)) {
    Fill(0, &current_);
    if (n_ > chunk_) Start(chunk_);
  }
  ~ChunkPipeline() {
    if (helper_.joinable()) helper_.join();
  }
  ChunkPipeline(const ChunkPipeline&) = delete;
  ChunkPipeline& operator=(const ChunkPipeline&) = delete;

  // REQUIRES: called at most n times.
  T& Next() {
    if (pos_ == current_.size()) {
      helper_.join();
      std::swap(current_, ahead_);
      base_ += chunk_;
      pos_ = 0;
      if (base_ + chunk_ < n_) Start(base_ + chunk_);
    }
    return current_[pos_++];
  }

 private:
  void Fill(size_t begin, std::vector<T>* out) {
    const size_t end = std::min(n_, begin + chunk_);
    out->clear();
    out->resize(end - begin);
    for (size_t i = begin; i < end; ++i) fill_(i, &(*out)[i - begin]);
  }
  void Start(size_t begin) {
    helper_ = std::thread([this, begin] { Fill(begin, &ahead_); });
  }

  size_t n_;
  size_t chunk_;
  std::function<void(size_t, T*)> fill_;
  std::vector<T> current_, ahead_;
  size_t base_ = 0;  // index of current_[0]
  size_t pos_ = 0;
  std::thread helper_;
};

// Filter terms of a skill: what QueryOptions filters can ask for.
std::vector<std::string> FilterTerms(const Skill& skill) {
  std::vector<std::string> terms;
  for (const auto& tag : skill.tags) terms.push_back(FilterTerm("tag", tag));
  for (const auto& op : skill.ops) terms.push_back(FilterTerm("op", op));
  for (const auto& arch : skill.arch) terms.push_back(FilterTerm("arch", arch));
  terms.push_back(FilterTerm("lang", LanguageName(skill.language)));
  terms.push_back(FilterTerm("status", SkillStatusName(skill.status)));
  if (skill.status == SkillStatus::kActive ||
      skill.status == SkillStatus::kCandidate) {
    terms.push_back(FilterTerm("visible", "1"));
  }
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
  return terms;
}

// A document the commit ends (its skill is replaced or deleted).
struct Ended {
  uint32_t docid;
  std::string skill_json;  // the ended revision, to take its terms out
};

}  // namespace

Result<Version> LibraryImpl::Put(const Skill& skill,
                                 const CommitOptions& options) {
  CommitOptions o = options;
  if (o.kind.empty()) o.kind = "put";
  return Commit({skill}, {}, o);
}

Result<Version> LibraryImpl::PutMany(const std::vector<Skill>& skills,
                                     const CommitOptions& options) {
  CommitOptions o = options;
  if (o.kind.empty()) o.kind = "import";
  return Commit(skills, {}, o);
}

Result<Version> LibraryImpl::Delete(std::string_view id,
                                    const CommitOptions& options) {
  CommitOptions o = options;
  if (o.kind.empty()) o.kind = "delete";
  return Commit({}, {std::string(id)}, o);
}

Result<Version> LibraryImpl::Commit(const std::vector<Skill>& puts,
                                    const std::vector<std::string>& deletes,
                                    const CommitOptions& options) {
  if (storage_->read_only()) {
    return Status::FailedPrecondition("library is open read-only");
  }
  if (puts.empty() && deletes.empty()) {
    return Status::InvalidArgument("nothing to commit");
  }
  std::set<std::string_view> ids;
  for (size_t i = 0; i < puts.size(); ++i) {
    SKILLDB_RETURN_IF_ERROR(ValidateSkill(puts[i]).WithContext(
        "skill " + std::to_string(i + 1) + " ('" + puts[i].id.substr(0, 64) +
        "')"));
    if (!ids.insert(puts[i].id).second) {
      return Status::InvalidArgument("skill id '" + puts[i].id +
                                     "' appears more than once");
    }
  }
  for (const std::string& id : deletes) {
    SKILLDB_RETURN_IF_ERROR(ValidateSkillId(id));
    if (!ids.insert(id).second) {
      return Status::InvalidArgument("skill id '" + id +
                                     "' appears more than once");
    }
  }

  std::lock_guard<std::mutex> write_lock(write_mu_);
  return CommitLocked(puts, deletes, options, nullptr);
}

Result<Version> LibraryImpl::CommitLocked(
    const std::vector<Skill>& all_puts, const std::vector<std::string>& deletes,
    const CommitOptions& options, const ExtraWrites& extra) {
  auto head_state = state();
  const Version head = head_state->head;
  const Version version = head + 1;
  if (options.expected_head && *options.expected_head != head) {
    return Status::Aborted("the library moved from version " +
                           std::to_string(*options.expected_head) + " to " +
                           std::to_string(head));
  }
  if (options.precondition) SKILLDB_RETURN_IF_ERROR(options.precondition(head));

  // Previous live revisions: puts over them are updates, deletes need them.
  // A put identical to the live revision changes nothing and is left out
  // (re-importing a library makes no new revisions); a plain commit in
  // which nothing changes writes nothing and returns the head.
  std::vector<Ended> ended;
  std::vector<ChangeKind> put_kinds;
  std::vector<Skill> changed_puts;
  std::vector<bool> unchanged(all_puts.size(), false);
  size_t num_unchanged = 0;
  for (size_t i = 0; i < all_puts.size(); ++i) {
    SKILLDB_ASSIGN_OR_RETURN(auto prev,
                             ReadRevision(*head_state, all_puts[i].id, head));
    if (prev && prev->kind == RevisionKind::kPut) {
      if (!extra && prev->skill_json == SkillToJson(all_puts[i])) {
        unchanged[i] = true;
        ++num_unchanged;
        continue;
      }
      ended.push_back({prev->docid, std::move(prev->skill_json)});
    }
    put_kinds.push_back(prev && prev->kind == RevisionKind::kPut
                            ? ChangeKind::kUpdated
                            : ChangeKind::kAdded);
  }
  if (num_unchanged > 0) {
    changed_puts.reserve(all_puts.size() - num_unchanged);
    for (size_t i = 0; i < all_puts.size(); ++i) {
      if (!unchanged[i]) changed_puts.push_back(all_puts[i]);
    }
  }
  const std::vector<Skill>& puts = num_unchanged > 0 ? changed_puts : all_puts;
  if (puts.empty() && deletes.empty() && !extra) return head;
  for (const std::string& id : deletes) {
    SKILLDB_ASSIGN_OR_RETURN(auto prev, ReadRevision(*head_state, id, head));
    if (!prev || prev->kind != RevisionKind::kPut) {
      return Status::NotFound("skill '" + id + "' does not exist at version " +
                              std::to_string(head));
    }
    ended.push_back({prev->docid, std::move(prev->skill_json)});
  }

  BatchWriter writer(*storage_, options_, version);
  size_t approx_bytes = 0;
  for (const Skill& skill : puts) {
    approx_bytes += 64 + skill.title.size() + skill.summary.size() +
                    skill.body.size() + skill.code.size();
  }
  // Big enough to stage: load the bulk as table files, not through the log.
  if (approx_bytes > options_.stage_bytes)
    SKILLDB_RETURN_IF_ERROR(writer.StartBulk());
  uint32_t next_docid = next_docid_;
  uint32_t next_segment = next_segment_;
  std::vector<std::shared_ptr<Segment>> new_segments;
  // (term, change in live document frequency); aggregated at the end.
  std::vector<std::pair<std::string, int64_t>> df_delta;
  int64_t total_length =
      static_cast<int64_t>(head_state->head_commit.total_length);
  int64_t num_skills = static_cast<int64_t>(head_state->head_commit.num_skills);

  SegmentBuilder builder;
  auto cut_segment = [&]() -> Status {
    if (builder.empty()) return Status::Ok();
    const SegmentMeta meta{next_segment++, builder.base(),
                           static_cast<uint32_t>(builder.num_docs())};
    std::string table = builder.EncodeDocTable();
    SKILLDB_ASSIGN_OR_RETURN(auto docs, retrieval::SegmentDocs::Decode(table));
    writer.Put(kDocTables, Be32(meta.id), table);
    builder.EmitPostingLists(
        [&](std::string_view term, std::string list, uint32_t num_docs) {
          writer.Put(kPostings, PostingKey(meta.id, term), list);
          if (term.empty() || term[0] != retrieval::kFilterTermPrefix) {
            df_delta.emplace_back(std::string(term), num_docs);
          }
        });
    new_segments.push_back(std::make_shared<Segment>(meta, std::move(docs)));
    builder = SegmentBuilder();
    return writer.MaybeStage();
  };

  // What each put needs that depends on the skill alone (analysis, filter
  // terms, the encoded revision) is prepared a chunk ahead on a second thread
  // while this one indexes and writes the previous chunk, in put order, so
  // the result is the same as preparing it inline.
  const uint32_t first_docid = next_docid;
  ChunkPipeline<PreparedPut> prepared(
      puts.size(), kPrepareChunk, [&](size_t i, PreparedPut* out) {
        const Skill& skill = puts[i];
        out->length =
            AnalyzeSkill(*analyzer_, field_weights_, skill, &out->term_freqs);
        out->filter_terms = FilterTerms(skill);
        out->revision = EncodeRevision(RevisionKind::kPut,
                                       first_docid + static_cast<uint32_t>(i),
                                       SkillToJson(skill));
      });
  for (size_t i = 0; i < puts.size(); ++i) {
    const Skill& skill = puts[i];
    PreparedPut& put = prepared.Next();
    const uint32_t docid = next_docid++;
    total_length += put.length;
    if (put_kinds[i] == ChangeKind::kAdded) ++num_skills;
    DocInput doc;
    doc.docid = docid;
    doc.start = version;
    doc.id = skill.id;
    doc.length = put.length;
    doc.term_freqs = std::move(put.term_freqs);
    doc.filter_terms = std::move(put.filter_terms);
    builder.Add(std::move(doc));
    writer.Put(kRevisions, RevisionKey(skill.id, version), put.revision);
    writer.Put(kChanges, ChangeKey(version, skill.id),
               std::string(1, EncodeChangeKind(put_kinds[i])));
    if (builder.memory_bytes() > kMaxBuilderBytes) {
      SKILLDB_RETURN_IF_ERROR(cut_segment());
    } else {
      SKILLDB_RETURN_IF_ERROR(writer.MaybeStage());
    }
  }
  SKILLDB_RETURN_IF_ERROR(cut_segment());
  std::vector<std::pair<std::string, uint32_t>> freqs;
  for (const std::string& id : deletes) {
    writer.Put(kRevisions, RevisionKey(id, version),
               EncodeRevision(RevisionKind::kDelete, 0, ""));
    writer.Put(kChanges, ChangeKey(version, id),
               std::string(1, EncodeChangeKind(ChangeKind::kDeleted)));
    --num_skills;
  }

  // Ended documents leave the statistics: re-analyze their stored text.
  for (const Ended& e : ended) {
    SKILLDB_ASSIGN_OR_RETURN(Skill old, ParseSkillJson(e.skill_json));
    total_length -= AnalyzeSkill(*analyzer_, field_weights_, old, &freqs);
    for (auto& [term, tf] : freqs) df_delta.emplace_back(std::move(term), -1);
    writer.Put(kEnds, Be32(e.docid), Be64(version));
    writer.Delete(kHashes, ContentHash(old) + old.id);
  }
  for (const Skill& skill : puts) {
    writer.Put(kHashes, ContentHash(skill) + skill.id, "");
  }

  // New document frequencies at this version, for the terms that moved, in
  // term order (so the df lookups walk the history forwards).
  std::sort(df_delta.begin(), df_delta.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  auto df_it = storage_->NewIterator(kDfs, head_state->snap());
  for (size_t i = 0; i < df_delta.size();) {
    const std::string& term = df_delta[i].first;
    int64_t delta = 0;
    for (; i < df_delta.size() && df_delta[i].first == term; ++i) {
      delta += df_delta[i].second;
    }
    if (delta == 0) continue;
    uint64_t df = 0;
    if (head > 0) {
      SKILLDB_ASSIGN_OR_RETURN(
          df, ReadDocFreq(df_it.get(), term, head, /*ascending=*/true));
    }
    const int64_t updated = static_cast<int64_t>(df) + delta;
    if (updated < 0) {
      return Status::Corruption("document frequency of a term went negative");
    }
    writer.Put(kDfs, DfKey(term, version),
               Varint64(static_cast<uint64_t>(updated)));
  }

  CommitInfo commit;
  commit.version = version;
  commit.time_ms = NowMs();
  commit.kind = options.kind.empty() ? "commit" : options.kind;
  commit.message = options.message;
  commit.author = options.author.empty() ? DefaultAuthor() : options.author;
  for (ChangeKind k : put_kinds) {
    (k == ChangeKind::kAdded ? commit.added : commit.updated) += 1;
  }
  commit.deleted = deletes.size();
  commit.num_skills = static_cast<uint64_t>(num_skills);
  commit.total_length = static_cast<uint64_t>(total_length);
  writer.Put(kCommits, Be64(version), EncodeCommit(commit));

  std::vector<SegmentMeta> manifest;
  for (const auto& seg : head_state->segments) manifest.push_back(seg->meta());
  for (const auto& seg : new_segments) manifest.push_back(seg->meta());
  writer.Put(kMeta, kManifestKey, EncodeManifest(manifest));
  writer.Put(kMeta, kHeadKey, Be64(version));
  writer.Put(kMeta, kNextDocidKey, Be32(next_docid));
  writer.Put(kMeta, kNextSegmentKey, Be32(next_segment));
  if (extra) SKILLDB_RETURN_IF_ERROR(extra(writer, version));
  SKILLDB_RETURN_IF_ERROR(writer.Finish(options_.sync_commits));

  // Durable: now make it visible in memory.
  next_docid_ = next_docid;
  next_segment_ = next_segment;
  for (const Ended& e : ended) {
    for (const auto& seg : head_state->segments) {
      const SegmentMeta& m = seg->meta();
      if (e.docid >= m.base && e.docid < m.base + m.count) {
        seg->ApplyEnd(e.docid, version);
        break;
      }
    }
  }
  auto next = std::make_shared<ReadState>();
  next->head = version;
  next->oldest = head_state->oldest;
  next->head_commit = commit;
  next->snapshot = storage_->NewSnapshot();
  next->segments = head_state->segments;
  next->segments.insert(next->segments.end(), new_segments.begin(),
                        new_segments.end());
  Publish(std::move(next));

  // The commit stands even if a merge fails (it leaves no trace: a merge is
  // one batch of its own); the policy retries on the next commit.
  const Status merged = MaybeMerge();
  (void)merged;
  return version;
}

}  // namespace skilldb::internal
