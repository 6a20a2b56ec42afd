// The audit log: an append-only record of every proposal outcome.
//
// Entries are keyed by a sequence number allocated under the write lock.
// An accepted proposal's entry is written in the same batch as its commit,
// so the log never claims a commit that did not happen (or misses one that
// did); other entries are written on their own.
#include <chrono>
#include <nlohmann/json.hpp>

#include "audit_log.h"
#include "batch_writer.h"
#include "library_impl.h"
#include "skilldb/util/clock.h"
#include "skilldb/util/json.h"

namespace skilldb::internal {
namespace {

AuditEntry ParseAuditJson(std::string_view text) {
  AuditEntry e;
  e.json.assign(text);
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return e;
  e.seq = j.value("seq", uint64_t{0});
  e.time_ms = j.value("time_ms", int64_t{0});
  e.event = j.value("event", std::string());
  e.proposal_id = j.value("proposal_id", std::string());
  e.skill_id = j.value("skill_id", std::string());
  e.author = j.value("author", std::string());
  e.base_version = j.value("base_version", Version{0});
  e.version = j.value("version", Version{0});
  if (j.contains("reasons") && j["reasons"].is_array()) {
    for (const auto& r : j["reasons"]) {
      if (r.is_string()) e.reasons.push_back(r.get<std::string>());
    }
  }
  return e;
}

}  // namespace

Status AuditLog::Load() {
  auto it = storage_.NewIterator(kAudit);
  it->SeekToLast();
  next_seq_ = 1;
  if (it->Valid()) {
    if (it->key().size() != 8) return Status::Corruption("malformed audit key");
    next_seq_ = GetBe64(it->key().data()) + 1;
  }
  return FromRocks(it->status(), "reading the audit log");
}

uint64_t AuditLog::Add(BatchWriter& writer, const std::string& entry_json) {
  const uint64_t seq = next_seq_++;
  auto j = nlohmann::ordered_json::parse(entry_json);
  nlohmann::ordered_json out;
  out["seq"] = seq;
  out["time_ms"] = util::NowUnixMs();
  for (auto& [k, v] : j.items()) out[k] = v;
  writer.Put(kAudit, Be64(seq), util::DumpLossy(out));
  return seq;
}

Result<uint64_t> AuditLog::Write(const std::string& entry_json,
                                 Version next_version) {
  BatchWriter writer(storage_, options_, next_version);
  const uint64_t seq = Add(writer, entry_json);
  Status s = writer.Finish(options_.sync_commits);
  if (!s.ok()) {
    --next_seq_;
    return s;
  }
  return seq;
}

Result<std::vector<AuditEntry>> AuditLog::Read(
    const AuditOptions& options) const {
  // The log is not versioned: read it as it is now, not as of a snapshot.
  auto it = storage_.NewIterator(kAudit);
  std::vector<AuditEntry> out;
  if (options.limit > 0) {
    // The newest `limit` entries after after_seq, returned oldest first.
    for (it->SeekToLast(); it->Valid() && out.size() < options.limit;
         it->Prev()) {
      if (GetBe64(it->key().data()) <= options.after_seq) break;
      out.push_back(ParseAuditJson(
          std::string_view(it->value().data(), it->value().size())));
    }
    std::reverse(out.begin(), out.end());
  } else {
    for (it->Seek(Be64(options.after_seq + 1)); it->Valid(); it->Next()) {
      out.push_back(ParseAuditJson(
          std::string_view(it->value().data(), it->value().size())));
    }
  }
  SKILLDB_RETURN_IF_ERROR(FromRocks(it->status(), "reading the audit log"));
  return out;
}

// The library's side: the write lock that orders entries and commits.

Result<std::vector<AuditEntry>> LibraryImpl::Audit(
    const AuditOptions& options) {
  return audit_->Read(options);
}

Result<uint64_t> LibraryImpl::WriteAudit(const std::string& entry_json) {
  std::lock_guard<std::mutex> lock(write_mu_);
  return WriteAuditLocked(entry_json);
}

Result<uint64_t> LibraryImpl::WriteAuditLocked(const std::string& entry_json) {
  return audit_->Write(entry_json, state()->head + 1);
}

}  // namespace skilldb::internal
