// SHA-256 (FIPS 180-4), used for compile-cache keys and candidate hashes.
// Pure functions; thread-safe.
#ifndef SKILLDB_VERIFY_SHA256_H_
#define SKILLDB_VERIFY_SHA256_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace skilldb::verify::internal {

class Sha256 {
 public:
  Sha256();
  void Update(std::string_view data);
  // Returns the digest; the object must not be updated afterwards.
  std::array<uint8_t, 32> Finish();

 private:
  void Block(const uint8_t* p);

  std::array<uint32_t, 8> h_;
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_bytes_ = 0;
};

// Lower-case hex digest of `data`.
std::string Sha256Hex(std::string_view data);

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_SHA256_H_
