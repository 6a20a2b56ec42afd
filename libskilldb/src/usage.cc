// Usage feedback: counters per skill, cheap to bump from many threads and
// processes.
//
// In the process that holds the library for writing, an event is one
// RocksDB merge write (no read, no log sync). Other processes open the
// library read-only and cannot write to RocksDB; their events go to a spool
// file of their own in <library>/usage-spool/, one text line per event
// ("id \t event \t count \t version \n", appended with O_APPEND and written
// whole, so a line is either complete or a torn tail that is ignored). Each
// spool file is flock()ed by its writer for its lifetime.
//
// Reads add the spooled lines not yet folded to the stored counters. The
// writer folds spool files into the store when it opens the library and at
// every commit: the merges and the new folded offset of the file go in one
// batch, so a crash never counts a line twice; a file whose writer is gone
// (its lock is free) is deleted once fully folded.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "batch_writer.h"
#include "library_impl.h"
#include "usage_codec.h"
#include "usage_spool.h"
#include "usage_store.h"

namespace skilldb::internal {
namespace fs = std::filesystem;

namespace {

constexpr const char* kSpoolDir = "usage-spool";

struct SpoolLine {
  std::string id;
  UsageCounters delta;
};

// Parses the complete lines of `text`; returns the bytes they span.
size_t ParseSpool(std::string_view text, std::vector<SpoolLine>* lines) {
  size_t pos = 0;
  size_t consumed = 0;
  while (true) {
    const size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) break;
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    consumed = pos;
    // id \t event \t count \t version
    std::string_view fields[4];
    size_t start = 0;
    int n = 0;
    for (; n < 4; ++n) {
      const size_t tab = line.find('\t', start);
      fields[n] =
          line.substr(start, tab == std::string_view::npos ? line.size() - start
                                                           : tab - start);
      if (tab == std::string_view::npos) {
        ++n;
        break;
      }
      start = tab + 1;
    }
    if (n != 4) continue;  // malformed lines are skipped, never fatal
    int event = -1;
    uint64_t count = 0, version = 0;
    auto num = [](std::string_view s, auto* out) {
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
      return ec == std::errc() && p == s.data() + s.size();
    };
    if (!num(fields[1], &event) || event < 0 || event >= kNumUsageEvents ||
        !num(fields[2], &count) || !num(fields[3], &version)) {
      continue;
    }
    SpoolLine l;
    l.id.assign(fields[0]);
    l.delta.counts[event] = count;
    l.delta.last_used_version = version;
    lines->push_back(std::move(l));
  }
  return consumed;
}

std::string ReadFileFrom(const fs::path& path, uint64_t offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(static_cast<std::streamoff>(offset));
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  return text;
}

}  // namespace

UsageSpool::~UsageSpool() {
  if (fd_ >= 0) close(fd_);  // releases the flock too
}

Status UsageSpool::Open(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::mt19937_64 rng(std::random_device{}());
  const std::string name = std::to_string(getpid()) + "-" +
                           std::to_string(rng() & 0xffffffffffull) + ".log";
  path_ = (fs::path(dir) / name).string();
  fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0)
    return Status::IOError("cannot create usage spool '" + path_ + "'");
  if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    return Status::IOError("cannot lock usage spool '" + path_ + "'");
  }
  return Status::Ok();
}
Status UsageSpool::Append(const std::string& line) {
  const ssize_t n = write(fd_, line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) {
    return Status::IOError("cannot append to usage spool '" + path_ + "'");
  }
  return Status::Ok();
}

UsageStore::UsageStore(Storage& storage) : storage_(storage) {}
UsageStore::~UsageStore() = default;

std::string UsageStore::SpoolDir() const {
  return (fs::path(storage_.path()) / kSpoolDir).string();
}

Status UsageStore::Record(const std::vector<UsageRecord>& records,
                          Version head) {
  if (records.empty()) return Status::Ok();
  if (!storage_.read_only()) {
    rocksdb::WriteBatch batch;
    for (const UsageRecord& r : records) {
      UsageCounters delta;
      delta.counts[static_cast<int>(r.event)] = r.count;
      delta.last_used_version = head;
      batch.Merge(storage_.cf(kUsage), r.id, EncodeUsage(delta));
    }
    // No sync: counters are feedback, not commits.
    return storage_.Write(&batch, /*sync=*/false)
        .WithContext("recording usage");
  }
  std::string lines;
  for (const UsageRecord& r : records) {
    lines += r.id + "\t" + std::to_string(static_cast<int>(r.event)) + "\t" +
             std::to_string(r.count) + "\t" + std::to_string(head) + "\n";
  }
  std::lock_guard<std::mutex> lock(spool_mu_);
  if (!spool_) {
    auto spool = std::make_unique<UsageSpool>();
    SKILLDB_RETURN_IF_ERROR(spool->Open(SpoolDir()));
    spool_ = std::move(spool);
  }
  return spool_->Append(lines);
}

Result<std::vector<UsageCounters>> UsageStore::Of(
    const std::vector<std::string>& ids) const {
  std::vector<UsageCounters> out(ids.size());
  SKILLDB_ASSIGN_OR_RETURN(auto pending, PendingSpool());
  for (size_t i = 0; i < ids.size(); ++i) {
    SKILLDB_ASSIGN_OR_RETURN(auto value, storage_.Get(kUsage, ids[i]));
    if (value && !DecodeUsage(*value, &out[i])) {
      return Status::Corruption("malformed usage counters of '" + ids[i] + "'");
    }
    if (auto p = pending.find(ids[i]); p != pending.end()) {
      AddUsage(&out[i], p->second);
    }
  }
  return out;
}

Result<std::map<std::string, UsageCounters>> UsageStore::PendingSpool() const {
  std::map<std::string, UsageCounters> out;
  std::error_code ec;
  if (!fs::exists(SpoolDir(), ec)) return out;
  for (const auto& entry : fs::directory_iterator(SpoolDir(), ec)) {
    if (entry.path().extension() != ".log") continue;
    const std::string name = entry.path().filename().string();
    SKILLDB_ASSIGN_OR_RETURN(
        auto folded, storage_.Get(kMeta, std::string(kSpoolKeyPrefix) + name));
    const uint64_t offset =
        folded && folded->size() == 8 ? GetBe64(folded->data()) : 0;
    std::vector<SpoolLine> lines;
    ParseSpool(ReadFileFrom(entry.path(), offset), &lines);
    for (const SpoolLine& l : lines) AddUsage(&out[l.id], l.delta);
  }
  return out;
}

Status UsageStore::FoldSpools() {
  std::error_code ec;
  if (storage_.read_only() || !fs::exists(SpoolDir(), ec)) return Status::Ok();
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(SpoolDir(), ec)) {
    if (entry.path().extension() == ".log") files.push_back(entry.path());
  }
  for (const fs::path& path : files) {
    const std::string key =
        std::string(kSpoolKeyPrefix) + path.filename().string();
    SKILLDB_ASSIGN_OR_RETURN(auto folded, storage_.Get(kMeta, key));
    const uint64_t offset =
        folded && folded->size() == 8 ? GetBe64(folded->data()) : 0;
    // A free lock means the writing process is gone: fold it all, delete it.
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    const bool orphan = flock(fd, LOCK_EX | LOCK_NB) == 0;
    std::vector<SpoolLine> lines;
    const size_t consumed = ParseSpool(ReadFileFrom(path, offset), &lines);
    rocksdb::WriteBatch batch;
    for (const SpoolLine& l : lines) {
      batch.Merge(storage_.cf(kUsage), l.id, EncodeUsage(l.delta));
    }
    batch.Put(storage_.cf(kMeta), key, Be64(offset + consumed));
    Status s = storage_.Write(&batch, /*sync=*/true);
    if (s.ok() && orphan)
      fs::remove(path, ec);  // its offset key stays: no re-count
    close(fd);
    SKILLDB_RETURN_IF_ERROR(s);
  }
  // Offsets of files that no longer exist are garbage.
  auto it = storage_.NewIterator(kMeta);
  rocksdb::WriteBatch cleanup;
  for (it->Seek(kSpoolKeyPrefix);
       it->Valid() && it->key().starts_with(kSpoolKeyPrefix); it->Next()) {
    const std::string name =
        it->key().ToString().substr(kSpoolKeyPrefix.size());
    if (!fs::exists(fs::path(SpoolDir()) / name, ec))
      cleanup.Delete(storage_.cf(kMeta), it->key());
  }
  if (cleanup.Count() > 0)
    SKILLDB_RETURN_IF_ERROR(storage_.Write(&cleanup, true));
  return Status::Ok();
}

Status UsageStore::Scan(
    const std::function<bool(const std::string& id,
                             const UsageCounters& counters)>& fn) const {
  SKILLDB_ASSIGN_OR_RETURN(auto all, PendingSpool());
  auto it = storage_.NewIterator(kUsage);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    UsageCounters c;
    if (!DecodeUsage(std::string_view(it->value().data(), it->value().size()),
                     &c)) {
      return Status::Corruption("malformed usage counters");
    }
    AddUsage(&all[it->key().ToString()], c);
  }
  SKILLDB_RETURN_IF_ERROR(FromRocks(it->status(), "reading usage"));
  for (const auto& [id, c] : all) {
    if (!fn(id, c)) break;
  }
  return Status::Ok();
}

// The library's side: what a usage record must name (a skill live at the
// head), checked against the library's state.

Status LibraryImpl::RecordUsage(std::string_view id, UsageEvent event,
                                uint64_t count) {
  return RecordUsage({UsageRecord{std::string(id), event, count}});
}

Status LibraryImpl::RecordUsage(const std::vector<UsageRecord>& records) {
  auto s = state();
  for (const UsageRecord& r : records) {
    SKILLDB_RETURN_IF_ERROR(ValidateSkillId(r.id));
    const int e = static_cast<int>(r.event);
    if (e < 0 || e >= kNumUsageEvents) {
      return Status::InvalidArgument("unknown usage event for '" + r.id + "'");
    }
    if (r.count > kMaxUsageCount) {
      return Status::InvalidArgument(
          "usage count " + std::to_string(r.count) + " for '" + r.id +
          "' is over the limit of " + std::to_string(kMaxUsageCount) +
          " per record");
    }
    SKILLDB_ASSIGN_OR_RETURN(auto rev, ReadRevision(*s, r.id, s->head));
    if (!rev || rev->kind != RevisionKind::kPut) {
      return Status::NotFound("skill '" + r.id +
                              "' does not exist at version " +
                              std::to_string(s->head));
    }
  }
  return usage_->Record(records, s->head);
}

Result<UsageCounters> LibraryImpl::GetUsage(std::string_view id) {
  SKILLDB_RETURN_IF_ERROR(ValidateSkillId(id));
  SKILLDB_ASSIGN_OR_RETURN(auto counters, usage_->Of({std::string(id)}));
  return counters.front();
}

Status LibraryImpl::ScanUsage(
    const std::function<bool(const std::string& id,
                             const UsageCounters& counters)>& fn) {
  return usage_->Scan(fn);
}

}  // namespace skilldb::internal
