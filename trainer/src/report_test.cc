#include "skilldb/trainer/report.h"

#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "skilldb/trainer/png.h"
#include "test_dir.h"

namespace skilldb::trainer {
namespace {

uint32_t U32(const std::string& s, size_t at) {
  return (uint32_t{static_cast<uint8_t>(s[at])} << 24) |
         (uint32_t{static_cast<uint8_t>(s[at + 1])} << 16) |
         (uint32_t{static_cast<uint8_t>(s[at + 2])} << 8) |
         static_cast<uint8_t>(s[at + 3]);
}

const uint8_t* Bytes(const std::string& s, size_t at = 0) {
  return reinterpret_cast<const uint8_t*>(s.data()) + at;
}

// Decodes a PNG written by EncodePng: checks the signature, every chunk's
// CRC, IHDR, the zlib header and Adler-32, inflates the stored blocks and
// returns the pixels (filter 0 rows).
struct Decoded {
  int width = 0, height = 0;
  std::string pixels;
};
Decoded Decode(const std::string& png) {
  Decoded d;
  REQUIRE(png.size() > 8);
  REQUIRE(png.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0);
  size_t pos = 8;
  std::string idat;
  bool seen_end = false;
  int chunk = 0;
  while (pos + 12 <= png.size()) {
    const uint32_t len = U32(png, pos);
    const std::string type = png.substr(pos + 4, 4);
    REQUIRE(pos + 12 + len <= png.size());
    CHECK(Crc32(Bytes(png, pos + 4), len + 4) == U32(png, pos + 8 + len));
    if (chunk++ == 0) {
      REQUIRE(type == "IHDR");
      REQUIRE(len == 13);
      d.width = static_cast<int>(U32(png, pos + 8));
      d.height = static_cast<int>(U32(png, pos + 12));
      CHECK(png[pos + 16] == 8);  // bit depth
      CHECK(png[pos + 17] == 2);  // RGB
    }
    if (type == "IDAT") idat += png.substr(pos + 8, len);
    if (type == "IEND") seen_end = true;
    pos += 12 + len;
  }
  CHECK(seen_end);
  CHECK(pos == png.size());
  REQUIRE(idat.size() > 6);
  CHECK((static_cast<uint8_t>(idat[0]) * 256 + static_cast<uint8_t>(idat[1])) %
            31 ==
        0);
  std::string raw;
  size_t z = 2;
  for (;;) {
    const uint8_t header = static_cast<uint8_t>(idat[z]);
    REQUIRE((header & 6) == 0);  // stored
    const uint16_t n = static_cast<uint8_t>(idat[z + 1]) |
                       (static_cast<uint8_t>(idat[z + 2]) << 8);
    const uint16_t nn = static_cast<uint8_t>(idat[z + 3]) |
                        (static_cast<uint8_t>(idat[z + 4]) << 8);
    REQUIRE(static_cast<uint16_t>(~n) == nn);
    raw += idat.substr(z + 5, n);
    z += 5 + n;
    if (header & 1) break;
  }
  CHECK(U32(idat, z) == Adler32(Bytes(raw), raw.size()));
  const size_t stride = static_cast<size_t>(d.width) * 3;
  REQUIRE(raw.size() == (stride + 1) * d.height);
  for (int y = 0; y < d.height; ++y) {
    CHECK(raw[y * (stride + 1)] == 0);
    d.pixels += raw.substr(y * (stride + 1) + 1, stride);
  }
  return d;
}

TEST_CASE("checksums match published values") {
  const std::string s = "123456789";
  CHECK(Crc32(Bytes(s), s.size()) == 0xcbf43926u);
  const std::string w = "Wikipedia";
  CHECK(Adler32(Bytes(w), w.size()) == 0x11e60398u);
  CHECK(Base64("Man") == "TWFu");
  CHECK(Base64("Ma") == "TWE=");
  CHECK(Base64("M") == "TQ==");
}

TEST_CASE("a PNG round-trips through an independent stored-block decoder") {
  // Large enough for several 65535-byte deflate blocks.
  Image img(300, 200);
  img.Line(0, 0, 299, 199, 0xff0000, 1);
  img.Rect(10, 10, 20, 30, 0x00ff00);
  std::string png = EncodePng(img);
  Decoded d = Decode(png);
  CHECK(d.width == 300);
  CHECK(d.height == 200);
  CHECK(d.pixels == std::string(img.rgb.begin(), img.rgb.end()));
  CHECK(img.Get(15, 20) == 0x00ff00);
  CHECK(img.Get(0, 0) == 0xff0000);
  CHECK(img.Get(299, 199) == 0xff0000);
  CHECK(img.Get(299, 0) == 0xffffff);
}

TEST_CASE("a chart draws its series inside the plot area") {
  Series s{"a", 0x0000ff, {{0, 0}, {1, 1}, {2, 4}}, false};
  ChartRange r;
  Image img = LineChart({s}, {.width = 200, .height = 100}, &r);
  CHECK(r.x_min == 0);
  CHECK(r.x_max == 2);
  CHECK(r.y_max == 4);
  int blue = 0;
  for (int y = 0; y < img.height; ++y) {
    for (int x = 0; x < img.width; ++x) blue += img.Get(x, y) == 0x0000ff;
  }
  CHECK(blue > 50);
}

TEST_CASE(
    "the report writes decodable charts and an HTML page embedding them") {
  skilldb::trainer::ScopedTempDir temp("skilldb_report_test");
  const std::string dir = temp.path();
  std::string lines;
  for (int i = 1; i <= 5; ++i) {
    lines += "{\"step\":" + std::to_string(i) +
             ",\"reward\":{\"policy\":{\"mean\":" + std::to_string(0.1 * i) +
             "},\"selection\":{\"mean\":0.2}},\"speedup\":{\"mean\":1.5,"
             "\"best\":2.5},\"skills_added\":" +
             std::to_string(i % 2) +
             ",\"library\":{\"size\":" + std::to_string(170 + i) +
             ",\"version\":" + std::to_string(10 + i) + "}}\n";
  }
  REQUIRE(WriteFile(dir + "/steps.jsonl", lines).ok());
  auto r = WriteReport(dir);
  REQUIRE(r.ok());
  CHECK(r->steps == 5);
  CHECK(r->files.size() == 5);
  for (const char* f :
       {"reward.png", "speedup.png", "skills.png", "library.png"}) {
    auto png = ReadFile(dir + "/" + f);
    REQUIRE(png.ok());
    Decoded d = Decode(*png);
    CHECK(d.width == 640);
    CHECK(d.height == 320);
  }
  auto html = ReadFile(r->html_path);
  REQUIRE(html.ok());
  size_t embedded = 0;
  for (size_t p = 0; (p = html->find("data:image/png;base64,iVBORw0KGgo", p)) !=
                     std::string::npos;
       ++p) {
    ++embedded;
  }
  CHECK(embedded == 4);
  CHECK(html->find("policy") != std::string::npos);
  CHECK(html->find("selection") != std::string::npos);

  REQUIRE(WriteFile(dir + "/steps.jsonl", "not json\n[]\n").ok());
  auto bad = WriteReport(dir);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("no step line") != std::string::npos);
  auto missing = WriteReport(dir + "/nope");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
}

TEST_CASE("a torn last line and a bad line are dropped and named, not fatal") {
  skilldb::trainer::ScopedTempDir temp("skilldb_report_torn_test");
  const std::string dir = temp.path();
  // What a run killed while writing leaves: three whole lines, one torn.
  REQUIRE(WriteFile(dir + "/steps.jsonl",
                    "{\"step\":1}\n{\"step\":2}\nnot json\n{\"step\":3}\n"
                    "{\"step\":4,\"rew")
              .ok());
  auto r = WriteReport(dir);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  CHECK(r->steps == 3);
  REQUIRE(r->dropped.size() == 2);
  CHECK(r->dropped[0] == "line 3: not JSON");
  CHECK(r->dropped[1].starts_with("line 5: torn last line"));
  auto html = ReadFile(r->html_path);
  REQUIRE(html.ok());
  CHECK(html->find("torn last line") != std::string::npos);
}

TEST_CASE("names from steps.jsonl are escaped in report.html") {
  skilldb::trainer::ScopedTempDir temp("skilldb_report_escape_test");
  const std::string dir = temp.path();
  REQUIRE(WriteFile(dir + "/steps.jsonl",
                    "{\"step\":1,\"reward\":{\"<script>alert(1)</script>\":"
                    "{\"mean\":1}}}\n")
              .ok());
  auto r = WriteReport(dir);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  auto html = ReadFile(r->html_path);
  REQUIRE(html.ok());
  CHECK(html->find("<script>") == std::string::npos);
  CHECK(html->find("&lt;script&gt;alert(1)&lt;/script&gt;") !=
        std::string::npos);
}

TEST_CASE("values spanning more than a double holds still chart in bounds") {
  skilldb::trainer::ScopedTempDir temp("skilldb_report_span_test");
  const std::string dir = temp.path();
  // Finite points whose difference overflows: the axis fraction is inf.
  REQUIRE(WriteFile(dir + "/steps.jsonl",
                    "{\"step\":1,\"skills_added\":-1e308}\n"
                    "{\"step\":2,\"skills_added\":1e308}\n")
              .ok());
  auto r = WriteReport(dir);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  CHECK(r->steps == 2);
}

}  // namespace
}  // namespace skilldb::trainer
