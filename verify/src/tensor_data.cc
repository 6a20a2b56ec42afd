#include "tensor_data.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "gen.h"

namespace skilldb::verify::internal {
namespace {

bool IsPoison(Dtype dtype, const char* p) {
  switch (dtype) {
    case Dtype::kBFloat16:
    case Dtype::kFloat16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v == 0xffffu;
    }
    case Dtype::kInt64: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v == ~uint64_t{0};
    }
    default: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v == 0xffffffffu;
    }
  }
}

double Decode(Dtype dtype, const char* p) {
  switch (dtype) {
    case Dtype::kBFloat16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return Bf16ToFloat(v);
    }
    case Dtype::kFloat16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return HalfToFloat(v);
    }
    case Dtype::kInt32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case Dtype::kInt64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    default: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
  }
}

std::string IndexText(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  std::string out = "[";
  for (size_t d = 0; d < idx.size(); ++d) {
    if (d > 0) out += ",";
    out += std::to_string(idx[d]);
  }
  return out + "]";
}

}  // namespace

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t v : shape) n *= v;
  return n;
}

HostTensor GenerateTensor(const TensorSpec& spec,
                          const std::vector<int64_t>& shape, uint64_t seed,
                          Distribution dist) {
  HostTensor t;
  t.dtype = spec.dtype;
  t.shape = shape;
  const int64_t n = t.numel();
  const int64_t row = shape.back();
  const int64_t size = DtypeSize(spec.dtype);
  t.bytes.resize(static_cast<size_t>(n * size));
  t.values.resize(static_cast<size_t>(n));
  std::vector<float> gen(static_cast<size_t>(n));
  GenFill(gen.data(), n, seed, row, static_cast<int>(dist),
          static_cast<float>(spec.large_scale));
  for (int64_t i = 0; i < n; ++i) {
    const float v = gen[static_cast<size_t>(i)];
    char* p = t.bytes.data() + i * size;
    switch (spec.dtype) {
      case Dtype::kBFloat16: {
        const uint16_t b = FloatToBf16(v);
        std::memcpy(p, &b, 2);
        break;
      }
      case Dtype::kFloat16: {
        const uint16_t h = FloatToHalf(v);
        std::memcpy(p, &h, 2);
        break;
      }
      case Dtype::kInt32: {
        const int32_t x = static_cast<int32_t>(v);
        std::memcpy(p, &x, 4);
        break;
      }
      case Dtype::kInt64: {
        const int64_t x = static_cast<int64_t>(v);
        std::memcpy(p, &x, 8);
        break;
      }
      default:
        std::memcpy(p, &v, 4);
    }
    t.values[static_cast<size_t>(i)] = Decode(spec.dtype, p);
  }
  return t;
}

std::vector<double> DecodeValues(Dtype dtype, const std::string& bytes) {
  const int64_t size = DtypeSize(dtype);
  std::vector<double> out(bytes.size() / static_cast<size_t>(size));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = Decode(dtype, bytes.data() + static_cast<int64_t>(i) * size);
  }
  return out;
}

OutputCheck CheckOutput(Dtype dtype, const std::string& got,
                        const std::vector<double>& want, const Tolerance& tol,
                        const std::vector<int64_t>& shape) {
  OutputCheck c;
  const int64_t size = DtypeSize(dtype);
  c.elements = static_cast<int64_t>(want.size());
  double ss = 0;
  for (double w : want) {
    if (std::isfinite(w)) ss += w * w;
  }
  c.scale = std::max(std::sqrt(ss / std::max<double>(1.0, static_cast<double>(want.size()))),
                     1e-30);
  const double atol = tol.atol * c.scale;
  if (static_cast<int64_t>(got.size()) < c.elements * size) {
    c.unwritten = c.elements;
    c.examples.push_back("the output buffer came back short");
    return c;
  }
  for (int64_t i = 0; i < c.elements; ++i) {
    const char* p = got.data() + i * size;
    const double w = want[static_cast<size_t>(i)];
    if (IsPoison(dtype, p)) {
      if (c.unwritten++ == 0 && c.examples.size() < 4) {
        c.examples.push_back("element " + IndexText(i, shape) +
                             " was never written");
      }
      continue;
    }
    const double g = Decode(dtype, p);
    const double err = std::fabs(g - w);
    if (std::isfinite(err)) {
      c.max_abs_error = std::max(c.max_abs_error, err);
      c.max_rel_error = std::max(
          c.max_rel_error, err / std::max(std::fabs(w), 1e-3 * c.scale));
    }
    if (!(std::isfinite(g) && err <= atol + tol.rtol * std::fabs(w))) {
      if (c.mismatches++ < 3 && c.examples.size() < 4) {
        char buf[200];
        std::snprintf(buf, sizeof(buf),
                      "element %s is %.9g, expected %.9g (error %.3g, "
                      "allowed %.3g)",
                      IndexText(i, shape).c_str(), g, w, err,
                      atol + tol.rtol * std::fabs(w));
        c.examples.push_back(buf);
      }
    }
  }
  return c;
}

}  // namespace skilldb::verify::internal
