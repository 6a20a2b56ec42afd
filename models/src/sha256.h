// SHA-256 (FIPS 180-4), for naming weights by their content: the hash of a
// single-file checkpoint is what `sha256sum model.safetensors` prints.
// A Sha256 object is not thread-safe; the functions are.
#ifndef SKILLDB_MODELS_SRC_SHA256_H_
#define SKILLDB_MODELS_SRC_SHA256_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "skilldb/status.h"

namespace skilldb::models::internal {

class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t size);
  // Lowercase hex of the digest; the object is spent afterwards.
  std::string HexDigest();

 private:
  void Block(const uint8_t* block);
  std::array<uint32_t, 8> h_;
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string Sha256Hex(std::string_view data);
// The hash of a file's bytes, read in chunks. IOError / NotFound.
Result<std::string> Sha256File(const std::string& path);

}  // namespace skilldb::models::internal

#endif  // SKILLDB_MODELS_SRC_SHA256_H_
