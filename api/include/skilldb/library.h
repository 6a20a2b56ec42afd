// A Library is a versioned, persistent collection of skills with a BM25 index
// that commits atomically with the skills it indexes.
//
// Every commit (one put, the import of a batch, one delete) creates exactly
// one new version with a commit record. Every read (get, scan, history, diff,
// stats and BM25 queries) can be made as of any retained version, and a query
// as of version V returns the same hits with the same scores as a fresh
// library holding exactly the skills live at V.
//
// A Library is safe for concurrent use by multiple threads: reads never block
// on writes, and writes are serialized. One process at a time may hold a
// library open for writing; any number may open it read-only beside it.
#ifndef SKILLDB_LIBRARY_H_
#define SKILLDB_LIBRARY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/maintenance.h"
#include "skilldb/options.h"
#include "skilldb/proposal.h"
#include "skilldb/proposal_queue.h"
#include "skilldb/skill.h"
#include "skilldb/status.h"

namespace skilldb {

// What one commit did to one skill.
enum class ChangeKind { kAdded, kUpdated, kDeleted };
std::string_view ChangeKindName(ChangeKind kind);

struct Change {
  std::string id;
  ChangeKind kind = ChangeKind::kAdded;
  bool operator==(const Change&) const = default;
};

// The record of one commit.
struct CommitInfo {
  Version version = 0;
  int64_t time_ms = 0;  // Unix time, milliseconds
  std::string kind;     // "put", "import", "delete", ...
  std::string message;
  std::string author;
  uint64_t added = 0;  // counts of changes by kind
  uint64_t updated = 0;
  uint64_t deleted = 0;
  uint64_t num_skills = 0;    // skills live after the commit
  uint64_t total_length = 0;  // sum of their indexed lengths (terms)
  bool operator==(const CommitInfo&) const = default;
};

// The skills of an import (Library::Import), read once, in order.
class SkillSource {
 public:
  virtual ~SkillSource() = default;
  // Sets *skill to the next skill and returns true, or returns false once
  // the source is exhausted. An error ends the import with that error.
  virtual Result<bool> Next(Skill* skill) = 0;
};

// One revision of a skill: the state a commit left it in.
struct Revision {
  Version version = 0;
  bool deleted = false;
  Skill skill;  // empty when deleted
  bool operator==(const Revision&) const = default;
};

// One difference between two versions.
struct DiffEntry {
  std::string id;
  ChangeKind kind = ChangeKind::kAdded;  // from `from` to `to`
  std::optional<Skill> before;           // at `from`; unset if added
  std::optional<Skill> after;            // at `to`; unset if deleted
  bool operator==(const DiffEntry&) const = default;
};

// A BM25 hit: the skill's id and score, plus the fields QueryOptions::fields
// asked for, all as of the version queried (usage counters are not
// versioned: they are the library's current counts).
struct Hit {
  std::string id;
  double score = 0.0;
  HitFields fields;  // which of the members below are filled
  // The version of the skill's revision live at the queried version (the
  // skill's content is exactly that revision's). Set when fields ask for
  // any record field; 0 otherwise.
  Version revision = 0;
  std::string title;
  std::string summary;
  std::string body;
  std::string code;
  std::vector<std::string> tags;
  std::vector<std::string> ops;
  std::vector<std::string> arch;
  Language language = Language::kAny;
  SkillStatus status = SkillStatus::kActive;
  std::optional<UsageCounters> usage;  // with HitField::kUsage
  bool operator==(const Hit&) const = default;
};

struct QueryResult {
  Version version = 0;  // the version the query was answered as of
  std::vector<Hit> hits;
  bool operator==(const QueryResult&) const = default;
};

// Settings fixed at creation, and where the library stands.
struct LibraryInfo {
  std::string path;
  Analyzer analyzer = Analyzer::kCode;
  double k1 = 1.2;
  double b = 0.75;
  FieldWeights field_weights;
  bool read_only = false;
  Version head = 0;             // newest version
  Version oldest_retained = 0;  // oldest version reads may ask for
  bool operator==(const LibraryInfo&) const = default;
};

struct LibraryStats {
  Version version = 0;
  uint64_t num_skills = 0;
  uint64_t total_length = 0;
  double avg_length = 0.0;
  // Skills by status and by language, live at `version`.
  uint64_t candidate = 0, active = 0, deprecated = 0, pruned = 0;
  uint64_t cuda = 0, triton = 0, any_language = 0;
  // Skills by how far their evidence goes (SkillTrust with its default
  // threshold), live at `version`.
  uint64_t unverified = 0, provisional = 0, trusted = 0;
  // Physical state (independent of `version`).
  uint64_t num_segments = 0;
  uint64_t num_documents = 0;  // indexed revisions, all versions
  uint64_t disk_bytes = 0;     // every file of the library directory
  // Table-file bytes by role: the BM25 index (postings, doc tables, df
  // history, ends), the records (revisions, commits, changes, content
  // hashes), and the rest (audit, usage, tags, meta). Data still only in
  // the write-ahead log is not counted.
  uint64_t index_table_bytes = 0;
  uint64_t record_table_bytes = 0;
  uint64_t other_table_bytes = 0;
  bool operator==(const LibraryStats&) const = default;
};

struct LogOptions {
  size_t limit = 0;             // 0 = all
  std::optional<Version> from;  // newest version to list; unset = head
};

class Library {
 public:
  // Opens (or, with options.create_if_missing, creates) the library at
  // `path`. Errors: NotFound if absent and not to be created; AlreadyExists
  // with error_if_exists; InvalidArgument for bad creation settings;
  // Unavailable if another process holds the write lock past
  // options.lock_timeout_ms; Corruption if the files are not a skilldb
  // library; IOError for the file system.
  static Result<std::unique_ptr<Library>> Open(const Options& options,
                                               std::string_view path);

  Library() = default;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  virtual ~Library() = default;

  virtual LibraryInfo Info() const = 0;
  virtual Version CurrentVersion() const = 0;

  // ---- Writes: each call is one atomic, durable commit. ----
  // On success the result is the new version. Errors: InvalidArgument for a
  // skill that fails ValidateSkill, a duplicate id within one call, or an
  // empty change; NotFound for deleting a skill not live at the head;
  // Aborted when CommitOptions::expected_head no longer holds;
  // FailedPrecondition when opened read-only; whatever the precondition
  // returns. Nothing is written on error.

  // Adds `skill`, or makes a new revision of the skill with its id.
  virtual Result<Version> Put(const Skill& skill,
                              const CommitOptions& options = {}) = 0;
  // Adds or revises every skill in `skills` in one commit (an import).
  virtual Result<Version> PutMany(const std::vector<Skill>& skills,
                                  const CommitOptions& options = {}) = 0;
  // PutMany over the skills `source` yields, for imports larger than memory:
  // holds a bounded window of them at a time (two chunks of about a
  // thousand skills, the segment being built, options.segment_build_bytes,
  // and the bulk buffered between table loads, options.stage_bytes), never
  // the whole source. Same errors
  // as PutMany, each naming the skill by its position and id, and the
  // source's own; on any error nothing becomes visible, and what was staged
  // is removed.
  virtual Result<Version> Import(SkillSource& source,
                                 const CommitOptions& options = {}) = 0;
  // Deletes the skill `id` (its history stays readable).
  virtual Result<Version> Delete(std::string_view id,
                                 const CommitOptions& options = {}) = 0;
  // Puts and deletes in one commit. REQUIRES: no id in both lists.
  // A put identical to the skill's live revision is no change and makes no
  // revision (for Put and PutMany too); when nothing changes at all, no
  // version is made and the current head is returned (compare it with
  // CurrentVersion() before the call to tell).
  virtual Result<Version> Commit(const std::vector<Skill>& puts,
                                 const std::vector<std::string>& deletes,
                                 const CommitOptions& options = {}) = 0;

  // ---- Reads: as of options.as_of, or the head. ----
  // Errors common to all reads: NotFound naming the version when as_of is
  // newer than the head or older than the oldest retained version.

  // The skill `id` as of the version; NotFound if it is not live then.
  virtual Result<Skill> Get(std::string_view id,
                            const ReadOptions& options = {}) = 0;
  // Calls `fn` for every skill live at the version, in id order; stops
  // early when `fn` returns false.
  virtual Status Scan(const ReadOptions& options,
                      const std::function<bool(const Skill&)>& fn) = 0;
  // Every retained revision of `id`, newest first. NotFound if none.
  virtual Result<std::vector<Revision>> History(std::string_view id) = 0;
  // Commit records, newest first.
  virtual Result<std::vector<CommitInfo>> Log(const LogOptions& options) = 0;
  virtual Result<CommitInfo> GetCommit(Version version) = 0;
  // The ids changed by one commit.
  virtual Result<std::vector<Change>> CommitChanges(Version version) = 0;
  // What differs between the skills live at `from` and at `to` (either
  // order), by id.
  virtual Result<std::vector<DiffEntry>> Diff(Version from, Version to) = 0;
  virtual Result<LibraryStats> Stats(const ReadOptions& options) = 0;

  // The top options.k skills for `text` by BM25, ties by id ascending.
  // A query whose text has no terms returns no hits.
  virtual Result<QueryResult> Query(const QueryOptions& options,
                                    std::string_view text) = 0;
  // Query for each text, on up to `threads` threads (0 = hardware
  // concurrency); results in input order, all as of one version.
  virtual Result<std::vector<QueryResult>> QueryBatch(
      const QueryOptions& options, const std::vector<std::string>& texts,
      int threads) = 0;

  // Calls `fn` for every retained revision of every skill (deleted ones
  // too), by id, newest revision first; stops when `fn` returns false.
  virtual Status ScanRevisions(
      const std::function<bool(const std::string& id, const Revision& rev)>&
          fn) = 0;

  // ---- Verified insertion (see proposal.h) ----
  // Starts a proposal pinned to the current head. InvalidArgument if the
  // candidate fails ValidateSkill; FailedPrecondition when read-only.
  virtual Result<std::unique_ptr<Proposal>> Propose(
      const Skill& candidate, const ProposalOptions& options) = 0;
  // Audit log entries, oldest first.
  virtual Result<std::vector<AuditEntry>> Audit(
      const AuditOptions& options) = 0;

  // ---- The durable proposal queue (see proposal_queue.h) ----
  // Stores `request` as a new queued proposal, durably (synced) before it
  // returns, and returns it. InvalidArgument for a request that fails
  // ValidateQueuedRequest; FailedPrecondition when read-only.
  virtual Result<QueuedProposal> Enqueue(const QueuedRequest& request) = 0;
  // The queued proposal `id` as it is now. InvalidArgument for an id that is
  // not one; NotFound if there is none. A read-only Library sees the queue
  // as of its open.
  virtual Result<QueuedProposal> GetQueued(std::string_view id) = 0;
  // Queued proposals in submission order (see QueueListOptions).
  virtual Result<std::vector<QueuedProposal>> ListQueued(
      const QueueListOptions& options) = 0;
  virtual Result<QueueCounts> CountQueued() = 0;
  // Takes the oldest queued proposal for verification: marks it verifying
  // (durably, attempts + 1) and returns it; nullopt when none is queued.
  // Safe from several worker threads: each proposal is claimed once.
  // FailedPrecondition when read-only.
  virtual Result<std::optional<QueuedProposal>> ClaimQueued() = 0;
  // Ends a claimed proposal without a commit decision: `state` is
  // kConflict, kFailed, or kQueued (give it back to be claimed again), with
  // `reasons`. NotFound for an unknown id; FailedPrecondition unless it is
  // verifying, or for another state.
  virtual Status FinishQueued(std::string_view id, QueueState state,
                              const std::vector<std::string>& reasons) = 0;

  // ---- Usage feedback ----
  // Adds `count` events to the counters of skill `id` (NotFound unless it is
  // live at the head). Cheap and safe from many threads: a RocksDB merge
  // write, no read-modify-write, no log sync. In a read-only Library (other
  // processes) the event is appended to a per-process spool file beside the
  // library, counted by every reader at once and folded into the store by
  // the next process that opens the library for writing.
  virtual Status RecordUsage(std::string_view id, UsageEvent event,
                             uint64_t count = 1) = 0;
  // Adds every record's events in one batched write: one RocksDB write
  // batch for the writer, one spool append for a read-only Library, so a
  // worker reporting a rollout's events pays one call. NotFound (naming
  // the id) if any id is not live at the head, InvalidArgument for a bad
  // id or event; nothing is recorded on error.
  virtual Status RecordUsage(const std::vector<UsageRecord>& records) = 0;
  // The counters of `id` (zero if never used).
  virtual Result<UsageCounters> GetUsage(std::string_view id) = 0;
  // Every skill's counters, by id.
  virtual Status ScanUsage(
      const std::function<bool(const std::string& id,
                               const UsageCounters& counters)>& fn) = 0;

  // ---- Lifecycle, pruning and retention ----
  // Sets the status of every listed skill in one commit. NotFound for a
  // skill not live at the head; InvalidArgument if nothing changes.
  virtual Result<Version> SetStatus(const std::vector<std::string>& ids,
                                    SkillStatus status,
                                    const CommitOptions& options = {}) = 0;
  // Undoes commit `version`: one new commit that puts every skill it
  // changed back to its state before it. NotFound if that state is not
  // retained.
  virtual Result<Version> Revert(Version version,
                                 const CommitOptions& options = {}) = 0;
  // What `policy` would prune at the head (a dry run; writes nothing).
  virtual Result<std::vector<PruneAction>> PlanPrune(
      const PrunePolicy& policy) = 0;
  // Marks the planned skills pruned in one commit (undo with Revert).
  virtual Result<Version> ApplyPrune(const std::vector<PruneAction>& actions,
                                     const CommitOptions& options = {}) = 0;

  // Names `version` (which must be retained); tagged versions survive Gc.
  // AlreadyExists if the name is taken.
  virtual Status Tag(std::string_view name, Version version) = 0;
  virtual Status DeleteTag(std::string_view name) = 0;
  virtual Result<std::vector<TagInfo>> Tags() = 0;
  // Rewrites the index into one segment (dropping documents no retained
  // version sees) and compacts storage, so that reads after a bulk import
  // touch the fewest files. Changes no content and makes no version; the
  // work is proportional to the library's size.
  virtual Status Compact() = 0;

  // Verifies the whole library: the checksum of every block of every table
  // file, every index segment's doc table against the manifest, and the
  // index against the records (the skills live at the head are exactly the
  // documents the index holds live, under the same ids, and as many as the
  // head commit counts). Damage is reported in the CheckReport, one problem
  // per thing found wrong; the Status fails only when the check itself
  // cannot run. Reads everything: proportional to the library's size.
  virtual Result<CheckReport> Check() = 0;

  // Drops history older than the options keep, except tagged versions:
  // afterwards reads as of any kept version (and any tag) return exactly
  // what they returned before, and older versions are NotFound.
  virtual Result<GcReport> Gc(const GcOptions& options) = 0;
};

}  // namespace skilldb

#endif  // SKILLDB_LIBRARY_H_
