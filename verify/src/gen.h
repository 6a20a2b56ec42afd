// Deterministic, counter-based input generation, identical in host and
// device code (every function is __host__ __device__ under nvcc).
//
// Element `i` of a tensor filled with seed `s` depends only on (s, i), so
// any range can be generated independently and in parallel. Seeds come from
// the verifier's unpredictable per-verification seed, never from the
// candidate. Pure functions; thread-safe.
#ifndef SKILLDB_VERIFY_GEN_H_
#define SKILLDB_VERIFY_GEN_H_

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define SKDB_HD __host__ __device__
#else
#define SKDB_HD
#endif

namespace skilldb::verify::internal {

// Distribution codes shared by both sides; equal to verify::Distribution.
enum GenDistribution : int {
  kGenNormal = 0,
  kGenUniform = 1,
  kGenLarge = 2,
  kGenSpecial = 3,
};

SKDB_HD inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in (0, 1], from the top 53 bits.
SKDB_HD inline double UnitFromBits(uint64_t h) {
  return (static_cast<double>(h >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

// The value of element `index` (in a tensor whose last dim is `row_len`).
SKDB_HD inline float GenValue(uint64_t seed, int64_t index, int64_t row_len,
                              int dist, float large_scale) {
  const uint64_t h1 = SplitMix64(seed ^ SplitMix64(static_cast<uint64_t>(index)));
  if (dist == kGenUniform) {
    return static_cast<float>(2.0 * UnitFromBits(h1) - 1.0);
  }
  if (dist == kGenSpecial) {
    const int64_t row = index / row_len;
    const int64_t col = index - row * row_len;
    const uint64_t hr = SplitMix64(seed ^ 0x5eedull ^
                                   SplitMix64(static_cast<uint64_t>(row)));
    switch (static_cast<int>(hr % 5)) {
      case 0:  // a constant row
        return static_cast<float>(static_cast<int>((hr >> 8) % 17) - 8) * 0.5f;
      case 1:  // a ramp
        return static_cast<float>(static_cast<int>(col % 13) - 6) * 0.25f;
      case 2:  // alternating signs
        return ((col & 1) ? -1.0f : 1.0f) *
               static_cast<float>(1 + static_cast<int>((hr >> 8) % 4));
      case 3:  // sparse spikes
        return (h1 % 16 == 0) ? ((h1 & 16) ? 8.0f : -8.0f) : 0.0f;
      default:  // small integers
        return static_cast<float>(static_cast<int>(h1 % 9) - 4);
    }
  }
  // Box-Muller in double (so host and device round identically); elements
  // 2k and 2k+1 share one pair of uniforms (cos and sin halves).
  const uint64_t hp = SplitMix64(seed ^ SplitMix64(static_cast<uint64_t>(index >> 1)));
  const uint64_t h2 = SplitMix64(hp ^ 0xa5a5a5a5a5a5a5a5ull);
  const double r = sqrt(-2.0 * log(UnitFromBits(hp)));
  const double a = 6.283185307179586 * UnitFromBits(h2);
  const double v = r * ((index & 1) ? sin(a) : cos(a));
  return static_cast<float>(dist == kGenLarge ? v * large_scale : v);
}

// Host fast path: fills out[0, n) with GenValue(seed, i, ...) computing each
// Box-Muller pair once.
inline void GenFill(float* out, int64_t n, uint64_t seed, int64_t row_len,
                    int dist, float large_scale) {
  if (dist != kGenNormal && dist != kGenLarge) {
    for (int64_t i = 0; i < n; ++i) out[i] = GenValue(seed, i, row_len, dist, large_scale);
    return;
  }
  for (int64_t i = 0; i < n; i += 2) {
    const uint64_t hp = SplitMix64(seed ^ SplitMix64(static_cast<uint64_t>(i >> 1)));
    const uint64_t h2 = SplitMix64(hp ^ 0xa5a5a5a5a5a5a5a5ull);
    const double r = sqrt(-2.0 * log(UnitFromBits(hp)));
    const double a = 6.283185307179586 * UnitFromBits(h2);
    const double k = dist == kGenLarge ? large_scale : 1.0;
    out[i] = static_cast<float>(r * cos(a) * k);
    if (i + 1 < n) out[i + 1] = static_cast<float>(r * sin(a) * k);
  }
}

SKDB_HD inline uint16_t FloatToBf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0) {
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  }
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

SKDB_HD inline float Bf16ToFloat(uint16_t v) {
  const uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

// IEEE binary16 narrowing (round to nearest even) and widening.
SKDB_HD inline uint16_t FloatToHalf(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
  }
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (absx < 0x38800000u) {  // subnormal or zero in half
    const float a = (f < 0 ? -f : f) * 16777216.0f;  // 2^24
    const uint32_t m = static_cast<uint32_t>(a);
    const float rem = a - static_cast<float>(m);
    uint32_t r = m + ((rem > 0.5f || (rem == 0.5f && (m & 1))) ? 1 : 0);
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t e = ((absx >> 23) - 112) << 10;
  uint32_t m = (absx >> 13) & 0x3ffu;
  const uint32_t rest = absx & 0x1fffu;
  uint32_t h = e | m;
  if (rest > 0x1000u || (rest == 0x1000u && (m & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

SKDB_HD inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu;
  const uint32_t m = h & 0x3ffu;
  uint32_t bits;
  if (e == 0) {
    const float v = static_cast<float>(m) * (1.0f / 16777216.0f);
    return (h & 0x8000u) ? -v : v;
  }
  if (e == 31) {
    bits = sign | 0x7f800000u | (m << 13);
  } else {
    bits = sign | ((e + 112) << 23) | (m << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_GEN_H_
