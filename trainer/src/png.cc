#include "skilldb/trainer/png.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>

namespace skilldb::trainer {

namespace {

const std::array<uint32_t, 256>& CrcTable() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  return table;
}

void PutU32(std::string& out, uint32_t v) {
  out.push_back(static_cast<char>(v >> 24));
  out.push_back(static_cast<char>(v >> 16));
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v));
}

void Chunk(std::string& out, const char type[4], const std::string& data) {
  PutU32(out, static_cast<uint32_t>(data.size()));
  std::string body(type, 4);
  body += data;
  out += body;
  PutU32(out,
         Crc32(reinterpret_cast<const uint8_t*>(body.data()), body.size()));
}

}  // namespace

uint32_t Crc32(const uint8_t* data, size_t size, uint32_t crc) {
  const auto& t = CrcTable();
  uint32_t c = crc ^ 0xffffffffu;
  for (size_t i = 0; i < size; ++i) c = t[(c ^ data[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

uint32_t Adler32(const uint8_t* data, size_t size, uint32_t adler) {
  uint32_t a = adler & 0xffff, b = adler >> 16;
  for (size_t i = 0; i < size; ++i) {
    a = (a + data[i]) % 65521;
    b = (b + a) % 65521;
  }
  return (b << 16) | a;
}

Image::Image(int w, int h, uint32_t background)
    : width(std::max(w, 1)), height(std::max(h, 1)) {
  rgb.resize(static_cast<size_t>(width) * height * 3);
  for (size_t i = 0; i < rgb.size(); i += 3) {
    rgb[i] = static_cast<uint8_t>(background >> 16);
    rgb[i + 1] = static_cast<uint8_t>(background >> 8);
    rgb[i + 2] = static_cast<uint8_t>(background);
  }
}

void Image::Set(int x, int y, uint32_t color) {
  if (x < 0 || y < 0 || x >= width || y >= height) return;
  const size_t i = (static_cast<size_t>(y) * width + x) * 3;
  rgb[i] = static_cast<uint8_t>(color >> 16);
  rgb[i + 1] = static_cast<uint8_t>(color >> 8);
  rgb[i + 2] = static_cast<uint8_t>(color);
}

uint32_t Image::Get(int x, int y) const {
  if (x < 0 || y < 0 || x >= width || y >= height) return 0;
  const size_t i = (static_cast<size_t>(y) * width + x) * 3;
  return (uint32_t{rgb[i]} << 16) | (uint32_t{rgb[i + 1]} << 8) | rgb[i + 2];
}

void Image::Line(int x0, int y0, int x1, int y1, uint32_t color,
                 int thickness) {
  // Bresenham, each point stamped as a thickness x thickness square.
  const int dx = std::abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
  const int dy = -std::abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
  int err = dx + dy;
  const int lo = -(thickness - 1) / 2, hi = thickness / 2;
  for (int guard = 0; guard < 1 << 16; ++guard) {
    for (int a = lo; a <= hi; ++a) {
      for (int b = lo; b <= hi; ++b) Set(x0 + a, y0 + b, color);
    }
    if (x0 == x1 && y0 == y1) break;
    const int e2 = 2 * err;
    if (e2 >= dy) {
      err += dy;
      x0 += sx;
    }
    if (e2 <= dx) {
      err += dx;
      y0 += sy;
    }
  }
}

void Image::Rect(int x0, int y0, int x1, int y1, uint32_t color) {
  if (x0 > x1) std::swap(x0, x1);
  if (y0 > y1) std::swap(y0, y1);
  for (int y = y0; y <= y1; ++y) {
    for (int x = x0; x <= x1; ++x) Set(x, y, color);
  }
}

std::string EncodePng(const Image& image) {
  std::string out("\x89PNG\r\n\x1a\n", 8);
  std::string ihdr;
  PutU32(ihdr, static_cast<uint32_t>(image.width));
  PutU32(ihdr, static_cast<uint32_t>(image.height));
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit RGB, no interlace
  Chunk(out, "IHDR", ihdr);

  // Raw scanlines, each with filter byte 0.
  std::string raw;
  const size_t stride = static_cast<size_t>(image.width) * 3;
  raw.reserve((stride + 1) * image.height);
  for (int y = 0; y < image.height; ++y) {
    raw.push_back('\0');
    raw.append(reinterpret_cast<const char*>(image.rgb.data()) + y * stride,
               stride);
  }
  // zlib: CMF 0x78 (deflate, 32K window), FLG 0x01 (check bits, level 0).
  std::string z("\x78\x01", 2);
  size_t pos = 0;
  do {
    const size_t n = std::min<size_t>(65535, raw.size() - pos);
    const bool last = pos + n == raw.size();
    z.push_back(last ? '\x01' : '\x00');  // BFINAL, BTYPE 00 (stored)
    z.push_back(static_cast<char>(n & 0xff));
    z.push_back(static_cast<char>(n >> 8));
    z.push_back(static_cast<char>(~n & 0xff));
    z.push_back(static_cast<char>((~n >> 8) & 0xff));
    z.append(raw, pos, n);
    pos += n;
  } while (pos < raw.size());
  PutU32(z, Adler32(reinterpret_cast<const uint8_t*>(raw.data()), raw.size()));
  Chunk(out, "IDAT", z);
  Chunk(out, "IEND", "");
  return out;
}

Image LineChart(const std::vector<Series>& series, const ChartOptions& options,
                ChartRange* range_out) {
  Image img(options.width, options.height);
  const int left = 40, right = 12, top = 12, bottom = 28;
  const int pw = img.width - left - right, ph = img.height - top - bottom;
  ChartRange r;
  bool any = false;
  for (const auto& s : series) {
    for (auto [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      if (!any) {
        r = {x, x, y, y};
        any = true;
      }
      r.x_min = std::min(r.x_min, x);
      r.x_max = std::max(r.x_max, x);
      r.y_min = std::min(r.y_min, y);
      r.y_max = std::max(r.y_max, y);
    }
  }
  if (!any) r = {0, 1, 0, 1};
  if (options.y_from_zero) {
    r.y_min = std::min(r.y_min, 0.0);
    r.y_max = std::max(r.y_max, 0.0);
  }
  if (r.x_max - r.x_min < 1e-12) {
    r.x_min -= 0.5;
    r.x_max += 0.5;
  }
  if (r.y_max - r.y_min < 1e-12) {
    r.y_min -= 0.5;
    r.y_max += 0.5;
  }
  if (range_out) *range_out = r;
  // Where a value falls in [0, 1] of its axis. Finite points can still
  // span more than a double holds (-1e308 and 1e308): the fraction is then
  // inf or NaN, read as 0, and it is clamped so that lround never sees a
  // value past int and no rectangle spans billions of pixels.
  auto fraction = [](double v, double lo, double hi) {
    const double t = (v - lo) / (hi - lo);
    return std::isfinite(t) ? std::clamp(t, -1.0, 2.0) : 0.0;
  };
  auto px = [&](double x) {
    return left +
           static_cast<int>(std::lround(fraction(x, r.x_min, r.x_max) * pw));
  };
  auto py = [&](double y) {
    return top + ph -
           static_cast<int>(std::lround(fraction(y, r.y_min, r.y_max) * ph));
  };
  for (int i = 1; i < 10; ++i) {
    const int gx = left + pw * i / 10, gy = top + ph * i / 10;
    img.Line(gx, top, gx, top + ph, 0xe8e8e8);
    img.Line(left, gy, left + pw, gy, 0xe8e8e8);
  }
  if (r.y_min < 0 && r.y_max > 0) {
    img.Line(left, py(0), left + pw, py(0), 0xb0b0b0);
  }
  img.Line(left, top, left, top + ph, 0x000000);
  img.Line(left, top + ph, left + pw, top + ph, 0x000000);
  for (const auto& s : series) {
    std::vector<std::pair<double, double>> pts;
    for (auto p : s.points) {
      if (std::isfinite(p.first) && std::isfinite(p.second)) pts.push_back(p);
    }
    std::sort(pts.begin(), pts.end());
    const int bar_w =
        std::max(1, pw / std::max<int>(1, static_cast<int>(pts.size())) / 3);
    for (size_t i = 0; i < pts.size(); ++i) {
      const int x = px(pts[i].first), y = py(pts[i].second);
      if (s.bars) {
        img.Rect(x - bar_w / 2, y, x + bar_w / 2, py(std::max(r.y_min, 0.0)),
                 s.color);
        continue;
      }
      if (i > 0) {
        img.Line(px(pts[i - 1].first), py(pts[i - 1].second), x, y, s.color, 2);
      }
      img.Rect(x - 2, y - 2, x + 2, y + 2, s.color);
    }
  }
  return img;
}

std::string Base64(const std::string& bytes) {
  static const char* kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (uint32_t{static_cast<uint8_t>(bytes[i])} << 16) |
                       (uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8) |
                       static_cast<uint8_t>(bytes[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < bytes.size()) {
    uint32_t v = uint32_t{static_cast<uint8_t>(bytes[i])} << 16;
    if (i + 1 < bytes.size())
      v |= uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace skilldb::trainer
