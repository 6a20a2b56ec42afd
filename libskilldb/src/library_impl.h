// LibraryImpl: the Library behind the public interface. Internal.
//
// Its member functions are spread over files by job: library_impl.cc (open,
// state, plain reads), commit.cc (the write path), query.cc (BM25 queries),
// history.cc (history, log, diff, stats), lifecycle.cc (status, revert,
// prune). The parts that own state of their own sit behind narrow
// interfaces: the audit log (audit_log.h), the usage counters with their
// spool files (usage_store.h), merging and compaction (merger.h), tags and
// garbage collection (retention.h). They share the published read state and
// the writer's counters (published_state.h); LibraryImpl holds the write
// lock that orders them.
#ifndef SKILLDB_LIBSKILLDB_LIBRARY_IMPL_H_
#define SKILLDB_LIBSKILLDB_LIBRARY_IMPL_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "index_state.h"
#include "published_state.h"
#include "skilldb/library.h"
#include "skilldb/retrieval/analyzer.h"
#include "skilldb/retrieval/bm25.h"
#include "storage.h"

namespace skilldb::internal {

// A revision as stored, decoded.
struct StoredRevision {
  Version version = 0;
  RevisionKind kind = RevisionKind::kPut;
  uint32_t docid = 0;
  std::string skill_json;
};

class AuditLog;
class BatchWriter;
class Merger;
class ProposalImpl;
struct ProposalAtHead;
class Retention;
class UsageStore;

// Writes a caller adds to a commit's final batch (e.g. its audit entry),
// given the version being committed. Called under the write lock.
using ExtraWrites = std::function<Status(BatchWriter& writer, Version version)>;

// The puts of one commit, handed out a chunk at a time. A chunk stays valid
// until the call after the next one (the commit prepares one chunk while it
// reads the next).
class PutChunks {
 public:
  virtual ~PutChunks() = default;
  // The next chunk; empty once every put was handed out.
  virtual Result<std::span<const Skill>> Next() = 0;
};

// Decodes the revision the iterator is on; *id points into its key.
// Corruption if the entry is malformed.
Result<StoredRevision> DecodeRevisionAt(const rocksdb::Iterator& it,
                                        std::string_view* id);
// The public form of a stored revision (the skill parsed unless deleted).
Result<Revision> ToRevision(const StoredRevision& stored);

class LibraryImpl final : public Library {
 public:
  static Result<std::unique_ptr<Library>> Open(const Options& options,
                                               std::string_view path);
  ~LibraryImpl() override;

  LibraryInfo Info() const override;
  Version CurrentVersion() const override;

  Result<Version> Put(const Skill& skill,
                      const CommitOptions& options) override;
  Result<Version> Import(SkillSource& source,
                         const CommitOptions& options) override;
  Result<Version> PutMany(const std::vector<Skill>& skills,
                          const CommitOptions& options) override;
  Result<Version> Delete(std::string_view id,
                         const CommitOptions& options) override;
  Result<Version> Commit(const std::vector<Skill>& puts,
                         const std::vector<std::string>& deletes,
                         const CommitOptions& options) override;

  Result<Skill> Get(std::string_view id, const ReadOptions& options) override;
  Status Scan(const ReadOptions& options,
              const std::function<bool(const Skill&)>& fn) override;
  Result<std::vector<Revision>> History(std::string_view id) override;
  Result<std::vector<CommitInfo>> Log(const LogOptions& options) override;
  Result<CommitInfo> GetCommit(Version version) override;
  Result<std::vector<Change>> CommitChanges(Version version) override;
  Result<std::vector<DiffEntry>> Diff(Version from, Version to) override;
  Result<LibraryStats> Stats(const ReadOptions& options) override;
  Result<QueryResult> Query(const QueryOptions& options,
                            std::string_view text) override;
  Result<std::vector<QueryResult>> QueryBatch(
      const QueryOptions& options, const std::vector<std::string>& texts,
      int threads) override;
  Status ScanRevisions(
      const std::function<bool(const std::string& id, const Revision& rev)>& fn)
      override;

  Result<std::unique_ptr<Proposal>> Propose(
      const Skill& candidate, const ProposalOptions& options) override;
  Result<std::vector<AuditEntry>> Audit(const AuditOptions& options) override;

  Result<QueuedProposal> Enqueue(const QueuedRequest& request) override;
  Result<QueuedProposal> GetQueued(std::string_view id) override;
  Result<std::vector<QueuedProposal>> ListQueued(
      const QueueListOptions& options) override;
  Result<QueueCounts> CountQueued() override;
  Result<std::optional<QueuedProposal>> ClaimQueued() override;
  Status FinishQueued(std::string_view id, QueueState state,
                      const std::vector<std::string>& reasons) override;

  Status RecordUsage(std::string_view id, UsageEvent event,
                     uint64_t count) override;
  Status RecordUsage(const std::vector<UsageRecord>& records) override;
  Result<UsageCounters> GetUsage(std::string_view id) override;
  Status ScanUsage(
      const std::function<bool(const std::string& id,
                               const UsageCounters& counters)>& fn) override;

  Result<Version> SetStatus(const std::vector<std::string>& ids,
                            SkillStatus status,
                            const CommitOptions& options) override;
  Result<Version> Revert(Version version,
                         const CommitOptions& options) override;
  Result<std::vector<PruneAction>> PlanPrune(
      const PrunePolicy& policy) override;
  Result<Version> ApplyPrune(const std::vector<PruneAction>& actions,
                             const CommitOptions& options) override;

  Status Tag(std::string_view name, Version version) override;
  Status DeleteTag(std::string_view name) override;
  Result<std::vector<TagInfo>> Tags() override;
  Result<GcReport> Gc(const GcOptions& options) override;
  Status Compact() override;
  Result<CheckReport> Check() override;

 private:
  friend class ProposalImpl;
  LibraryImpl() = default;
  // Open without building a new library beside its path first.
  static Result<std::unique_ptr<Library>> OpenHere(const Options& options,
                                                   std::string_view path);

  // library_impl.cc
  Status Initialize(const Options& options, bool created);
  Status LoadState();
  std::shared_ptr<const ReadState> state() const;
  void Publish(std::shared_ptr<const ReadState> next);
  // The newest revision of `id` at or before `version`, if any.
  Result<std::optional<StoredRevision>> ReadRevision(const ReadState& state,
                                                     std::string_view id,
                                                     Version version) const;
  // `counts`, when not null, receives the record's skill counts (unset in a
  // record written before they were kept).
  Result<CommitInfo> ReadCommit(const ReadState& state, Version version,
                                std::optional<SkillCounts>* counts = nullptr) const;
  // The skills live at `version` by status, language and trust: the
  // commit record's counts, or counted by a scan where the record has none.
  Result<SkillCounts> CountsAt(const ReadState& state, Version version) const;
  // The same counted by a scan of the skills live at `version`, whatever
  // the record holds.
  Result<SkillCounts> CountsByScan(const ReadState& state,
                                   Version version) const;
  // Calls `fn` on each skill live at `version` in id order until it
  // returns false.
  Status ScanAt(const ReadState& state, Version version,
                const std::function<bool(const Skill&)>& fn) const;

  // commit.cc. REQUIRES: write_mu_ held; inputs validated (by the caller;
  // a PutChunks may validate as it reads).
  class CommitBuild;  // one commit's state, phase by phase
  Result<Version> CommitLocked(const std::vector<Skill>& puts,
                               const std::vector<std::string>& deletes,
                               const CommitOptions& options,
                               const ExtraWrites& extra);
  // The same over puts that arrive in chunks; with `empty_is_error`, puts
  // that yield no skill at all fail with InvalidArgument.
  Result<Version> CommitChunksLocked(PutChunks& puts,
                                     const std::vector<std::string>& deletes,
                                     const CommitOptions& options,
                                     const ExtraWrites& extra,
                                     bool empty_is_error);
  // query.cc
  // The scoring context of `version` (memoized in the state).
  Result<std::shared_ptr<const VersionStats>> StatsAt(const ReadState& state,
                                                      Version version) const;
  Result<QueryResult> QueryState(const ReadState& state,
                                 const QueryOptions& options,
                                 std::string_view text) const;
  // Fills the hits' members that `fields` asks for, as of `version`.
  Status FillHits(const ReadState& state, Version version, HitFields fields,
                  QueryResult* result) const;
  // One `retrieved` event per hit of `results`, in one batched write.
  Status RecordRetrieved(std::span<const QueryResult> results);
  // The live document frequency of `term` at `version` (memoized in the
  // state: head_dfs, past_dfs); on a miss it reads storage through *it,
  // made on first use. ReadDocFreq always reads storage. With `ascending`,
  // the caller promises that every call on `it` since its last reposition
  // asked for a smaller term at the same version; the iterator then steps
  // forwards from where the last call left it (a few Next() calls) before
  // falling back to a Seek, which must search every memtable and level.
  Result<uint64_t> DocFreq(const ReadState& state,
                           std::unique_ptr<rocksdb::Iterator>* it,
                           std::string_view term, Version version) const;
  Result<uint64_t> ReadDocFreq(rocksdb::Iterator* it, std::string_view term,
                               Version version, bool ascending = false) const;

  // proposal.cc
  Result<std::vector<DuplicateMatch>> FindDuplicates(
      const ReadState& state, const Skill& candidate,
      const ProposalOptions& options) const;
  Result<double> SelfScore(const ReadState& state,
                           const Skill& candidate) const;
  // Its phases (proposal.cc, REQUIRE write_mu_ held): the recheck at head
  // (why the proposal no longer holds, "" when it does), then, once the
  // decision is to accept, the puts that carry it out.
  Result<ProposalOutcome> CommitProposal(ProposalImpl& proposal);
  Result<std::string> RecheckProposal(ProposalAtHead& at) const;
  Result<std::vector<Skill>> AcceptedPuts(const ProposalAtHead& at,
                                          ProposalOutcome* outcome) const;

  // queue.cc. The queue's writes REQUIRE write_mu_ held.
  // Writer's open: re-queues what a dead writer was verifying.
  Status RecoverQueue();
  Result<QueuedProposal> DecodeQueued(std::string_view value,
                                      uint64_t seq) const;
  Result<std::optional<QueuedProposal>> ReadQueued(uint64_t seq) const;
  Status ScanQueue(const std::function<bool(const QueuedProposal&)>& fn) const;
  // Stamps q->updated_ms; the entry's key and value, for a batch.
  std::pair<std::string, std::string> EncodeQueued(QueuedProposal* q) const;
  // Updates queued_seqs_ once q's write landed.
  void IndexQueued(const QueuedProposal& q);
  // Writes q (and the last sequence, when given) in one synced batch.
  Status WriteQueued(QueuedProposal* q, std::optional<uint64_t> last_seq);
  // The entry a proposal made with options.queue_id finishes: nullopt
  // without one; NotFound, FailedPrecondition (already final).
  Result<std::optional<QueuedProposal>> QueueEntryForCommit(
      const ProposalOptions& options) const;

  // audit.cc: entries through the AuditLog, ordered under write_mu_
  // (WriteAuditLocked REQUIRES it held).
  Result<uint64_t> WriteAudit(const std::string& entry_json);
  Result<uint64_t> WriteAuditLocked(const std::string& entry_json);
  // proposal.cc: the audit entry plus a queued entry's new state, which
  // `finish` sets once the entry's sequence is known (REQUIRES write_mu_).
  Result<uint64_t> WriteAuditAndQueueLocked(
      const std::string& entry_json, std::optional<QueuedProposal>* queued,
      const std::function<void(uint64_t seq, QueuedProposal*)>& finish);

  Options options_;
  std::unique_ptr<Storage> storage_;
  std::unique_ptr<retrieval::Analyzer> analyzer_;
  std::unique_ptr<BlobCache> posting_cache_;
  retrieval::Bm25Params bm25_params_;
  FieldWeights field_weights_;
  Analyzer analyzer_kind_ = Analyzer::kCode;

  PublishedState published_;
  std::mutex write_mu_;  // serializes commits, merges, tags and gc
  WriterCounters counters_;  // guarded by write_mu_
  // The proposal queue: sequences of the queued entries and the last
  // sequence handed out (queue.cc), guarded by write_mu_.
  std::set<uint64_t> queued_seqs_;
  uint64_t queue_seq_ = 0;

  // The parts that own state of their own, behind narrow interfaces (each
  // refers to storage_, declared before them so it outlives them).
  std::unique_ptr<AuditLog> audit_;    // writes under write_mu_
  std::unique_ptr<UsageStore> usage_;  // thread-safe
  std::unique_ptr<Merger> merger_;     // under write_mu_
  std::unique_ptr<Retention> retention_;  // writes under write_mu_
};

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_LIBRARY_IMPL_H_
