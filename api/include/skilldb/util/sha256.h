// SHA-256 (FIPS 180-4): compile-cache keys and candidate hashes (verify),
// weights named by their content (models: the hash of a single-file
// checkpoint is what `sha256sum model.safetensors` prints), seed evidence
// hashes (tests). Part of the helpers skilldb's modules share
// (skilldb/util/), compiled into skilldb_api. A Sha256 object is not
// thread-safe; the functions are.
#ifndef SKILLDB_UTIL_SHA256_H_
#define SKILLDB_UTIL_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "skilldb/status.h"

namespace skilldb::util {

class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t size);
  void Update(std::string_view data) { Update(data.data(), data.size()); }
  // The digest; the object must not be updated afterwards.
  std::array<uint8_t, 32> Finish();
  // Lower-case hex of Finish().
  std::string HexDigest();

 private:
  void Block(const uint8_t* block);

  std::array<uint32_t, 8> h_;
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// Lower-case hex digest of `data`.
std::string Sha256Hex(std::string_view data);

// The hash of a file's bytes, read in chunks (any size). NotFound when it
// cannot be opened, IOError when a read fails.
Result<std::string> Sha256File(const std::string& path);

}  // namespace skilldb::util

#endif  // SKILLDB_UTIL_SHA256_H_
