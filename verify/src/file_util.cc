#include "file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace skilldb::verify::internal {

Result<std::string> ReadFile(const std::string& path, int64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    std::string msg = "cannot open '" + path + "': " + std::strerror(err);
    if (err == ENOENT) return Status::NotFound(msg);
    return Status::IOError(msg);
  }
  std::string out;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return Status::IOError("cannot read '" + path +
                             "': " + std::strerror(err));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (static_cast<int64_t>(out.size()) > max_bytes) {
      ::close(fd);
      return Status::InvalidArgument("'" + path + "' is larger than " +
                                     std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  return out;
}

Status WriteFileAtomic(const std::string& path, std::string_view data) {
  std::string tmp = path + ".tmpXXXXXX";
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    return Status::IOError("cannot create a temporary file beside '" + path +
                           "': " + std::strerror(errno));
  }
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(name.data());
      return Status::IOError("cannot write '" + path +
                             "': " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  ::fchmod(fd, 0644);
  ::close(fd);
  if (::rename(name.data(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(name.data());
    return Status::IOError("cannot rename into '" + path +
                           "': " + std::strerror(err));
  }
  return Status::Ok();
}

Status MakeDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) {
    return Status::IOError("cannot create directory '" + path +
                           "': " + ec.message());
  }
  return Status::Ok();
}

Result<std::string> MakeTempDir(const std::string& parent,
                                const std::string& prefix) {
  SKILLDB_RETURN_IF_ERROR(MakeDirs(parent));
  std::string templ = JoinPath(parent, prefix + "XXXXXX");
  std::vector<char> name(templ.begin(), templ.end());
  name.push_back('\0');
  if (::mkdtemp(name.data()) == nullptr) {
    return Status::IOError("cannot create a temporary directory in '" +
                           parent + "': " + std::strerror(errno));
  }
  return std::string(name.data());
}

void RemoveTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string JoinPath(std::string_view a, std::string_view b) {
  std::string out(a);
  while (!out.empty() && out.back() == '/') out.pop_back();
  while (!b.empty() && b.front() == '/') b.remove_prefix(1);
  if (out.empty()) return "/" + std::string(b);
  out += '/';
  out += b;
  return out;
}

}  // namespace skilldb::verify::internal
