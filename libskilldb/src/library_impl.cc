#include "library_impl.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "analysis.h"
#include "audit_log.h"
#include "merger.h"
#include "records.h"
#include "retention.h"
#include "staging.h"
#include "usage_store.h"

namespace skilldb {

Result<std::unique_ptr<Library>> Library::Open(const Options& options,
                                               std::string_view path) {
  return internal::LibraryImpl::Open(options, path);
}

namespace internal {
namespace {

std::string FormatDouble(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

Result<double> ParseDouble(const std::optional<std::string>& s,
                           std::string_view what) {
  if (!s) return Status::Corruption(std::string(what) + " is missing");
  double v = 0;
  auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
  if (ec != std::errc() || end != s->data() + s->size()) {
    return Status::Corruption(std::string(what) + " is malformed");
  }
  return v;
}

Result<uint64_t> ReadCounter(const Storage& storage, std::string_view key,
                             size_t width) {
  SKILLDB_ASSIGN_OR_RETURN(auto value, storage.Get(kMeta, key));
  if (!value) return uint64_t{0};
  if (value->size() != width) {
    return Status::Corruption("meta value '" + std::string(key) +
                              "' is malformed");
  }
  return width == 4 ? GetBe32(value->data()) : GetBe64(value->data());
}

}  // namespace

namespace {

namespace fs = std::filesystem;

// Whether `path` holds a database (its CURRENT file).
bool HasDatabase(const std::string& path) {
  std::error_code ec;
  return fs::exists(fs::path(path) / "CURRENT", ec);
}

// The prefix of the directories a library at `path` is built in before it
// is renamed into place: ".NAME.creating-" beside it.
std::string BuildPrefix(const fs::path& path) {
  return "." + path.filename().string() + ".creating-";
}

// Removes the build directories of creators that died (their pid is gone).
void RemoveStaleBuilds(const fs::path& path) {
  std::error_code ec;
  const std::string prefix = BuildPrefix(path);
  for (auto it = fs::directory_iterator(path.parent_path(), ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
}

}  // namespace

Result<std::unique_ptr<Library>> LibraryImpl::Open(const Options& options,
                                                   std::string_view path_view) {
  // A new library is built beside its path and renamed into place, so no
  // other process ever opens one half-made (no column families yet, or no
  // meta), and of several creating it at once exactly one creates it: the
  // others find it there and open it (or, with error_if_exists, say so).
  const std::string path(path_view);
  if (options.create_if_missing && !options.read_only && !HasDatabase(path)) {
    fs::path target = fs::absolute(fs::path(path)).lexically_normal();
    if (target.filename().empty()) target = target.parent_path();
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    if (ec) {
      return Status::IOError("cannot create '" + target.parent_path().string() +
                             "': " + ec.message());
    }
    RemoveStaleBuilds(target);
    std::string build =
        (target.parent_path() /
         (BuildPrefix(target) + std::to_string(getpid()) + "-XXXXXX"))
            .string();
    if (mkdtemp(build.data()) == nullptr) {
      return Status::IOError("cannot create a directory beside '" + path +
                             "': " + std::strerror(errno));
    }
    Options create = options;
    create.error_if_exists = false;
    Status built = OpenHere(create, build).status();
    if (built.ok() && !HasDatabase(path)) {
      // rename(2) replaces an empty directory and fails on a non-empty one:
      // then another process won the race (or the path holds something
      // else, which the open below reports).
      if (std::rename(build.c_str(), path.c_str()) == 0) {
        Options open = options;
        open.error_if_exists = false;
        return OpenHere(open, path);
      }
    }
    fs::remove_all(build, ec);
    if (!built.ok()) return built;
  }
  return OpenHere(options, path);
}

Result<std::unique_ptr<Library>> LibraryImpl::OpenHere(const Options& options,
                                                       std::string_view path) {
  // The enum is the API's; its name is what the engine stores and what
  // retrieval parses (a value outside the enum has no name and fails here).
  SKILLDB_RETURN_IF_ERROR(
      retrieval::ParseAnalyzerKind(AnalyzerName(options.analyzer)).status());
  SKILLDB_RETURN_IF_ERROR(
      retrieval::ValidateBm25Params({options.k1, options.b}));
  SKILLDB_RETURN_IF_ERROR(ValidateFieldWeights(options.field_weights));
  if (options.merge_factor < 2) {
    return Status::InvalidArgument("merge_factor must be at least 2");
  }
  if (options.segment_build_bytes == 0) {
    return Status::InvalidArgument("segment_build_bytes must be positive");
  }
  auto impl = std::unique_ptr<LibraryImpl>(new LibraryImpl());
  impl->options_ = options;
  if (options.posting_cache_bytes > 0) {
    impl->posting_cache_ =
        std::make_unique<BlobCache>(options.posting_cache_bytes);
  }
  bool created = false;
  SKILLDB_ASSIGN_OR_RETURN(impl->storage_,
                           Storage::Open(options, std::string(path), &created));
  impl->audit_ = std::make_unique<AuditLog>(*impl->storage_, impl->options_);
  impl->usage_ = std::make_unique<UsageStore>(*impl->storage_);
  impl->merger_ = std::make_unique<Merger>(*impl->storage_, impl->options_,
                                           impl->published_, impl->counters_);
  impl->retention_ = std::make_unique<Retention>(
      *impl->storage_, impl->published_, *impl->merger_);
  SKILLDB_RETURN_IF_ERROR(impl->Initialize(options, created));
  if (!options.read_only) {
    SKILLDB_RETURN_IF_ERROR(
        RecoverStaging(*impl->storage_, impl->counters_.next_segment));
  }
  SKILLDB_RETURN_IF_ERROR(impl->LoadState());
  if (!options.read_only) {
    SKILLDB_RETURN_IF_ERROR(impl->audit_->Load());
    SKILLDB_RETURN_IF_ERROR(impl->usage_->FoldSpools());
    SKILLDB_RETURN_IF_ERROR(impl->RecoverQueue());
  }
  return std::unique_ptr<Library>(std::move(impl));
}

LibraryImpl::~LibraryImpl() {
  // Drop the published state (and its snapshot) before the database.
  published_.Reset();
  if (storage_ && !storage_->read_only()) storage_->FlushIfLogIsLarge();
}

Status LibraryImpl::Initialize(const Options& options, bool created) {
  if (!created) {
    // A process killed while creating the library leaves a database whose
    // meta batch never landed: nothing was acknowledged, so it is a library
    // still to be created, not a corrupt one.
    SKILLDB_ASSIGN_OR_RETURN(auto format, storage_->Get(kMeta, kFormatKey));
    if (!format) {
      auto it = storage_->NewIterator(kMeta);
      it->SeekToFirst();
      SKILLDB_RETURN_IF_ERROR(FromRocks(it->status(), "reading meta"));
      if (!it->Valid()) {
        if (!options.create_if_missing || options.read_only) {
          return Status::NotFound("no library at '" + storage_->path() +
                                  "' (its creation was interrupted)");
        }
        created = true;
      }
    }
  }
  if (created) {
    rocksdb::WriteBatch batch;
    auto put = [&](std::string_view k, std::string_view v) {
      batch.Put(storage_->cf(kMeta), rocksdb::Slice(k.data(), k.size()),
                rocksdb::Slice(v.data(), v.size()));
    };
    put(kFormatKey, kFormatValue);
    put(kAnalyzerKey, std::string(AnalyzerName(options.analyzer)));
    put(kK1Key, FormatDouble(options.k1));
    put(kBKey, FormatDouble(options.b));
    put(kFieldWeightsKey, FormatFieldWeights(options.field_weights));
    put(kHeadKey, Be64(0));
    put(kOldestKey, Be64(0));
    put(kNextDocidKey, Be32(0));
    put(kNextSegmentKey, Be32(0));
    put(kManifestKey, EncodeManifest({}));
    SKILLDB_RETURN_IF_ERROR(storage_->Write(&batch, /*sync=*/true));
  }
  SKILLDB_ASSIGN_OR_RETURN(auto format, storage_->Get(kMeta, kFormatKey));
  const std::string stored_format = format.value_or("");
  if (stored_format != kFormatValue && stored_format.starts_with("skilldb-")) {
    return Status::FailedPrecondition(
        "library format '" + stored_format + "' at '" + storage_->path() +
        "' is not the one this build reads ('" + std::string(kFormatValue) +
        "'): export it with the build that made it and import the JSONL here");
  }
  if (stored_format != kFormatValue) {
    return Status::Corruption(
        "'" + storage_->path() + "' is not a skilldb library (format " +
        (format ? "'" + stored_format + "'" : "missing") + ")");
  }
  SKILLDB_ASSIGN_OR_RETURN(auto analyzer, storage_->Get(kMeta, kAnalyzerKey));
  if (!analyzer) return Status::Corruption("analyzer setting is missing");
  SKILLDB_ASSIGN_OR_RETURN(retrieval::AnalyzerKind kind,
                           retrieval::ParseAnalyzerKind(*analyzer));
  analyzer_ = retrieval::MakeAnalyzer(kind);
  SKILLDB_ASSIGN_OR_RETURN(analyzer_kind_, ParseAnalyzer(*analyzer));
  SKILLDB_ASSIGN_OR_RETURN(auto k1, storage_->Get(kMeta, kK1Key));
  SKILLDB_ASSIGN_OR_RETURN(auto b, storage_->Get(kMeta, kBKey));
  SKILLDB_ASSIGN_OR_RETURN(bm25_params_.k1, ParseDouble(k1, "bm25.k1"));
  SKILLDB_ASSIGN_OR_RETURN(bm25_params_.b, ParseDouble(b, "bm25.b"));
  SKILLDB_ASSIGN_OR_RETURN(auto weights,
                           storage_->Get(kMeta, kFieldWeightsKey));
  // Libraries made before field weights existed index plain joined text.
  if (weights) {
    SKILLDB_ASSIGN_OR_RETURN(field_weights_, ParseFieldWeights(*weights));
  } else {
    field_weights_ = FieldWeights{1, 1, 1, 1, 1, 1};
  }
  SKILLDB_ASSIGN_OR_RETURN(uint64_t docid,
                           ReadCounter(*storage_, kNextDocidKey, 4));
  SKILLDB_ASSIGN_OR_RETURN(uint64_t seg,
                           ReadCounter(*storage_, kNextSegmentKey, 4));
  counters_.next_docid = static_cast<uint32_t>(docid);
  counters_.next_segment = static_cast<uint32_t>(seg);
  return Status::Ok();
}

// staging.h
Status RecoverStaging(Storage& storage, uint32_t next_segment) {
  SKILLDB_ASSIGN_OR_RETURN(auto staging, storage.Get(kMeta, kStagingKey));
  if (!staging) return Status::Ok();
  if (staging->size() != 8)
    return Status::Corruption("malformed staging marker");
  const Version version = GetBe64(staging->data());
  SKILLDB_ASSIGN_OR_RETURN(uint64_t head, ReadCounter(storage, kHeadKey, 8));
  rocksdb::WriteBatch batch;
  if (head < version) {
    const std::string prefix = Be64(version);
    auto it = storage.NewIterator(kChanges);
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix);
         it->Next()) {
      const std::string id = it->key().ToString().substr(8);
      batch.Delete(storage.cf(kRevisions), RevisionKey(id, version));
      batch.Delete(storage.cf(kChanges), it->key());
    }
    SKILLDB_RETURN_IF_ERROR(FromRocks(it->status(), "recovering staging"));
  }
  // Persisted segments all have ids below next_segment (it is written in
  // the same batch as the manifest that names them).
  const std::string from = Be32(next_segment);
  const std::string to(5, '\xff');
  batch.DeleteRange(storage.cf(kDocTables), from, to);
  batch.DeleteRange(storage.cf(kPostings), from, to);
  batch.Delete(storage.cf(kMeta), std::string(kStagingKey));
  return storage.Write(&batch, /*sync=*/true);
}

Status RecoverAbandonedStaging(Storage& storage, uint32_t next_segment) {
  if (!storage.staging_abandoned()) return Status::Ok();
  SKILLDB_RETURN_IF_ERROR(RecoverStaging(storage, next_segment)
                              .WithContext("removing what a failed commit staged"));
  storage.set_staging_abandoned(false);
  return Status::Ok();
}

Status LibraryImpl::LoadState() {
  auto next = std::make_shared<ReadState>();
  next->snapshot = storage_->NewSnapshot();
  SKILLDB_ASSIGN_OR_RETURN(next->head, ReadCounter(*storage_, kHeadKey, 8));
  SKILLDB_ASSIGN_OR_RETURN(next->oldest, ReadCounter(*storage_, kOldestKey, 8));
  SKILLDB_ASSIGN_OR_RETURN(auto manifest, storage_->Get(kMeta, kManifestKey));
  if (!manifest) return Status::Corruption("manifest is missing");
  SKILLDB_ASSIGN_OR_RETURN(auto metas, DecodeManifest(*manifest));
  for (const SegmentMeta& m : metas) {
    next->segments.push_back(std::make_shared<Segment>(m));
  }
  if (next->head > 0) {
    SKILLDB_ASSIGN_OR_RETURN(
        next->head_commit,
        ReadCommit(*next, next->head, &next->head_counts));
  }
  auto tags = storage_->NewIterator(kTags, next->snap());
  for (tags->SeekToFirst(); tags->Valid(); tags->Next()) {
    if (tags->value().size() != 8) return Status::Corruption("malformed tag");
    next->tagged.push_back(GetBe64(tags->value().data()));
  }
  SKILLDB_RETURN_IF_ERROR(FromRocks(tags->status(), "reading tags"));
  std::sort(next->tagged.begin(), next->tagged.end());
  Publish(std::move(next));
  return Status::Ok();
}

std::shared_ptr<const ReadState> LibraryImpl::state() const {
  return published_.Get();
}

void LibraryImpl::Publish(std::shared_ptr<const ReadState> next) {
  published_.Publish(std::move(next));
}

Result<std::optional<StoredRevision>> LibraryImpl::ReadRevision(
    const ReadState& state, std::string_view id, Version version) const {
  auto it = storage_->NewIterator(kRevisions, state.snap());
  const std::string prefix = RevisionPrefix(id);
  it->Seek(RevisionKey(id, version));
  SKILLDB_RETURN_IF_ERROR(FromRocks(it->status(), "reading a revision"));
  if (!it->Valid() || !it->key().starts_with(prefix)) {
    return std::optional<StoredRevision>();
  }
  std::string_view key_id;
  SKILLDB_ASSIGN_OR_RETURN(StoredRevision rev, DecodeRevisionAt(*it, &key_id));
  return std::optional<StoredRevision>(std::move(rev));
}

Result<StoredRevision> DecodeRevisionAt(const rocksdb::Iterator& it,
                                        std::string_view* id) {
  StoredRevision rev;
  RevisionValue value;
  if (!ParseRevisionKey(std::string_view(it.key().data(), it.key().size()), id,
                        &rev.version) ||
      !DecodeRevision(std::string_view(it.value().data(), it.value().size()),
                      &value)) {
    return Status::Corruption("malformed revision entry");
  }
  rev.kind = value.kind;
  rev.docid = value.docid;
  rev.skill_json.assign(value.skill_json);
  return rev;
}

Result<Revision> ToRevision(const StoredRevision& stored) {
  Revision rev;
  rev.version = stored.version;
  rev.deleted = stored.kind == RevisionKind::kDelete;
  if (!rev.deleted) {
    SKILLDB_ASSIGN_OR_RETURN(rev.skill, ParseSkillJson(stored.skill_json));
  }
  return rev;
}

Result<CommitInfo> LibraryImpl::ReadCommit(
    const ReadState& state, Version version,
    std::optional<SkillCounts>* counts) const {
  SKILLDB_ASSIGN_OR_RETURN(
      auto value, storage_->Get(kCommits, Be64(version), state.snap()));
  if (!value) {
    return Status::NotFound("no commit record for version " +
                            std::to_string(version));
  }
  return DecodeCommit(*value, counts);
}

LibraryInfo LibraryImpl::Info() const {
  auto s = state();
  LibraryInfo info;
  info.path = storage_->path();
  info.analyzer = analyzer_kind_;
  info.k1 = bm25_params_.k1;
  info.b = bm25_params_.b;
  info.field_weights = field_weights_;
  info.read_only = storage_->read_only();
  info.head = s->head;
  info.oldest_retained = s->oldest;
  return info;
}

Version LibraryImpl::CurrentVersion() const { return state()->head; }

Result<Skill> LibraryImpl::Get(std::string_view id,
                               const ReadOptions& options) {
  SKILLDB_RETURN_IF_ERROR(ValidateSkillId(id));
  auto s = state();
  SKILLDB_ASSIGN_OR_RETURN(Version version, ResolveVersion(*s, options.as_of));
  SKILLDB_ASSIGN_OR_RETURN(auto rev, ReadRevision(*s, id, version));
  if (!rev || rev->kind == RevisionKind::kDelete) {
    return Status::NotFound("skill '" + std::string(id) +
                            "' does not exist at version " +
                            std::to_string(version));
  }
  return ParseSkillJson(rev->skill_json);
}

// Walks the revisions column family once: for each id, the first key at or
// before `version` decides; the rest of that id's keys are skipped by
// seeking past its prefix.
Status LibraryImpl::Scan(const ReadOptions& options,
                         const std::function<bool(const Skill&)>& fn) {
  auto s = state();
  SKILLDB_ASSIGN_OR_RETURN(Version version, ResolveVersion(*s, options.as_of));
  return ScanAt(*s, version, fn);
}

Status LibraryImpl::ScanAt(const ReadState& state, Version version,
                           const std::function<bool(const Skill&)>& fn) const {
  auto it = storage_->NewIterator(kRevisions, state.snap());
  it->SeekToFirst();
  while (it->Valid()) {
    std::string_view id;
    SKILLDB_ASSIGN_OR_RETURN(StoredRevision rev, DecodeRevisionAt(*it, &id));
    const std::string id_copy(id);
    if (rev.version > version) {
      it->Seek(RevisionKey(id_copy, version));
      if (!it->Valid() || !it->key().starts_with(RevisionPrefix(id_copy))) {
        continue;
      }
      SKILLDB_ASSIGN_OR_RETURN(rev, DecodeRevisionAt(*it, &id));
    }
    if (rev.kind == RevisionKind::kPut) {
      SKILLDB_ASSIGN_OR_RETURN(Skill skill, ParseSkillJson(rev.skill_json));
      if (!fn(skill)) return Status::Ok();
    }
    // Skip the id's older revisions: '\x01' sorts after the '\0' separator.
    it->Seek(id_copy + '\x01');
  }
  return FromRocks(it->status(), "scanning skills");
}

// The parts behind narrow interfaces (merger.h, retention.h), ordered by
// the write lock.

Status LibraryImpl::Tag(std::string_view name, Version version) {
  std::lock_guard<std::mutex> lock(write_mu_);
  return retention_->Tag(name, version);
}

Status LibraryImpl::DeleteTag(std::string_view name) {
  std::lock_guard<std::mutex> lock(write_mu_);
  return retention_->DeleteTag(name);
}

Result<std::vector<TagInfo>> LibraryImpl::Tags() { return retention_->Tags(); }

Result<GcReport> LibraryImpl::Gc(const GcOptions& options) {
  std::lock_guard<std::mutex> lock(write_mu_);
  return retention_->Gc(options);
}

Status LibraryImpl::Compact() {
  if (storage_->read_only())
    return Status::FailedPrecondition("library is open read-only");
  std::lock_guard<std::mutex> lock(write_mu_);
  return merger_->MergeAllAndCompact();
}

}  // namespace internal
}  // namespace skilldb
