#include "bitpack.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace skilldb::retrieval::internal {
namespace {

inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;  // little-endian hosts only (x86-64, aarch64)
}

// One instantiation per width: with W a constant the compiler turns the
// shifts and masks into immediates and unrolls the loop, which is what makes
// full-block decoding a few cycles per value.
template <uint32_t W>
void UnpackFull(const uint8_t* in, uint32_t* out) {
  if constexpr (W == 0) {
    for (size_t i = 0; i < kBlockSize; ++i) out[i] = 0;
  } else {
    constexpr uint64_t kMask = (W == 32) ? 0xffffffffull : ((1ull << W) - 1);
#pragma GCC unroll 16
    for (size_t i = 0; i < kBlockSize; ++i) {
      const size_t bit = i * W;
      out[i] =
          static_cast<uint32_t>((Load64(in + bit / 8) >> (bit % 8)) & kMask);
    }
  }
}

template <size_t... Ws>
constexpr auto MakeTable(std::index_sequence<Ws...>) {
  using Fn = void (*)(const uint8_t*, uint32_t*);
  return std::array<Fn, sizeof...(Ws)>{&UnpackFull<Ws>...};
}

void UnpackGeneric(const uint8_t* in, size_t n, uint32_t width, uint32_t* out) {
  if (width == 0) {
    for (size_t i = 0; i < n; ++i) out[i] = 0;
    return;
  }
  const uint64_t mask = (width == 32) ? 0xffffffffull : ((1ull << width) - 1);
  for (size_t i = 0; i < n; ++i) {
    const size_t bit = i * width;
    out[i] = static_cast<uint32_t>((Load64(in + bit / 8) >> (bit % 8)) & mask);
  }
}

}  // namespace

void Pack(const uint32_t* values, size_t n, uint32_t width, std::string* out) {
  const size_t start = out->size();
  out->resize(start + PackedBytes(n, width), '\0');
  if (width == 0) return;
  uint8_t* base = reinterpret_cast<uint8_t*>(out->data() + start);
  for (size_t i = 0; i < n; ++i) {
    uint64_t v = values[i];
    size_t bit = i * width;
    uint32_t remaining = width;
    while (remaining > 0) {
      const uint32_t shift = bit % 8;
      const uint32_t take = std::min<uint32_t>(8 - shift, remaining);
      base[bit / 8] |= static_cast<uint8_t>((v & ((1u << take) - 1)) << shift);
      v >>= take;
      bit += take;
      remaining -= take;
    }
  }
}

void Unpack(const uint8_t* in, size_t n, uint32_t width, uint32_t* out) {
  static constexpr auto kTable = MakeTable(std::make_index_sequence<33>{});
  if (n == kBlockSize) {
    kTable[width](in, out);
  } else {
    UnpackGeneric(in, n, width, out);
  }
}

}  // namespace skilldb::retrieval::internal
