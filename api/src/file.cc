#include "skilldb/util/file.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace skilldb::util {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

// Closes the descriptor when it goes out of scope.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) {
  std::remove(path);
  return 0;
}

}  // namespace

// POSIX calls only, no std::filesystem: the torch wheel's libtorch exports
// std::filesystem symbols that crash code linked against it, and the
// trainer and models link both (trainer/README.md).
Result<std::string> ReadFile(const std::string& path, int64_t max_bytes) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return Status::NotFound("file '" + path + "' does not exist");
    }
    return Status::IOError("cannot read file '" + path +
                           "': " + ErrnoText(err));
  }
  std::string out;
  struct stat st;
  if (::fstat(f.fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return Status::InvalidArgument("'" + path +
                                     "' is a directory, not a file");
    }
    if (st.st_size > max_bytes) {
      return Status::InvalidArgument("'" + path + "' is larger than " +
                                     std::to_string(max_bytes) + " bytes");
    }
    if (S_ISREG(st.st_mode)) out.reserve(static_cast<size_t>(st.st_size));
  }
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(f.fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      return Status::IOError("cannot read file '" + path +
                             "': " + ErrnoText(err));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (static_cast<int64_t>(out.size()) > max_bytes) {
      return Status::InvalidArgument("'" + path + "' is larger than " +
                                     std::to_string(max_bytes) + " bytes");
    }
  }
  return out;
}

Status WriteFileAtomic(const std::string& path, std::string_view data) {
  std::string tmp = path + ".tmpXXXXXX";
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    return Status::IOError("cannot create a temporary file beside '" + path +
                           "': " + ErrnoText(errno));
  }
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(name.data());
      return Status::IOError("cannot write '" + path + "': " + ErrnoText(err));
    }
    done += static_cast<size_t>(n);
  }
  ::fchmod(fd, 0644);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(name.data());
    return Status::IOError("cannot write '" + path + "': " + ErrnoText(err));
  }
  if (::rename(name.data(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(name.data());
    return Status::IOError("cannot rename into '" + path +
                           "': " + ErrnoText(err));
  }
  return Status::Ok();
}

Status MakeDirs(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("empty directory path");
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    const std::string prefix = path.substr(0, pos);
    if (prefix.empty() || prefix == "/") continue;
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::IOError("cannot create directory '" + prefix +
                             "': " + ErrnoText(errno));
    }
  }
  if (!IsDirectory(path)) {
    return Status::IOError("cannot create directory '" + path +
                           "': a file is in the way");
  }
  return Status::Ok();
}

Result<std::string> MakeTempDir(const std::string& parent,
                                const std::string& prefix) {
  SKILLDB_RETURN_IF_ERROR(MakeDirs(parent));
  const std::string templ = JoinPath(parent, prefix + "XXXXXX");
  std::vector<char> name(templ.begin(), templ.end());
  name.push_back('\0');
  if (::mkdtemp(name.data()) == nullptr) {
    return Status::IOError("cannot create a temporary directory in '" +
                           parent + "': " + ErrnoText(errno));
  }
  return std::string(name.data());
}

void RemoveTree(const std::string& path) {
  // Depth first, not following symbolic links (a link is removed, never
  // what it points to).
  ::nftw(path.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
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

}  // namespace skilldb::util
