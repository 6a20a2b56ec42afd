// Tensors as the runners send them (raw bytes in their dtype), compared
// here, on the trusted side, with torch.allclose's rule.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kb_internal.h"
#include "skilldb/util/json.h"

namespace skilldb::verify::kb::internal {
namespace {

double HalfToDouble(uint16_t h) {
  const int sign = (h >> 15) & 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  double v;
  if (exp == 0) {
    v = std::ldexp(static_cast<double>(mant), -24);
  } else if (exp == 31) {
    v = mant == 0 ? INFINITY : NAN;
  } else {
    v = std::ldexp(static_cast<double>(mant | 0x400), exp - 25);
  }
  return sign ? -v : v;
}

double BfloatToDouble(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename T>
void DecodeAs(const char* p, int64_t n, std::vector<double>* out) {
  out->resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, p + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    (*out)[static_cast<size_t>(i)] = static_cast<double>(v);
  }
}


std::string IndexText(int64_t flat, const std::vector<int64_t>& shape) {
  if (shape.empty()) return "[]";
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    const int64_t s = std::max<int64_t>(shape[d], 1);
    idx[d] = flat % s;
    flat /= s;
  }
  std::string out = "[";
  for (size_t d = 0; d < idx.size(); ++d) {
    out += (d ? ", " : "") + std::to_string(idx[d]);
  }
  return out + "]";
}

}  // namespace

int64_t WireTensor::numel() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

int64_t DtypeBytes(std::string_view dtype) {
  if (dtype == "float32" || dtype == "int32") return 4;
  if (dtype == "float64" || dtype == "int64") return 8;
  if (dtype == "float16" || dtype == "bfloat16" || dtype == "int16") return 2;
  if (dtype == "bool" || dtype == "uint8" || dtype == "int8") return 1;
  return 0;
}

Result<WireTensor> DecodeTensor(const json& desc, std::string_view blob) {
  if (!desc.is_object()) return Status::Corruption("a tensor descriptor is not an object");
  WireTensor t;
  t.dtype = desc.value("dtype", "");
  t.orig_dtype = desc.value("orig_dtype", "");
  if (desc.contains("shape") && desc["shape"].is_array()) {
    for (const json& s : desc["shape"]) {
      if (!s.is_number_integer() || s.get<int64_t>() < 0) {
        return Status::Corruption("a tensor shape holds a non-size");
      }
      t.shape.push_back(s.get<int64_t>());
    }
  }
  const int64_t offset = desc.value("offset", int64_t{-1});
  const int64_t nbytes = desc.value("nbytes", int64_t{-1});
  const int64_t esize = DtypeBytes(t.dtype);
  if (esize == 0) return Status::Corruption("unknown tensor dtype '" + t.dtype + "'");
  if (offset < 0 || nbytes < 0 ||
      static_cast<uint64_t>(offset) + static_cast<uint64_t>(nbytes) > blob.size()) {
    return Status::Corruption("a tensor lies outside the reply's bytes");
  }
  const int64_t n = nbytes / esize;
  if (n * esize != nbytes || n != t.numel()) {
    return Status::Corruption("a tensor's bytes do not match its shape");
  }
  const char* p = blob.data() + offset;
  if (t.dtype == "float32") {
    DecodeAs<float>(p, n, &t.values);
  } else if (t.dtype == "float64") {
    DecodeAs<double>(p, n, &t.values);
  } else if (t.dtype == "int64") {
    DecodeAs<int64_t>(p, n, &t.values);
  } else if (t.dtype == "int32") {
    DecodeAs<int32_t>(p, n, &t.values);
  } else if (t.dtype == "bool" || t.dtype == "uint8") {
    DecodeAs<uint8_t>(p, n, &t.values);
  } else if (t.dtype == "int8") {
    DecodeAs<int8_t>(p, n, &t.values);
  } else if (t.dtype == "int16") {
    DecodeAs<int16_t>(p, n, &t.values);
  } else {
    t.values.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      t.values[static_cast<size_t>(i)] =
          t.dtype == "float16" ? HalfToDouble(h) : BfloatToDouble(h);
    }
  }
  return t;
}

CloseCheck AllClose(const std::vector<double>& want,
                    const std::vector<double>& got, double atol, double rtol,
                    const std::vector<int64_t>& shape,
                    const std::vector<int64_t>& indices) {
  CloseCheck c;
  const size_t n = std::min(want.size(), got.size());
  c.elements = static_cast<int64_t>(n);
  for (size_t i = 0; i < n; ++i) {
    const double a = want[i], b = got[i];
    const double diff = std::fabs(a - b);
    bool close;
    if (std::isnan(a) || std::isnan(b)) {
      close = false;
    } else if (std::isinf(a) || std::isinf(b)) {
      close = a == b;
    } else {
      close = diff <= atol + rtol * std::fabs(b);
    }
    if (std::isfinite(diff)) {
      c.max_abs = std::max(c.max_abs, diff);
      c.sum_abs += diff;
    } else if (!close) {
      c.max_abs = INFINITY;
    }
    if (close) continue;
    ++c.mismatches;
    if (c.examples.size() < 5) {
      const int64_t flat = indices.empty() ? static_cast<int64_t>(i)
                                           : indices[i];
      c.examples.push_back("element " + IndexText(flat, shape) + ": got " +
                           Num(b, "%.7g") + ", want " + Num(a, "%.7g"));
    }
  }
  return c;
}

double RelativeRmsError(const std::vector<double>& got,
                        const std::vector<double>& exact) {
  double num = 0, den = 0;
  size_t used = 0;
  for (size_t i = 0; i < std::min(got.size(), exact.size()); ++i) {
    if (!std::isfinite(got[i]) || !std::isfinite(exact[i])) continue;
    const double d = got[i] - exact[i];
    num += d * d;
    den += exact[i] * exact[i];
    ++used;
  }
  if (used == 0) return NAN;
  if (den == 0) return num == 0 ? 0 : INFINITY;
  return std::sqrt(num / den);
}

std::vector<int64_t> SampleIndices(int64_t numel, int64_t count, int64_t edge,
                                   std::mt19937_64* rng) {
  std::vector<int64_t> out;
  if (numel <= 0) return out;
  for (int64_t i = 0; i < std::min(edge, numel); ++i) out.push_back(i);
  for (int64_t i = std::max<int64_t>(0, numel - edge); i < numel; ++i) {
    out.push_back(i);
  }
  std::uniform_int_distribution<int64_t> pick(0, numel - 1);
  for (int64_t i = 0; i < count; ++i) out.push_back(pick(*rng));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string Dump(const json& j) { return util::DumpLossy(j); }

Result<json> ParseJson(std::string_view text, std::string_view what) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    return Status::Corruption(std::string(what) + " is not valid JSON");
  }
  return j;
}

json SpecsToJson(const std::vector<InputSpec>& specs) {
  json out = json::array();
  for (const InputSpec& s : specs) {
    out.push_back({{"kind", s.kind}, {"dtype", s.dtype}, {"shape", s.shape},
                   {"dist", s.distribution}, {"bytes", s.bytes}});
  }
  return out;
}

std::vector<InputSpec> SpecsFromJson(const json& j) {
  std::vector<InputSpec> out;
  if (!j.is_array()) return out;
  for (const json& e : j) {
    if (!e.is_object()) continue;
    InputSpec s;
    s.kind = e.value("kind", "");
    s.dtype = e.value("dtype", "");
    if (e.contains("shape") && e["shape"].is_array()) {
      for (const json& d : e["shape"]) {
        if (d.is_number_integer()) s.shape.push_back(d.get<int64_t>());
      }
    }
    s.distribution = e.value("dist", "");
    s.bytes = e.value("bytes", int64_t{0});
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace skilldb::verify::kb::internal
