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
void ReadAs(const char* p, int64_t n, double* out) {
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, p + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    out[i] = static_cast<double>(v);
  }
}

// Elements are read and compared this many at a time (32 KiB of doubles a
// side: in the first-level cache, never a whole output's copy).
constexpr int64_t kPiece = 4096;

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

void WireTensor::Read(int64_t begin, int64_t n, double* out) const {
  const char* p = bytes.data() + offset;
  if (dtype == "float32") {
    ReadAs<float>(p + 4 * begin, n, out);
  } else if (dtype == "float64") {
    ReadAs<double>(p + 8 * begin, n, out);
  } else if (dtype == "int64") {
    ReadAs<int64_t>(p + 8 * begin, n, out);
  } else if (dtype == "int32") {
    ReadAs<int32_t>(p + 4 * begin, n, out);
  } else if (dtype == "bool" || dtype == "uint8") {
    ReadAs<uint8_t>(p + begin, n, out);
  } else if (dtype == "int8") {
    ReadAs<int8_t>(p + begin, n, out);
  } else if (dtype == "int16") {
    ReadAs<int16_t>(p + 2 * begin, n, out);
  } else {
    const bool half = dtype == "float16";
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, p + 2 * (begin + i), 2);
      out[i] = half ? HalfToDouble(h) : BfloatToDouble(h);
    }
  }
}

double WireTensor::at(int64_t i) const {
  double v = NAN;
  if (i >= 0 && i < numel()) Read(i, 1, &v);
  return v;
}

Result<WireTensor> DecodeTensor(const json& desc, std::string blob) {
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
  t.bytes = std::move(blob);
  t.offset = offset;
  return t;
}

namespace {

// Reads `n` elements of `x` and `y` a piece at a time (read(begin, count,
// out)) and hands each pair of pieces to fn(begin, count, xs, ys).
template <typename ReadX, typename ReadY, typename Fn>
void ForPieces(int64_t n, const ReadX& x, const ReadY& y, const Fn& fn) {
  double x_piece[kPiece], y_piece[kPiece];
  for (int64_t begin = 0; begin < n; begin += kPiece) {
    const int64_t m = std::min(kPiece, n - begin);
    x(begin, m, x_piece);
    y(begin, m, y_piece);
    fn(begin, m, x_piece, y_piece);
  }
}

// torch.allclose's rule over `n` elements that `want` and `got` read a piece
// at a time (read(begin, count, out)).
template <typename ReadWant, typename ReadGot>
CloseCheck AllCloseIn(int64_t n, const ReadWant& want, const ReadGot& got,
                      double atol, double rtol,
                      const std::vector<int64_t>& shape,
                      const std::vector<int64_t>& indices) {
  CloseCheck c;
  c.elements = n;
  ForPieces(n, want, got,
            [&](int64_t begin, int64_t m, const double* a_piece,
                const double* b_piece) {
              for (int64_t j = 0; j < m; ++j) {
                const double a = a_piece[j], b = b_piece[j];
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
                  const int64_t i = begin + j;
                  const int64_t flat =
                      indices.empty() ? i : indices[static_cast<size_t>(i)];
                  c.examples.push_back("element " + IndexText(flat, shape) +
                                       ": got " + Num(b, "%.7g") + ", want " +
                                       Num(a, "%.7g"));
                }
              }
            });
  return c;
}

template <typename ReadGot, typename ReadExact>
double RelativeRmsIn(int64_t n, const ReadGot& got, const ReadExact& exact) {
  double num = 0, den = 0;
  int64_t used = 0;
  ForPieces(
      n, got, exact,
      [&](int64_t, int64_t m, const double* g_piece, const double* e_piece) {
        for (int64_t j = 0; j < m; ++j) {
          if (!std::isfinite(g_piece[j]) || !std::isfinite(e_piece[j]))
            continue;
          const double d = g_piece[j] - e_piece[j];
          num += d * d;
          den += e_piece[j] * e_piece[j];
          ++used;
        }
      });
  if (used == 0) return NAN;
  if (den == 0) return num == 0 ? 0 : INFINITY;
  return std::sqrt(num / den);
}

auto Reader(const WireTensor& t) {
  return [&t](int64_t begin, int64_t m, double* out) { t.Read(begin, m, out); };
}

auto Reader(const std::vector<double>& v) {
  return [&v](int64_t begin, int64_t m, double* out) {
    std::copy(v.begin() + begin, v.begin() + begin + m, out);
  };
}

}  // namespace

CloseCheck AllClose(const WireTensor& want, const WireTensor& got, double atol,
                    double rtol, const std::vector<int64_t>& shape,
                    const std::vector<int64_t>& indices) {
  return AllCloseIn(std::min(want.numel(), got.numel()), Reader(want),
                    Reader(got), atol, rtol, shape, indices);
}

CloseCheck AllClose(const std::vector<double>& want,
                    const std::vector<double>& got, double atol, double rtol,
                    const std::vector<int64_t>& shape,
                    const std::vector<int64_t>& indices) {
  return AllCloseIn(static_cast<int64_t>(std::min(want.size(), got.size())),
                    Reader(want), Reader(got), atol, rtol, shape, indices);
}

double RelativeRmsError(const WireTensor& got, const WireTensor& exact) {
  return RelativeRmsIn(std::min(got.numel(), exact.numel()), Reader(got),
                       Reader(exact));
}

double RelativeRmsError(const WireTensor& got, const WireTensor& exact,
                        const std::vector<int64_t>& at) {
  const auto sampled = [&](int64_t begin, int64_t m, double* out) {
    for (int64_t j = 0; j < m; ++j)
      out[j] = got.at(at[static_cast<size_t>(begin + j)]);
  };
  return RelativeRmsIn(std::min(static_cast<int64_t>(at.size()), exact.numel()),
                       sampled, Reader(exact));
}

double RelativeRmsError(const std::vector<double>& got,
                        const std::vector<double>& exact) {
  return RelativeRmsIn(static_cast<int64_t>(std::min(got.size(), exact.size())),
                       Reader(got), Reader(exact));
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
