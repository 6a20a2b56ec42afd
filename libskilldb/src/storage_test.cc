// The engine under write faults (issue 14, part 3): a file system that
// fails writes with ENOSPC or EIO from a chosen point on. A failed commit is
// a clean error naming the file, nothing partial becomes visible, and the
// library opens intact once the fault is gone.
#include "storage.h"

#include <doctest/doctest.h>
#include <rocksdb/file_system.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "../../tests/test_util.h"
#include "skilldb/library.h"

namespace skilldb {
namespace {

using testing::TempDir;

enum class Fault { kNone, kNoSpace, kIo };

// Fails every write (append, sync, creating a file) once armed.
class FaultFs : public rocksdb::FileSystemWrapper {
 public:
  FaultFs() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}
  const char* Name() const override { return "FaultFs"; }

  // Fails every write after the next `after` ones.
  void Arm(Fault fault, int after = 0) {
    countdown_.store(after);
    fault_.store(fault);
  }
  int failures() const { return failures_.load(); }

  // Whether this write fails (counting it down if armed).
  bool Fails() {
    if (fault_.load() == Fault::kNone) return false;
    return countdown_.fetch_sub(1) <= 0;
  }
  rocksdb::IOStatus Error(const std::string& file) {
    ++failures_;
    return fault_.load() == Fault::kNoSpace
               ? rocksdb::IOStatus::NoSpace("While appending to file",
                                            file + ": No space left on device")
               : rocksdb::IOStatus::IOError("While appending to file",
                                            file + ": Input/output error");
  }

  rocksdb::IOStatus NewWritableFile(
      const std::string& fname, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override {
    if (Fails()) return Error(fname);
    std::unique_ptr<rocksdb::FSWritableFile> file;
    auto s = target()->NewWritableFile(fname, options, &file, dbg);
    if (s.ok()) result->reset(new File(this, fname, std::move(file)));
    return s;
  }

 private:
  class File : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    File(FaultFs* fs, std::string name,
         std::unique_ptr<rocksdb::FSWritableFile> file)
        : FSWritableFileOwnerWrapper(std::move(file)),
          fs_(fs),
          name_(std::move(name)) {}
    rocksdb::IOStatus Append(const rocksdb::Slice& data,
                             const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override {
      if (fs_->Fails()) return fs_->Error(name_);
      return FSWritableFileOwnerWrapper::Append(data, options, dbg);
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data,
                             const rocksdb::IOOptions& options,
                             const rocksdb::DataVerificationInfo& info,
                             rocksdb::IODebugContext* dbg) override {
      if (fs_->Fails()) return fs_->Error(name_);
      return FSWritableFileOwnerWrapper::Append(data, options, info, dbg);
    }
    rocksdb::IOStatus Sync(const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
      if (fs_->Fails()) return fs_->Error(name_);
      return FSWritableFileOwnerWrapper::Sync(options, dbg);
    }
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options,
                            rocksdb::IODebugContext* dbg) override {
      if (fs_->Fails()) return fs_->Error(name_);
      return FSWritableFileOwnerWrapper::Fsync(options, dbg);
    }

   private:
    FaultFs* fs_;
    std::string name_;
  };

  std::atomic<Fault> fault_{Fault::kNone};
  std::atomic<int> failures_{0};
  std::atomic<int> countdown_{0};
};

// Restores the default file system when a test ends, however it ends.
struct UseFileSystem {
  explicit UseFileSystem(std::shared_ptr<rocksdb::FileSystem> fs) {
    internal::SetFileSystemForTesting(std::move(fs));
  }
  ~UseFileSystem() { internal::SetFileSystemForTesting(nullptr); }
};

std::vector<Skill> Many(const std::string& prefix, int n) {
  std::vector<Skill> skills;
  for (int i = 0; i < n; ++i) {
    Skill s = Skill::Make(prefix + std::to_string(i),
                          "shared memory tiling number " + std::to_string(i));
    s.body = std::string(200, 'x');
    skills.push_back(s);
  }
  return skills;
}

void ExpectIntact(const std::string& path, uint64_t skills, Version head) {
  Options o;
  o.create_if_missing = false;
  auto lib = Library::Open(o, path);
  REQUIRE_MESSAGE(lib.ok(), lib.status().ToString());
  CHECK((*lib)->CurrentVersion() == head);
  auto stats = (*lib)->Stats({});
  REQUIRE(stats.ok());
  CHECK(stats->num_skills == skills);
  auto hits = (*lib)->Query(QueryOptions{.k = 5}, "shared memory tiling");
  REQUIRE(hits.ok());
  CHECK(!hits->hits.empty());
  auto report = (*lib)->Check();
  REQUIRE(report.ok());
  const std::string first =
      report->problems.empty() ? "" : report->problems.front();
  CHECK_MESSAGE(report->ok(), first);
}

TEST_CASE(
    "a write fault fails the commit cleanly and leaves the library intact") {
  for (Fault fault : {Fault::kNoSpace, Fault::kIo}) {
    for (bool large : {false, true}) {
      CAPTURE(static_cast<int>(fault));
      CAPTURE(large);
      TempDir dir;
      const std::string path = dir.Sub("lib");
      auto fs = std::make_shared<FaultFs>();
      {
        UseFileSystem use(fs);
        Options o;
        o.create_if_missing = true;
        o.sync_commits = true;
        if (large) o.stage_bytes = 1;  // the bulk (table ingestion) path
        auto lib = Library::Open(o, path);
        REQUIRE(lib.ok());
        REQUIRE((*lib)->PutMany(Many("a", 20)).ok());
        // The large commit fails inside its bulk load, past the marker.
        fs->Arm(fault, large ? 6 : 0);
        auto failed = (*lib)->PutMany(Many("b", large ? 500 : 3));
        REQUIRE_FALSE(failed.ok());
        CHECK(failed.status().code() == StatusCode::kIOError);
        CHECK_MESSAGE(failed.status().message().find(path) != std::string::npos,
                      failed.status().message());
        CHECK_MESSAGE(failed.status().message().find(fault == Fault::kNoSpace
                                                         ? "No space"
                                                         : "Input/output") !=
                          std::string::npos,
                      failed.status().message());
        if (fault == Fault::kNoSpace) {
          // What the write needed and what the file system has: what to free.
          CHECK_MESSAGE(failed.status().message().find("bytes free") !=
                            std::string::npos,
                        failed.status().message());
        }
        CHECK(fs->failures() > 0);
        // Still failing: later writes fail too, and reads still answer.
        CHECK_FALSE((*lib)->Put(Skill::Make("c", "more")).ok());
        CHECK((*lib)->Get("a3", {}).ok());
        fs->Arm(Fault::kNone);
      }
      ExpectIntact(path, 20, 1);
    }
  }
}

TEST_CASE(
    "the table files of a bulk load killed before ingestion are removed on "
    "open") {
  TempDir dir;
  const std::string path = dir.Sub("lib");
  Options o;
  o.create_if_missing = true;
  {
    auto lib = Library::Open(o, path);
    REQUIRE(lib.ok());
    REQUIRE((*lib)->PutMany(Many("a", 5)).ok());
  }
  // What a writer killed between writing its table and ingesting it leaves.
  const std::string leftover = path + "/ingest-999999-1.sst";
  std::ofstream(leftover) << std::string(1 << 20, 'x');
  {
    Options ro;
    ro.read_only = true;
    REQUIRE(Library::Open(ro, path).ok());
    CHECK(std::filesystem::exists(leftover));  // a reader removes nothing
  }
  {
    auto lib = Library::Open(o, path);
    REQUIRE(lib.ok());
    CHECK_FALSE(std::filesystem::exists(leftover));
  }
  ExpectIntact(path, 5, 1);
}

}  // namespace
}  // namespace skilldb
