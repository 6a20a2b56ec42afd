// History, the commit log, diffs and statistics.
#include <algorithm>
#include <map>

#include "library_impl.h"
#include "records.h"

namespace skilldb::internal {

Result<std::vector<Revision>> LibraryImpl::History(std::string_view id) {
  SKILLDB_RETURN_IF_ERROR(ValidateSkillId(id));
  auto s = state();
  const std::string prefix = RevisionPrefix(id);
  auto it = storage_->NewIterator(kRevisions, s->snap());
  std::vector<Revision> out;
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix);
       it->Next()) {
    std::string_view key_id;
    SKILLDB_ASSIGN_OR_RETURN(StoredRevision stored,
                             DecodeRevisionAt(*it, &key_id));
    if (stored.version > s->head) continue;  // a commit still being staged
    SKILLDB_ASSIGN_OR_RETURN(Revision rev, ToRevision(stored));
    out.push_back(std::move(rev));
  }
  SKILLDB_RETURN_IF_ERROR(FromRocks(it->status(), "reading history"));
  if (out.empty()) {
    return Status::NotFound("skill '" + std::string(id) + "' has no history");
  }
  return out;
}

Result<CommitInfo> LibraryImpl::GetCommit(Version version) {
  auto s = state();
  if (version == 0 || version > s->head) {
    return Status::NotFound("version " + std::to_string(version) +
                            " does not exist (versions are 1.." +
                            std::to_string(s->head) + ")");
  }
  return ReadCommit(*s, version);
}

Result<std::vector<CommitInfo>> LibraryImpl::Log(const LogOptions& options) {
  auto s = state();
  Version from = options.from.value_or(s->head);
  if (from > s->head) {
    return Status::NotFound("version " + std::to_string(from) +
                            " does not exist (the newest is " +
                            std::to_string(s->head) + ")");
  }
  std::vector<CommitInfo> out;
  auto it = storage_->NewIterator(kCommits, s->snap());
  for (it->SeekForPrev(Be64(from)); it->Valid(); it->Prev()) {
    if (options.limit != 0 && out.size() >= options.limit) break;
    SKILLDB_ASSIGN_OR_RETURN(
        CommitInfo c,
        DecodeCommit(std::string_view(it->value().data(), it->value().size())));
    out.push_back(std::move(c));
  }
  SKILLDB_RETURN_IF_ERROR(FromRocks(it->status(), "reading the log"));
  return out;
}

Result<std::vector<Change>> LibraryImpl::CommitChanges(Version version) {
  auto s = state();
  if (version == 0 || version > s->head) {
    return Status::NotFound("version " + std::to_string(version) +
                            " does not exist");
  }
  const std::string prefix = Be64(version);
  std::vector<Change> out;
  auto it = storage_->NewIterator(kChanges, s->snap());
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix);
       it->Next()) {
    Change change;
    change.id = it->key().ToString().substr(8);
    SKILLDB_ASSIGN_OR_RETURN(
        change.kind, DecodeChangeKind(std::string_view(it->value().data(),
                                                       it->value().size())));
    out.push_back(std::move(change));
  }
  SKILLDB_RETURN_IF_ERROR(FromRocks(it->status(), "reading changes"));
  return out;
}

// The ids changed between the two versions are those in the changes of the
// commits in between; each is compared as of both ends.
Result<std::vector<DiffEntry>> LibraryImpl::Diff(Version from, Version to) {
  auto s = state();
  SKILLDB_RETURN_IF_ERROR(ResolveVersion(*s, from).status());
  SKILLDB_RETURN_IF_ERROR(ResolveVersion(*s, to).status());
  const Version lo = std::min(from, to);
  const Version hi = std::max(from, to);
  std::map<std::string, bool> ids;  // ordered output
  auto it = storage_->NewIterator(kChanges, s->snap());
  for (it->Seek(Be64(lo + 1)); it->Valid(); it->Next()) {
    if (it->key().size() < 8 || GetBe64(it->key().data()) > hi) break;
    ids.emplace(it->key().ToString().substr(8), true);
  }
  SKILLDB_RETURN_IF_ERROR(FromRocks(it->status(), "reading changes"));
  std::vector<DiffEntry> out;
  for (const auto& [id, unused] : ids) {
    SKILLDB_ASSIGN_OR_RETURN(auto before, ReadRevision(*s, id, from));
    SKILLDB_ASSIGN_OR_RETURN(auto after, ReadRevision(*s, id, to));
    const bool had = before && before->kind == RevisionKind::kPut;
    const bool has = after && after->kind == RevisionKind::kPut;
    if (!had && !has) continue;
    if (had && has && before->skill_json == after->skill_json) continue;
    DiffEntry entry;
    entry.id = id;
    entry.kind = !had ? ChangeKind::kAdded
                      : (!has ? ChangeKind::kDeleted : ChangeKind::kUpdated);
    if (had) {
      SKILLDB_ASSIGN_OR_RETURN(Skill skill, ParseSkillJson(before->skill_json));
      entry.before = std::move(skill);
    }
    if (has) {
      SKILLDB_ASSIGN_OR_RETURN(Skill skill, ParseSkillJson(after->skill_json));
      entry.after = std::move(skill);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

Result<LibraryStats> LibraryImpl::Stats(const ReadOptions& options) {
  auto s = state();
  SKILLDB_ASSIGN_OR_RETURN(Version version, ResolveVersion(*s, options.as_of));
  LibraryStats stats;
  stats.version = version;
  if (version > 0) {
    CommitInfo c = s->head_commit;
    if (version != s->head) {
      SKILLDB_ASSIGN_OR_RETURN(c, ReadCommit(*s, version));
    }
    stats.num_skills = c.num_skills;
    stats.total_length = c.total_length;
    stats.avg_length = c.num_skills == 0
                           ? 0.0
                           : static_cast<double>(c.total_length) /
                                 static_cast<double>(c.num_skills);
  }
  SKILLDB_ASSIGN_OR_RETURN(const SkillCounts counts, CountsAt(*s, version));
  stats.candidate = counts.candidate;
  stats.active = counts.active;
  stats.deprecated = counts.deprecated;
  stats.pruned = counts.pruned;
  stats.cuda = counts.cuda;
  stats.triton = counts.triton;
  stats.any_language = counts.any_language;
  stats.unverified = counts.unverified;
  stats.provisional = counts.provisional;
  stats.trusted = counts.trusted;
  stats.num_segments = s->segments.size();
  for (const auto& seg : s->segments) stats.num_documents += seg->meta().count;
  stats.disk_bytes = storage_->DiskBytes();
  for (int cf = 0; cf < kNumCfs; ++cf) {
    uint64_t bytes = 0;
    storage_->db()->GetIntProperty(storage_->cf(static_cast<Cf>(cf)),
                                   "rocksdb.total-sst-files-size", &bytes);
    switch (cf) {
      case kPostings:
      case kDocTables:
      case kDfs:
      case kEnds:
        stats.index_table_bytes += bytes;
        break;
      case kRevisions:
      case kCommits:
      case kChanges:
      case kHashes:
        stats.record_table_bytes += bytes;
        break;
      default:
        stats.other_table_bytes += bytes;
    }
  }
  return stats;
}

Status LibraryImpl::ScanRevisions(
    const std::function<bool(const std::string& id, const Revision& rev)>& fn) {
  auto s = state();
  auto it = storage_->NewIterator(kRevisions, s->snap());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view id;
    SKILLDB_ASSIGN_OR_RETURN(StoredRevision stored, DecodeRevisionAt(*it, &id));
    if (stored.version > s->head) continue;  // staged, not committed
    SKILLDB_ASSIGN_OR_RETURN(Revision rev, ToRevision(stored));
    if (!fn(std::string(id), rev)) return Status::Ok();
  }
  return FromRocks(it->status(), "scanning revisions");
}

}  // namespace skilldb::internal
