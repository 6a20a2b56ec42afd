#include "tensor_data.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "gen.h"

namespace skilldb::verify::internal {
namespace {

TensorSpec Spec(Dtype dtype) {
  TensorSpec s;
  s.name.assign(1, 'x');  // (operator=("x") trips a GCC 12 -Wrestrict false positive)
  s.dtype = dtype;
  s.large_scale = 100;
  return s;
}

TEST_CASE("generated inputs depend only on the seed and follow the distribution") {
  const HostTensor a = GenerateTensor(Spec(Dtype::kFloat32), {64, 128}, 5, Distribution::kNormal);
  const HostTensor b = GenerateTensor(Spec(Dtype::kFloat32), {64, 128}, 5, Distribution::kNormal);
  const HostTensor c = GenerateTensor(Spec(Dtype::kFloat32), {64, 128}, 6, Distribution::kNormal);
  CHECK(a.bytes == b.bytes);
  CHECK(a.bytes != c.bytes);
  double mean = 0, sq = 0;
  for (double v : a.values) {
    mean += v;
    sq += v * v;
  }
  mean /= a.values.size();
  CHECK(std::fabs(mean) < 0.05);
  CHECK(sq / a.values.size() == doctest::Approx(1.0).epsilon(0.05));
  const HostTensor u = GenerateTensor(Spec(Dtype::kFloat32), {4096}, 5, Distribution::kUniform);
  for (double v : u.values) CHECK((v >= -1.0 && v <= 1.0));
  const HostTensor l = GenerateTensor(Spec(Dtype::kFloat32), {4096}, 5, Distribution::kLarge);
  double lmax = 0;
  for (double v : l.values) lmax = std::max(lmax, std::fabs(v));
  CHECK(lmax > 100);
}

TEST_CASE("the host fast path generates exactly the per-element values") {
  std::vector<float> fast(1001);
  GenFill(fast.data(), 1001, 99, 37, kGenNormal, 1.f);
  for (int64_t i = 0; i < 1001; ++i) CHECK(fast[i] == GenValue(99, i, 37, kGenNormal, 1.f));
}

TEST_CASE("special patterns are never all zero and values are exact in the dtype") {
  const HostTensor s = GenerateTensor(Spec(Dtype::kBFloat16), {64, 32}, 3, Distribution::kSpecial);
  int nonzero = 0;
  for (size_t i = 0; i < s.values.size(); ++i) {
    nonzero += s.values[i] != 0;
    uint16_t bits;
    std::memcpy(&bits, s.bytes.data() + 2 * i, 2);
    CHECK(Bf16ToFloat(bits) == s.values[i]);
  }
  CHECK(nonzero > 100);
}

TEST_CASE("the output check separates unwritten, wrong and correct elements") {
  const std::vector<double> want = {1.0, 2.0, 3.0, 4.0};
  std::string got(16, '\0');
  const float vals[4] = {1.0f, 2.00001f, 3.5f, 0};
  std::memcpy(got.data(), vals, 12);
  std::memset(got.data() + 12, 0xff, 4);  // never written
  const OutputCheck c = CheckOutput(Dtype::kFloat32, got, want, {1e-4, 1e-4}, {2, 2});
  CHECK(c.unwritten == 1);
  CHECK(c.mismatches == 1);
  CHECK(c.max_abs_error == doctest::Approx(0.5));
  REQUIRE(c.examples.size() == 2);
  CHECK(c.examples[0].find("[1,0]") != std::string::npos);  // 3.5 for 3
  CHECK(c.examples[1].find("[1,1] was never written") != std::string::npos);
}

TEST_CASE("NaN and infinity never pass, even where the tolerance is loose") {
  const std::vector<double> want = {1.0, 1.0};
  std::string got(8, '\0');
  const float vals[2] = {NAN, INFINITY};
  std::memcpy(got.data(), vals, 8);
  const OutputCheck c = CheckOutput(Dtype::kFloat32, got, want, {1e3, 1e3}, {2});
  CHECK(c.mismatches == 2);
  CHECK(c.unwritten == 0);  // a computed NaN is not the poison pattern
}

TEST_CASE("bf16 outputs are checked against the bf16 tolerance") {
  const std::vector<double> want = {1.0, -2.0};
  std::string got(4, '\0');
  const uint16_t vals[2] = {FloatToBf16(1.0f + 1.0f / 128), FloatToBf16(-2.0f)};
  std::memcpy(got.data(), vals, 4);
  CHECK(CheckOutput(Dtype::kBFloat16, got, want, {1e-2, 1e-2}, {2}).mismatches == 0);
  CHECK(CheckOutput(Dtype::kBFloat16, got, want, {1e-4, 1e-4}, {2}).mismatches == 1);
}

}  // namespace
}  // namespace skilldb::verify::internal
