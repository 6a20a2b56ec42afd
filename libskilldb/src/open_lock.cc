#include "open_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <thread>
#include <utility>

namespace skilldb::internal {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(1);

std::string LockPath(const std::string& dir) {
  return (std::filesystem::path(dir) / kOpenLockFile).string();
}

// Takes flock `op` on `fd`, polling until `deadline`. Whether it got it.
bool LockUntil(int fd, int op, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    if (::flock(fd, op | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPoll);
  }
}

class DeletingFs : public rocksdb::FileSystemWrapper {
 public:
  DeletingFs(const std::shared_ptr<rocksdb::FileSystem>& base,
             std::shared_ptr<WriterOpenLock> lock)
      : FileSystemWrapper(base), lock_(std::move(lock)) {}
  const char* Name() const override { return "SkilldbDeletingUnderLock"; }
  rocksdb::IOStatus DeleteFile(const std::string& f,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override {
    // A table file being ingested (storage.cc) is no reader's business.
    const bool ingest =
        std::filesystem::path(f).filename().string().starts_with("ingest-");
    WriterOpenLock::Hold hold(ingest ? nullptr : lock_.get());
    return target()->DeleteFile(f, options, dbg);
  }

 private:
  std::shared_ptr<WriterOpenLock> lock_;
};

}  // namespace

WriterOpenLock::WriterOpenLock(const std::string& dir, int wait_ms)
    : wait_ms_(wait_ms) {
  fd_ = ::open(LockPath(dir).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
}

WriterOpenLock::~WriterOpenLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock too
}

void WriterOpenLock::Acquire() {
  std::lock_guard<std::mutex> guard(mu_);
  if (holds_++ > 0 || fd_ < 0) return;
  // After a timed-out wait, only a lock had at once: a reader stopped in
  // its open would otherwise cost every deletion the whole wait.
  const auto deadline =
      std::chrono::steady_clock::now() +
      (gave_up_ ? std::chrono::milliseconds(0)
                : std::chrono::milliseconds(wait_ms_));
  locked_ = LockUntil(fd_, LOCK_EX, deadline);
  gave_up_ = !locked_;
}

void WriterOpenLock::Release() {
  std::lock_guard<std::mutex> guard(mu_);
  if (--holds_ > 0 || !locked_) return;
  ::flock(fd_, LOCK_UN);
  locked_ = false;
}

ReaderOpenLock::ReaderOpenLock(const std::string& dir,
                               std::chrono::steady_clock::time_point deadline) {
  fd_ = ::open(LockPath(dir).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ >= 0 && !LockUntil(fd_, LOCK_SH, deadline)) {
    ::close(fd_);
    fd_ = -1;
  }
}

ReaderOpenLock::~ReaderOpenLock() {
  if (fd_ >= 0) ::close(fd_);
}

std::shared_ptr<rocksdb::FileSystem> DeletingUnderLock(
    std::shared_ptr<rocksdb::FileSystem> base,
    std::shared_ptr<WriterOpenLock> lock) {
  return std::make_shared<DeletingFs>(std::move(base), std::move(lock));
}

}  // namespace skilldb::internal
