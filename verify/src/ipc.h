// Framed messages between the verifier and its worker processes, over a
// socketpair: a JSON header plus an optional binary blob (tensor bytes).
//
// Frame: "SKDB" magic, u32 header length, u64 blob length, header, blob.
// Readers enforce size limits, so a misbehaving worker cannot make the
// verifier allocate without bound. One reader and one writer per fd.
#ifndef SKILLDB_VERIFY_IPC_H_
#define SKILLDB_VERIFY_IPC_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "skilldb/status.h"

namespace skilldb::verify::internal {

struct Message {
  nlohmann::json header;
  std::string blob;
};

struct MessageLimits {
  uint32_t max_header_bytes = 16u << 20;
  uint64_t max_blob_bytes = uint64_t{4} << 30;
};

// Writes one frame. IOError if the peer is gone (EPIPE is reported, never
// raised as a signal: the caller must ignore SIGPIPE or use MSG_NOSIGNAL,
// which this function does for sockets).
Status SendMessage(int fd, const nlohmann::json& header,
                   std::string_view blob = {});

// Reads one frame, waiting at most `timeout_ms` (negative: forever) for
// its first byte and for each later chunk. DeadlineExceeded on timeout,
// Unavailable on EOF, Corruption for a bad frame or one over `limits`.
// With `reuse` (a blob of an earlier message, given back), the blob is read
// into its storage when that is large enough: memory already mapped, so a
// blob of hundreds of MB costs the copy, not a new buffer's page faults
// and zeroing. `*reuse` is left empty when taken, unchanged otherwise.
Result<Message> ReceiveMessage(int fd, int timeout_ms,
                               const MessageLimits& limits = {},
                               std::string* reuse = nullptr);

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_IPC_H_
