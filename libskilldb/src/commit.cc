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
#include <span>
#include <unordered_set>

#include "analysis.h"
#include "batch_writer.h"
#include "dedup.h"
#include "df_deltas.h"
#include "library_impl.h"
#include "merger.h"
#include "records.h"
#include "staging.h"
#include "skilldb/util/clock.h"

namespace skilldb::internal {
namespace {

using retrieval::DocInput;
using retrieval::FilterTerm;
using retrieval::SegmentBuilder;

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

// Runs one task on a helper thread; joined before the next starts and on
// destruction, so an early return by the caller is safe.
class Helper {
 public:
  Helper() = default;
  ~Helper() { Join(); }
  Helper(const Helper&) = delete;
  Helper& operator=(const Helper&) = delete;
  void Start(std::function<void()> task) {
    Join();
    thread_ = std::thread(std::move(task));
  }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
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

// The puts of a vector, a chunk at a time (no copies).
class VectorChunks final : public PutChunks {
 public:
  explicit VectorChunks(const std::vector<Skill>& puts) : puts_(puts) {}
  Result<std::span<const Skill>> Next() override {
    const size_t n = std::min(kPrepareChunk, puts_.size() - pos_);
    std::span<const Skill> chunk(puts_.data() + pos_, n);
    pos_ += n;
    return chunk;
  }

 private:
  const std::vector<Skill>& puts_;
  size_t pos_ = 0;
};

// The skills of a SkillSource, validated and checked for repeated ids as
// they come, in two alternating chunks: a chunk stays valid while the next
// one is filled (the commit prepares one while it reads the other).
class SourceChunks final : public PutChunks {
 public:
  explicit SourceChunks(SkillSource& source) : source_(source) {}
  Result<std::span<const Skill>> Next() override {
    std::vector<Skill>& chunk = buffers_[turn_];
    turn_ ^= 1;
    chunk.clear();
    while (!done_ && chunk.size() < kPrepareChunk) {
      Skill skill;
      SKILLDB_ASSIGN_OR_RETURN(const bool more, source_.Next(&skill));
      if (!more) {
        done_ = true;
        break;
      }
      ++count_;
      SKILLDB_RETURN_IF_ERROR(ValidateSkill(skill).WithContext(
          "skill " + std::to_string(count_) + " ('" + skill.id.substr(0, 64) +
          "')"));
      if (!ids_.insert(skill.id).second) {
        return Status::InvalidArgument("skill id '" + skill.id +
                                       "' appears more than once (skill " +
                                       std::to_string(count_) + ")");
      }
      chunk.push_back(std::move(skill));
    }
    return std::span<const Skill>(chunk);
  }

 private:
  SkillSource& source_;
  std::vector<Skill> buffers_[2];
  int turn_ = 0;
  bool done_ = false;
  uint64_t count_ = 0;
  std::unordered_set<std::string> ids_;  // ids only: a few MB per 100k
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

Result<Version> LibraryImpl::Import(SkillSource& source,
                                    const CommitOptions& options) {
  if (storage_->read_only()) {
    return Status::FailedPrecondition("library is open read-only");
  }
  CommitOptions o = options;
  if (o.kind.empty()) o.kind = "import";
  SourceChunks chunks(source);
  std::lock_guard<std::mutex> write_lock(write_mu_);
  return CommitChunksLocked(chunks, {}, o, nullptr, /*empty_is_error=*/true);
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

// One commit at head H building version V = H + 1, in its phases: the
// deletes (tombstones; the documents they end), the puts a chunk at a time
// (what each replaces, the documents ended, the revisions, changes and
// documents, cut into segments), the df deltas, the commit record with the
// manifest; CommitChunksLocked then writes, and publishes.
class LibraryImpl::CommitBuild {
 public:
  CommitBuild(LibraryImpl& lib, std::shared_ptr<const ReadState> head_state)
      : lib_(lib),
        head_state_(std::move(head_state)),
        head_(head_state_->head),
        version_(head_ + 1),
        writer_(*lib.storage_, lib.options_, version_),
        next_docid_(lib.counters_.next_docid),
        assigned_docid_(lib.counters_.next_docid),
        next_segment_(lib.counters_.next_segment),
        total_length_(
            static_cast<int64_t>(head_state_->head_commit.total_length)),
        num_skills_(static_cast<int64_t>(head_state_->head_commit.num_skills)),
        counts_(head_ == 0 ? std::optional<SkillCounts>(SkillCounts{})
                           : head_state_->head_counts) {}

  Version version() const { return version_; }
  BatchWriter& writer() { return writer_; }
  // Whether any put or delete changes a skill.
  bool changes() const { return added_ + updated_ + deleted_ > 0; }
  uint64_t puts_seen() const { return puts_seen_; }

  // The deletes' tombstones; each must name a skill live at the head.
  Status AddDeletes(const std::vector<std::string>& deletes) {
    SKILLDB_RETURN_IF_ERROR(EnsureCounts());
    for (const std::string& id : deletes) {
      SKILLDB_ASSIGN_OR_RETURN(auto prev,
                               lib_.ReadRevision(*head_state_, id, head_));
      if (!prev || prev->kind != RevisionKind::kPut) {
        return Status::NotFound("skill '" + id +
                                "' does not exist at version " +
                                std::to_string(head_));
      }
      SKILLDB_RETURN_IF_ERROR(EndDocument(prev->docid, prev->skill_json));
      writer_.Put(kRevisions, RevisionKey(id, version_),
                  EncodeRevision(RevisionKind::kDelete, 0, ""));
      writer_.Put(kChanges, ChangeKey(version_, id),
                  std::string(1, EncodeChangeKind(ChangeKind::kDeleted)));
      --num_skills_;
      ++deleted_;
    }
    return Status::Ok();
  }

  // The puts, chunk by chunk. A put identical to the live revision changes
  // nothing and is left out (re-importing a library makes no new
  // revisions) unless `keep_unchanged` (a commit with extra writes of its
  // own). What each put needs that depends on the skill alone (analysis,
  // filter terms, the encoded revision) is prepared on a second thread
  // while this one reads the next chunk and indexes the previous one, in
  // put order, so the result is the same as preparing it inline.
  Status AddPuts(PutChunks& chunks, bool keep_unchanged) {
    SKILLDB_RETURN_IF_ERROR(EnsureCounts());
    Chunk ahead;  // being prepared by `helper`
    bool have_ahead = false;
    Helper helper;
    while (true) {
      SKILLDB_ASSIGN_OR_RETURN(std::span<const Skill> skills, chunks.Next());
      Chunk next;
      next.skills = skills;
      const Status read = ReadPrevious(keep_unchanged, &next);
      helper.Join();
      if (have_ahead) SKILLDB_RETURN_IF_ERROR(IndexChunk(ahead));
      SKILLDB_RETURN_IF_ERROR(read);
      if (skills.empty()) break;
      ahead = std::move(next);
      have_ahead = true;
      helper.Start([this, &ahead] { Prepare(&ahead); });
    }
    return CutSegment();
  }

  // New document frequencies at this version, for the terms that moved, in
  // term order (so the df lookups walk the history forwards).
  Status WriteDocFreqs() {
    const std::vector<DfDeltas::Entry> moved = df_delta_.TakeMoved();
    auto df_it = lib_.storage_->NewIterator(kDfs, head_state_->snap());
    for (const auto& [term, delta] : moved) {
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
  const CommitInfo& WriteCommitRecord(const CommitOptions& options) {
    commit_.version = version_;
    commit_.time_ms = util::NowUnixMs();
    commit_.kind = options.kind.empty() ? "commit" : options.kind;
    commit_.message = options.message;
    commit_.author = options.author.empty() ? DefaultAuthor() : options.author;
    commit_.added = added_;
    commit_.updated = updated_;
    commit_.deleted = deleted_;
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
    lib_.counters_.next_docid = next_docid_;
    lib_.counters_.next_segment = next_segment_;
    for (uint32_t docid : ended_) {
      for (const auto& seg : head_state_->segments) {
        const SegmentMeta& m = seg->meta();
        if (docid >= m.base && docid < m.base + m.count) {
          seg->ApplyEnd(docid, version_);
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
  // A chunk of puts on its way through the commit.
  struct Chunk {
    std::span<const Skill> skills;
    std::vector<uint32_t> changed;    // positions in `skills` that change
    std::vector<ChangeKind> kinds;    // per changed put
    uint32_t first_docid = 0;         // of the first changed put
    std::vector<PreparedPut> prepared;  // per changed put (Prepare)
  };

  // A head written before the counts were kept: count it once, and keep
  // the counts from this commit on.
  Status EnsureCounts() {
    if (!counts_) {
      SKILLDB_ASSIGN_OR_RETURN(counts_, lib_.CountsAt(*head_state_, head_));
    }
    return Status::Ok();
  }

  // What the chunk's puts replace: the unchanged ones are left out, the
  // live revisions they replace end (docids are assigned here, in order).
  Status ReadPrevious(bool keep_unchanged, Chunk* chunk) {
    chunk->first_docid = assigned_docid_;
    for (size_t i = 0; i < chunk->skills.size(); ++i) {
      const Skill& skill = chunk->skills[i];
      ++puts_seen_;
      SKILLDB_ASSIGN_OR_RETURN(
          auto prev, lib_.ReadRevision(*head_state_, skill.id, head_));
      const bool live = prev && prev->kind == RevisionKind::kPut;
      if (live) {
        if (!keep_unchanged && prev->skill_json == SkillToJson(skill)) {
          continue;
        }
        SKILLDB_RETURN_IF_ERROR(EndDocument(prev->docid, prev->skill_json));
      }
      chunk->changed.push_back(static_cast<uint32_t>(i));
      chunk->kinds.push_back(live ? ChangeKind::kUpdated : ChangeKind::kAdded);
      ++assigned_docid_;
    }
    return Status::Ok();
  }

  // The skill-only work of the chunk's changed puts. Reads only what no
  // other thread writes during the commit (the analyzer, the weights).
  void Prepare(Chunk* chunk) const {
    chunk->prepared.resize(chunk->changed.size());
    for (size_t j = 0; j < chunk->changed.size(); ++j) {
      const Skill& skill = chunk->skills[chunk->changed[j]];
      PreparedPut& out = chunk->prepared[j];
      out.length = AnalyzeSkill(*lib_.analyzer_, lib_.field_weights_, skill,
                                &out.term_freqs);
      out.filter_terms = FilterTerms(skill);
      out.revision = EncodeRevision(RevisionKind::kPut,
                                    chunk->first_docid + static_cast<uint32_t>(j),
                                    SkillToJson(skill));
    }
  }

  // The chunk's revisions, changes, hashes and documents.
  Status IndexChunk(Chunk& chunk) {
    for (size_t j = 0; j < chunk.changed.size(); ++j) {
      const Skill& skill = chunk.skills[chunk.changed[j]];
      PreparedPut& put = chunk.prepared[j];
      const ChangeKind kind = chunk.kinds[j];
      total_length_ += put.length;
      if (kind == ChangeKind::kAdded) {
        ++num_skills_;
        ++added_;
      } else {
        ++updated_;
      }
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
                  std::string(1, EncodeChangeKind(kind)));
      writer_.Put(kHashes, ContentHash(skill) + skill.id, "");
      // A builder past options.segment_build_bytes is cut into a segment of
      // its own: with the bulk buffered between table loads (stage_bytes)
      // the bound on what an import holds, whatever the size of its source.
      if (builder_.memory_bytes() > lib_.options_.segment_build_bytes) {
        SKILLDB_RETURN_IF_ERROR(CutSegment());
      } else {
        SKILLDB_RETURN_IF_ERROR(writer_.MaybeStage());
      }
    }
    return Status::Ok();
  }

  // A live document the commit ends (its skill is replaced or deleted): it
  // leaves the statistics (its stored text is analyzed again), the counts
  // and the content hashes. Runs before the put that replaces it is
  // indexed, so the replaced hash is deleted before the new one is put.
  Status EndDocument(uint32_t docid, const std::string& skill_json) {
    SKILLDB_ASSIGN_OR_RETURN(Skill old, ParseSkillJson(skill_json));
    total_length_ -=
        AnalyzeSkill(*lib_.analyzer_, lib_.field_weights_, old, &freqs_);
    SKILLDB_RETURN_IF_ERROR(CountSkill(old, -1, &*counts_));
    for (const auto& [term, tf] : freqs_) df_delta_.Add(term, -1);
    writer_.Put(kEnds, Be32(docid), Be64(version_));
    writer_.Delete(kHashes, ContentHash(old) + old.id);
    ended_.push_back(docid);
    return Status::Ok();
  }

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
        [&](std::string_view term, const std::string& list, uint32_t num_docs) {
          writer_.Put(kPostings, PostingKey(meta.id, term), list);
          if (term.empty() || term[0] != retrieval::kFilterTermPrefix) {
            df_delta_.Add(term, num_docs);
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
  uint32_t next_docid_;      // of the next document indexed
  uint32_t assigned_docid_;  // of the next changed put read (ReadPrevious)
  uint32_t next_segment_;
  int64_t total_length_;
  int64_t num_skills_;
  // Live skills by status and language after the commit (set by
  // EnsureCounts at the latest).
  std::optional<SkillCounts> counts_;
  uint64_t added_ = 0, updated_ = 0, deleted_ = 0;
  uint64_t puts_seen_ = 0;
  std::vector<uint32_t> ended_;  // docids of the documents ended
  SegmentBuilder builder_;
  std::vector<std::shared_ptr<Segment>> new_segments_;
  // Change in live document frequency by term, summed as the commit goes.
  DfDeltas df_delta_;
  std::vector<std::pair<std::string, uint32_t>> freqs_;  // EndDocument's
  CommitInfo commit_;
};

Result<Version> LibraryImpl::CommitLocked(
    const std::vector<Skill>& puts, const std::vector<std::string>& deletes,
    const CommitOptions& options, const ExtraWrites& extra) {
  VectorChunks chunks(puts);
  return CommitChunksLocked(chunks, deletes, options, extra,
                            /*empty_is_error=*/false);
}

Result<Version> LibraryImpl::CommitChunksLocked(
    PutChunks& puts, const std::vector<std::string>& deletes,
    const CommitOptions& options, const ExtraWrites& extra,
    bool empty_is_error) {
  SKILLDB_RETURN_IF_ERROR(RecoverAbandonedStaging(*storage_, counters_.next_segment));
  auto head_state = state();
  const Version head = head_state->head;
  if (options.expected_head && *options.expected_head != head) {
    return Status::Aborted("the library moved from version " +
                           std::to_string(*options.expected_head) + " to " +
                           std::to_string(head));
  }
  if (options.precondition) SKILLDB_RETURN_IF_ERROR(options.precondition(head));

  bool committed = false;
  const Status built = [&]() -> Status {
    CommitBuild build(*this, std::move(head_state));
    SKILLDB_RETURN_IF_ERROR(build.AddDeletes(deletes));
    SKILLDB_RETURN_IF_ERROR(build.AddPuts(puts, /*keep_unchanged=*/bool(extra)));
    if (empty_is_error && build.puts_seen() == 0) {
      return Status::InvalidArgument("nothing to commit: no skills");
    }
    // A plain commit in which nothing changes writes nothing.
    if (!build.changes() && !extra) return Status::Ok();
    SKILLDB_RETURN_IF_ERROR(build.WriteDocFreqs());
    build.WriteCommitRecord(options);
    if (extra) SKILLDB_RETURN_IF_ERROR(extra(build.writer(), build.version()));
    SKILLDB_RETURN_IF_ERROR(build.writer().Finish(options_.sync_commits));
    build.Publish();  // durable: now visible in memory
    committed = true;
    return Status::Ok();
  }();
  if (!built.ok()) {
    // What a failed commit staged (batch_writer.h) carries the version the
    // next commit makes: removed now, or before the next commit or merge.
    (void)RecoverAbandonedStaging(*storage_, counters_.next_segment);
    return built;
  }
  if (!committed) return head;

  // The commit stands even if a merge fails (it leaves no trace: a merge is
  // one batch of its own); the policy retries on the next commit.
  const Status merged = merger_->MaybeMerge();
  (void)merged;
  return head + 1;
}

}  // namespace skilldb::internal
