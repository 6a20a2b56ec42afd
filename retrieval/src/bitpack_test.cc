#include "bitpack.h"

#include <doctest/doctest.h>

#include <random>
#include <vector>

namespace skilldb::retrieval::internal {
namespace {

TEST_CASE("bit packing round-trips every width for full and partial blocks") {
  std::mt19937 rng(7);
  for (uint32_t width = 0; width <= 32; ++width) {
    for (size_t n : {size_t{1}, size_t{5}, size_t{127}, kBlockSize}) {
      std::vector<uint32_t> values(n);
      const uint64_t limit = width == 32 ? (1ull << 32) : (1ull << width);
      for (auto& v : values) v = static_cast<uint32_t>(rng() % limit);
      if (width > 0) values[0] = static_cast<uint32_t>(limit - 1);
      std::string packed;
      Pack(values.data(), n, width, &packed);
      CHECK(packed.size() == PackedBytes(n, width));
      packed.append(kDecodePaddingBytes, '\0');
      std::vector<uint32_t> out(kBlockSize, 0xdeadbeef);
      Unpack(reinterpret_cast<const uint8_t*>(packed.data()), n, width,
             out.data());
      out.resize(n);
      CHECK(out == values);
    }
  }
}

TEST_CASE("BitWidth counts significant bits") {
  CHECK(BitWidth(0) == 0);
  CHECK(BitWidth(1) == 1);
  CHECK(BitWidth(255) == 8);
  CHECK(BitWidth(256) == 9);
  CHECK(BitWidth(0xffffffffu) == 32);
}

}  // namespace
}  // namespace skilldb::retrieval::internal
