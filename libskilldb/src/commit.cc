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

// One commit at head H building version V = H + 1, in its phases:
// previous revisions (what the puts replace, what the deletes end), the
// segment build (the puts' revisions, changes and documents), the ended
// documents (deletes, statistics, content hashes), the df deltas, the commit
// record with the manifest; CommitLocked then writes, and publishes.
class LibraryImpl::CommitBuild {
 public:
  CommitBuild(LibraryImpl& lib, std::shared_ptr<const ReadState> head_state)
      : lib_(lib),
        head_state_(std::move(head_state)),
        head_(head_state_->head),
        version_(head_ + 1),
        writer_(*lib.storage_, lib.options_, version_),
        next_docid_(lib.next_docid_),
        next_segment_(lib.next_segment_),
        total_length_(
            static_cast<int64_t>(head_state_->head_commit.total_length)),
        num_skills_(static_cast<int64_t>(head_state_->head_commit.num_skills)),
        counts_(head_ == 0 ? std::optional<SkillCounts>(SkillCounts{})
                           : head_state_->head_counts) {}

  Version version() const { return version_; }
  BatchWriter& writer() { return writer_; }

  // Previous live revisions: puts over them are updates, deletes need them.
  // A put identical to the live revision changes nothing and is left out
  // (re-importing a library makes no new revisions) unless `keep_unchanged`
  // (a commit with extra writes of its own). Sets *nothing_changes when no
  // put is left and nothing is deleted.
  Status ReadPrevious(const std::vector<Skill>& all_puts,
                      const std::vector<std::string>& deletes,
                      bool keep_unchanged, bool* nothing_changes) {
    // A head written before the counts were kept: count it once, and keep
    // the counts from this commit on.
    if (!counts_) {
      SKILLDB_ASSIGN_OR_RETURN(counts_, lib_.CountsAt(*head_state_, head_));
    }
    std::vector<bool> unchanged(all_puts.size(), false);
    size_t num_unchanged = 0;
    for (size_t i = 0; i < all_puts.size(); ++i) {
      SKILLDB_ASSIGN_OR_RETURN(
          auto prev, lib_.ReadRevision(*head_state_, all_puts[i].id, head_));
      const bool live = prev && prev->kind == RevisionKind::kPut;
      if (live) {
        if (!keep_unchanged && prev->skill_json == SkillToJson(all_puts[i])) {
          unchanged[i] = true;
          ++num_unchanged;
          continue;
        }
        ended_.push_back({prev->docid, std::move(prev->skill_json)});
      }
      put_kinds_.push_back(live ? ChangeKind::kUpdated : ChangeKind::kAdded);
    }
    if (num_unchanged > 0) {
      changed_puts_.reserve(all_puts.size() - num_unchanged);
      for (size_t i = 0; i < all_puts.size(); ++i) {
        if (!unchanged[i]) changed_puts_.push_back(all_puts[i]);
      }
    }
    puts_ = num_unchanged > 0 ? &changed_puts_ : &all_puts;
    *nothing_changes = puts_->empty() && deletes.empty();
    if (*nothing_changes) return Status::Ok();
    for (const std::string& id : deletes) {
      SKILLDB_ASSIGN_OR_RETURN(auto prev,
                               lib_.ReadRevision(*head_state_, id, head_));
      if (!prev || prev->kind != RevisionKind::kPut) {
        return Status::NotFound("skill '" + id +
                                "' does not exist at version " +
                                std::to_string(head_));
      }
      ended_.push_back({prev->docid, std::move(prev->skill_json)});
    }
    return Status::Ok();
  }

  // The puts' revisions, changes and documents, cut into segments. A commit
  // big enough to stage loads its bulk as table files, not through the log.
  // What each put needs that depends on the skill alone (analysis, filter
  // terms, the encoded revision) is prepared a chunk ahead on a second
  // thread while this one indexes and writes the previous chunk, in put
  // order, so the result is the same as preparing it inline.
  Status BuildSegments() {
    const std::vector<Skill>& puts = *puts_;
    size_t approx_bytes = 0;
    for (const Skill& skill : puts) {
      approx_bytes += 64 + skill.title.size() + skill.summary.size() +
                      skill.body.size() + skill.code.size();
    }
    if (approx_bytes > lib_.options_.stage_bytes) {
      SKILLDB_RETURN_IF_ERROR(writer_.StartBulk());
    }
    const uint32_t first_docid = next_docid_;
    ChunkPipeline<PreparedPut> prepared(
        puts.size(), kPrepareChunk, [&](size_t i, PreparedPut* out) {
          const Skill& skill = puts[i];
          out->length = AnalyzeSkill(*lib_.analyzer_, lib_.field_weights_,
                                     skill, &out->term_freqs);
          out->filter_terms = FilterTerms(skill);
          out->revision = EncodeRevision(
              RevisionKind::kPut, first_docid + static_cast<uint32_t>(i),
              SkillToJson(skill));
        });
    for (size_t i = 0; i < puts.size(); ++i) {
      const Skill& skill = puts[i];
      PreparedPut& put = prepared.Next();
      total_length_ += put.length;
      if (put_kinds_[i] == ChangeKind::kAdded) ++num_skills_;
      SKILLDB_RETURN_IF_ERROR(CountSkill(skill, +1, &*counts_));
      DocInput doc;
      doc.docid = next_docid_++;
      doc.start = version_;
      doc.id = skill.id;
      doc.length = put.length;
      doc.term_freqs = std::move(put.term_freqs);
      doc.filter_terms = std::move(put.filter_terms);
      builder_.Add(std::move(doc));
      writer_.Put(kRevisions, RevisionKey(skill.id, version_), put.revision);
      writer_.Put(kChanges, ChangeKey(version_, skill.id),
                  std::string(1, EncodeChangeKind(put_kinds_[i])));
      if (builder_.memory_bytes() > kMaxBuilderBytes) {
        SKILLDB_RETURN_IF_ERROR(CutSegment());
      } else {
        SKILLDB_RETURN_IF_ERROR(writer_.MaybeStage());
      }
    }
    return CutSegment();
  }

  // The deletes' tombstones; the ended documents leave the statistics (their
  // stored text is analyzed again) and the content hashes.
  Status EndDocuments(const std::vector<std::string>& deletes) {
    for (const std::string& id : deletes) {
      writer_.Put(kRevisions, RevisionKey(id, version_),
                  EncodeRevision(RevisionKind::kDelete, 0, ""));
      writer_.Put(kChanges, ChangeKey(version_, id),
                  std::string(1, EncodeChangeKind(ChangeKind::kDeleted)));
      --num_skills_;
    }
    std::vector<std::pair<std::string, uint32_t>> freqs;
    for (const Ended& e : ended_) {
      SKILLDB_ASSIGN_OR_RETURN(Skill old, ParseSkillJson(e.skill_json));
      total_length_ -=
          AnalyzeSkill(*lib_.analyzer_, lib_.field_weights_, old, &freqs);
      SKILLDB_RETURN_IF_ERROR(CountSkill(old, -1, &*counts_));
      for (auto& [term, tf] : freqs) df_delta_.emplace_back(std::move(term), -1);
      writer_.Put(kEnds, Be32(e.docid), Be64(version_));
      writer_.Delete(kHashes, ContentHash(old) + old.id);
    }
    for (const Skill& skill : *puts_) {
      writer_.Put(kHashes, ContentHash(skill) + skill.id, "");
    }
    return Status::Ok();
  }

  // New document frequencies at this version, for the terms that moved, in
  // term order (so the df lookups walk the history forwards).
  Status WriteDocFreqs() {
    std::sort(df_delta_.begin(), df_delta_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    auto df_it = lib_.storage_->NewIterator(kDfs, head_state_->snap());
    for (size_t i = 0; i < df_delta_.size();) {
      const std::string& term = df_delta_[i].first;
      int64_t delta = 0;
      for (; i < df_delta_.size() && df_delta_[i].first == term; ++i) {
        delta += df_delta_[i].second;
      }
      if (delta == 0) continue;
      uint64_t df = 0;
      if (head_ > 0) {
        SKILLDB_ASSIGN_OR_RETURN(df, lib_.ReadDocFreq(df_it.get(), term, head_,
                                                      /*ascending=*/true));
      }
      const int64_t updated = static_cast<int64_t>(df) + delta;
      if (updated < 0) {
        return Status::Corruption("document frequency of a term went negative");
      }
      writer_.Put(kDfs, DfKey(term, version_),
                  Varint64(static_cast<uint64_t>(updated)));
    }
    return Status::Ok();
  }

  // The commit record, the manifest with the new segments, the head and the
  // writer's counters.
  const CommitInfo& WriteCommitRecord(const CommitOptions& options,
                                      size_t num_deleted) {
    commit_.version = version_;
    commit_.time_ms = NowMs();
    commit_.kind = options.kind.empty() ? "commit" : options.kind;
    commit_.message = options.message;
    commit_.author = options.author.empty() ? DefaultAuthor() : options.author;
    for (ChangeKind k : put_kinds_) {
      (k == ChangeKind::kAdded ? commit_.added : commit_.updated) += 1;
    }
    commit_.deleted = num_deleted;
    commit_.num_skills = static_cast<uint64_t>(num_skills_);
    commit_.total_length = static_cast<uint64_t>(total_length_);
    writer_.Put(kCommits, Be64(version_), EncodeCommit(commit_, counts_));
    std::vector<SegmentMeta> manifest;
    for (const auto& seg : head_state_->segments) {
      manifest.push_back(seg->meta());
    }
    for (const auto& seg : new_segments_) manifest.push_back(seg->meta());
    writer_.Put(kMeta, kManifestKey, EncodeManifest(manifest));
    writer_.Put(kMeta, kHeadKey, Be64(version_));
    writer_.Put(kMeta, kNextDocidKey, Be32(next_docid_));
    writer_.Put(kMeta, kNextSegmentKey, Be32(next_segment_));
    return commit_;
  }

  // Once the batch is durable: the writer's counters, the ended documents'
  // end versions and a read state with the new segments.
  void Publish() {
    lib_.next_docid_ = next_docid_;
    lib_.next_segment_ = next_segment_;
    for (const Ended& e : ended_) {
      for (const auto& seg : head_state_->segments) {
        const SegmentMeta& m = seg->meta();
        if (e.docid >= m.base && e.docid < m.base + m.count) {
          seg->ApplyEnd(e.docid, version_);
          break;
        }
      }
    }
    auto next = std::make_shared<ReadState>();
    next->head = version_;
    next->oldest = head_state_->oldest;
    next->head_commit = commit_;
    next->head_counts = counts_;
    next->snapshot = lib_.storage_->NewSnapshot();
    next->segments = head_state_->segments;
    next->segments.insert(next->segments.end(), new_segments_.begin(),
                          new_segments_.end());
    lib_.Publish(std::move(next));
  }

 private:
  // Closes the segment being built: its doc table and posting lists, and
  // the df deltas of its (non-filter) terms.
  Status CutSegment() {
    if (builder_.empty()) return Status::Ok();
    const SegmentMeta meta{next_segment_++, builder_.base(),
                           static_cast<uint32_t>(builder_.num_docs())};
    std::string table = builder_.EncodeDocTable();
    SKILLDB_ASSIGN_OR_RETURN(auto docs, retrieval::SegmentDocs::Decode(table));
    writer_.Put(kDocTables, Be32(meta.id), table);
    builder_.EmitPostingLists(
        [&](std::string_view term, std::string list, uint32_t num_docs) {
          writer_.Put(kPostings, PostingKey(meta.id, term), list);
          if (term.empty() || term[0] != retrieval::kFilterTermPrefix) {
            df_delta_.emplace_back(std::string(term), num_docs);
          }
        });
    new_segments_.push_back(std::make_shared<Segment>(meta, std::move(docs)));
    builder_ = SegmentBuilder();
    return writer_.MaybeStage();
  }

  LibraryImpl& lib_;
  const std::shared_ptr<const ReadState> head_state_;
  const Version head_;
  const Version version_;
  BatchWriter writer_;
  uint32_t next_docid_;
  uint32_t next_segment_;
  int64_t total_length_;
  int64_t num_skills_;
  // Live skills by status and language after the commit (set by
  // ReadPrevious at the latest).
  std::optional<SkillCounts> counts_;
  const std::vector<Skill>* puts_ = nullptr;  // the puts that change a skill
  std::vector<Skill> changed_puts_;           // when some did not
  std::vector<ChangeKind> put_kinds_;         // per put of *puts_
  std::vector<Ended> ended_;
  SegmentBuilder builder_;
  std::vector<std::shared_ptr<Segment>> new_segments_;
  // (term, change in live document frequency); aggregated by WriteDocFreqs.
  std::vector<std::pair<std::string, int64_t>> df_delta_;
  CommitInfo commit_;
};

Result<Version> LibraryImpl::CommitLocked(
    const std::vector<Skill>& all_puts, const std::vector<std::string>& deletes,
    const CommitOptions& options, const ExtraWrites& extra) {
  auto head_state = state();
  const Version head = head_state->head;
  if (options.expected_head && *options.expected_head != head) {
    return Status::Aborted("the library moved from version " +
                           std::to_string(*options.expected_head) + " to " +
                           std::to_string(head));
  }
  if (options.precondition) SKILLDB_RETURN_IF_ERROR(options.precondition(head));

  CommitBuild build(*this, std::move(head_state));
  bool nothing_changes = false;
  SKILLDB_RETURN_IF_ERROR(build.ReadPrevious(all_puts, deletes,
                                             /*keep_unchanged=*/bool(extra),
                                             &nothing_changes));
  // A plain commit in which nothing changes writes nothing.
  if (nothing_changes && !extra) return head;
  SKILLDB_RETURN_IF_ERROR(build.BuildSegments());
  SKILLDB_RETURN_IF_ERROR(build.EndDocuments(deletes));
  SKILLDB_RETURN_IF_ERROR(build.WriteDocFreqs());
  build.WriteCommitRecord(options, deletes.size());
  if (extra) SKILLDB_RETURN_IF_ERROR(extra(build.writer(), build.version()));
  SKILLDB_RETURN_IF_ERROR(build.writer().Finish(options_.sync_commits));
  build.Publish();  // durable: now visible in memory

  // The commit stands even if a merge fails (it leaves no trace: a merge is
  // one batch of its own); the policy retries on the next commit.
  const Status merged = MaybeMerge();
  (void)merged;
  return build.version();
}

}  // namespace skilldb::internal
