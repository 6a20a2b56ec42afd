#include "ipc.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "skilldb/util/json.h"

namespace skilldb::verify::internal {
namespace {

constexpr char kMagic[4] = {'S', 'K', 'D', 'B'};

Status WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == ENOTSOCK) w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Status::IOError(std::string("worker channel write: ") +
                             std::strerror(errno));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

Status ReadAll(int fd, char* p, size_t n, int timeout_ms) {
  while (n > 0) {
    if (timeout_ms >= 0) {
      pollfd pfd{fd, POLLIN, 0};
      const int r = ::poll(&pfd, 1, timeout_ms);
      if (r < 0) {
        if (errno == EINTR) continue;
        return Status::IOError(std::string("poll: ") + std::strerror(errno));
      }
      if (r == 0) return Status::DeadlineExceeded("no message in time");
    }
    const ssize_t got = ::read(fd, p, n);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Status::IOError(std::string("worker channel read: ") +
                             std::strerror(errno));
    }
    if (got == 0) return Status::Unavailable("the peer closed the channel");
    p += got;
    n -= static_cast<size_t>(got);
  }
  return Status::Ok();
}

}  // namespace

Status SendMessage(int fd, const nlohmann::json& header,
                   std::string_view blob) {
  const std::string h = util::DumpLossy(header);
  char prefix[16];
  const uint32_t hlen = static_cast<uint32_t>(h.size());
  const uint64_t blen = blob.size();
  std::memcpy(prefix, kMagic, 4);
  std::memcpy(prefix + 4, &hlen, 4);
  std::memcpy(prefix + 8, &blen, 8);
  SKILLDB_RETURN_IF_ERROR(WriteAll(fd, prefix, sizeof(prefix)));
  SKILLDB_RETURN_IF_ERROR(WriteAll(fd, h.data(), h.size()));
  return WriteAll(fd, blob.data(), blob.size());
}

Result<Message> ReceiveMessage(int fd, int timeout_ms,
                               const MessageLimits& limits,
                               std::string* reuse) {
  char prefix[16];
  SKILLDB_RETURN_IF_ERROR(ReadAll(fd, prefix, sizeof(prefix), timeout_ms));
  if (std::memcmp(prefix, kMagic, 4) != 0) {
    return Status::Corruption("bad frame magic on the worker channel");
  }
  uint32_t hlen;
  uint64_t blen;
  std::memcpy(&hlen, prefix + 4, 4);
  std::memcpy(&blen, prefix + 8, 8);
  if (hlen > limits.max_header_bytes || blen > limits.max_blob_bytes) {
    return Status::Corruption("worker frame over the size limit (" +
                              std::to_string(hlen) + " + " +
                              std::to_string(blen) + " bytes)");
  }
  std::string header(hlen, '\0');
  SKILLDB_RETURN_IF_ERROR(ReadAll(fd, header.data(), hlen, timeout_ms));
  Message m;
  if (reuse != nullptr && blen > 0 && reuse->capacity() >= blen) {
    m.blob = std::move(*reuse);
    reuse->clear();
  }
  m.blob.resize(blen);  // within the capacity: writes only past the old size
  SKILLDB_RETURN_IF_ERROR(ReadAll(fd, m.blob.data(), blen, timeout_ms));
  m.header = nlohmann::json::parse(header, nullptr, false);
  if (m.header.is_discarded() || !m.header.is_object()) {
    return Status::Corruption("worker frame header is not a JSON object");
  }
  return m;
}

}  // namespace skilldb::verify::internal
