// Fixed-width bit packing of up to 128 unsigned 32-bit values: the integer
// codec of the posting blocks. Internal to the retrieval module.
//
// A packed run of n values of width w occupies ceil(n * w / 8) bytes, values
// laid out little-endian from bit 0. Decoding reads 8 bytes at a time, so a
// buffer being decoded must have 8 readable bytes past its end (the posting
// encoder pads every list). Pure functions; thread-safe.
#ifndef SKILLDB_RETRIEVAL_BITPACK_H_
#define SKILLDB_RETRIEVAL_BITPACK_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace skilldb::retrieval::internal {

inline constexpr size_t kBlockSize = 128;
inline constexpr size_t kDecodePaddingBytes = 8;

// Bits needed for `v` (0 for 0).
inline uint32_t BitWidth(uint32_t v) {
  return v == 0 ? 0 : 32u - static_cast<uint32_t>(__builtin_clz(v));
}

inline size_t PackedBytes(size_t n, uint32_t width) {
  return (n * width + 7) / 8;
}

// Appends `n` values of `width` bits to `out`.
void Pack(const uint32_t* values, size_t n, uint32_t width, std::string* out);

// Decodes `n` values of `width` bits from `in` into `out`.
// REQUIRES: n <= kBlockSize, width <= 32, kDecodePaddingBytes readable past
// the packed bytes.
void Unpack(const uint8_t* in, size_t n, uint32_t width, uint32_t* out);

}  // namespace skilldb::retrieval::internal

#endif  // SKILLDB_RETRIEVAL_BITPACK_H_
