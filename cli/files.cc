#include "files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace skilldb::cli {
namespace {

constexpr size_t kBufferBytes = size_t{64} << 10;

}  // namespace

std::string ErrnoText(int err) {
  char buf[256];
  // The GNU strerror_r returns the message (possibly not in buf).
  return strerror_r(err, buf, sizeof(buf));
}

FdStreamBuf::FdStreamBuf(int fd) : fd_(fd), buffer_(new char[kBufferBytes]) {
  setp(buffer_.get(), buffer_.get() + kBufferBytes);
}

FdStreamBuf::~FdStreamBuf() { Drain(); }

bool FdStreamBuf::WriteAll(const char* data, size_t size) {
  if (error_ != 0) return false;
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = n < 0 ? errno : EIO;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool FdStreamBuf::Drain() {
  const size_t pending = static_cast<size_t>(pptr() - pbase());
  setp(buffer_.get(), buffer_.get() + kBufferBytes);
  return pending == 0 || WriteAll(buffer_.get(), pending);
}

FdStreamBuf::int_type FdStreamBuf::overflow(int_type c) {
  if (!Drain()) return traits_type::eof();
  if (traits_type::eq_int_type(c, traits_type::eof())) {
    return traits_type::not_eof(c);
  }
  *pptr() = traits_type::to_char_type(c);
  pbump(1);
  return c;
}

std::streamsize FdStreamBuf::xsputn(const char* s, std::streamsize n) {
  if (error_ != 0) return 0;
  const auto size = static_cast<size_t>(n);
  if (size <= static_cast<size_t>(epptr() - pptr())) {
    std::memcpy(pptr(), s, size);
    pbump(static_cast<int>(n));
    return n;
  }
  // Larger than the room left: write what is buffered, then this directly.
  if (!Drain() || !WriteAll(s, size)) return 0;
  return n;
}

int FdStreamBuf::sync() { return Drain() ? 0 : -1; }

Status StreamStatus(std::ostream& out, std::string_view name) {
  out.flush();
  if (out.good()) return Status::Ok();
  const auto* fd_buf = dynamic_cast<const FdStreamBuf*>(out.rdbuf());
  const int err = fd_buf != nullptr ? fd_buf->error() : 0;
  return Status::IOError("cannot write to " + std::string(name) +
                         (err != 0 ? ": " + ErrnoText(err) : ""));
}

OutputFile::OutputFile(std::string path, int fd)
    : path_(std::move(path)), fd_(fd), buf_(fd), stream_(&buf_) {}

OutputFile::~OutputFile() {
  if (fd_ >= 0) {
    buf_.pubsync();
    ::close(fd_);
  }
}

Result<std::unique_ptr<OutputFile>> OutputFile::Create(
    const std::string& path) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    return Status::IOError("cannot create '" + path + "': " + ErrnoText(errno));
  }
  return std::unique_ptr<OutputFile>(new OutputFile(path, fd));
}

Status OutputFile::Close() {
  Status s = StreamStatus(stream_, "'" + path_ + "'");
  if (s.ok() && ::fsync(fd_) != 0) {
    s = Status::IOError("cannot sync '" + path_ + "': " + ErrnoText(errno));
  }
  if (::close(fd_) != 0 && s.ok()) {
    s = Status::IOError("cannot close '" + path_ + "': " + ErrnoText(errno));
  }
  fd_ = -1;
  return s;
}

Result<std::unique_ptr<InputFile>> InputFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return Status::NotFound("file '" + path + "' does not exist");
    }
    return Status::IOError("cannot read file '" + path +
                           "': " + ErrnoText(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument("'" + path + "' is a directory, not a file");
  }
  const uint64_t size =
      S_ISREG(st.st_mode) && st.st_size > 0 ? static_cast<uint64_t>(st.st_size)
                                            : 0;
  return std::unique_ptr<InputFile>(new InputFile(path, fd, size));
}

InputFile::~InputFile() { ::close(fd_); }

Result<size_t> InputFile::Read(char* data, size_t size) {
  for (;;) {
    const ssize_t n = ::read(fd_, data, size);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno != EINTR) {
      return Status::IOError("error reading file '" + path_ +
                             "': " + ErrnoText(errno));
    }
  }
}

}  // namespace skilldb::cli
