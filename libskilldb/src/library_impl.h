// LibraryImpl: the Library behind the public interface. Internal.
//
// Its member functions are spread over files by job: library_impl.cc (open,
// state, plain reads), commit.cc (the write path), query.cc (BM25 queries),
// history.cc (history, log, diff, stats), merge.cc (the merge policy).
#ifndef SKILLDB_LIBSKILLDB_LIBRARY_IMPL_H_
#define SKILLDB_LIBSKILLDB_LIBRARY_IMPL_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "index_state.h"
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

class LibraryImpl final : public Library {
 public:
  static Result<std::unique_ptr<Library>> Open(const Options& options,
                                               std::string_view path);
  ~LibraryImpl() override;

  LibraryInfo Info() const override;
  Version CurrentVersion() const override;

  Result<Version> Put(const Skill& skill,
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

 private:
  LibraryImpl() = default;

  // library_impl.cc
  Status Initialize(const Options& options, bool created);
  Status RecoverStaging();
  Status LoadState();
  std::shared_ptr<const ReadState> state() const;
  void Publish(std::shared_ptr<const ReadState> next);
  // The version a read as of `as_of` sees, or NotFound.
  Result<Version> ResolveVersion(const ReadState& state,
                                 std::optional<Version> as_of) const;
  // The newest revision of `id` at or before `version`, if any.
  Result<std::optional<StoredRevision>> ReadRevision(
      const ReadState& state, std::string_view id, Version version) const;
  Result<CommitInfo> ReadCommit(const ReadState& state, Version version) const;

  // query.cc
  Result<QueryResult> QueryState(const ReadState& state,
                                 const QueryOptions& options,
                                 std::string_view text) const;
  Result<uint64_t> DocFreq(const ReadState& state, rocksdb::Iterator* it,
                           std::string_view term, Version version) const;
  Result<uint64_t> CountFilter(const ReadState& state, const std::string& term,
                               Version version) const;

  // merge.cc: merges segments while the policy finds a run to merge.
  // REQUIRES: write_mu_ held.
  Status MaybeMerge();
  Status MergeRun(const ReadState& state, size_t first, size_t count);

  Options options_;
  std::unique_ptr<Storage> storage_;
  std::unique_ptr<retrieval::Analyzer> analyzer_;
  retrieval::Bm25Params bm25_params_;
  FieldWeights field_weights_;
  std::string analyzer_name_;

  mutable std::mutex state_mu_;
  std::shared_ptr<const ReadState> state_;  // guarded by state_mu_

  std::mutex write_mu_;  // serializes commits and merges
  // Counters owned by the writer (guarded by write_mu_).
  uint32_t next_docid_ = 0;
  uint32_t next_segment_ = 0;
};

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_LIBRARY_IMPL_H_
