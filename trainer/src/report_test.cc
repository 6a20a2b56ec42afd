// The report (trainer/tools/report.py through WriteReport) and the
// TensorBoard event encoding. The encoding's reader is TensorBoard itself:
// the loop's co-evolution test reads a run's event files back with it.
#include "skilldb/trainer/report.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "build_paths.h"
#include "skilldb/trainer/events.h"
#include "test_dir.h"

namespace skilldb::trainer {
namespace {

uint32_t Le32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[at + i]);
  return v;
}

TEST_CASE("CRC-32C and the TFRecord frame match their published forms") {
  // The check value of CRC-32C (Castagnoli), RFC 3720 B.4.
  CHECK(Crc32c("123456789") == 0xe3069283u);
  CHECK(Crc32c("") == 0u);
  const std::string payload = "abc";
  const std::string frame = TfRecord(payload);
  REQUIRE(frame.size() == 8 + 4 + payload.size() + 4);
  CHECK(Le32(frame, 0) == 3);  // length, little-endian uint64
  CHECK(Le32(frame, 4) == 0);
  const auto mask = [](uint32_t crc) {
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
  };
  CHECK(Le32(frame, 8) == mask(Crc32c(frame.substr(0, 8))));
  CHECK(frame.substr(12, 3) == payload);
  CHECK(Le32(frame, 15) == mask(Crc32c(payload)));
}

TEST_CASE("a scalar event encodes its step, tags and values as protobuf") {
  const std::string e = ScalarEvent(1.5, 300, {{"reward/policy", 0.25},
                                               {"skipped", std::nan("")}});
  // wall_time (field 1, fixed64), then step (field 2, varint 300 = ac 02).
  CHECK(static_cast<uint8_t>(e[0]) == 0x09);
  CHECK(static_cast<uint8_t>(e[9]) == 0x10);
  CHECK(static_cast<uint8_t>(e[10]) == 0xac);
  CHECK(static_cast<uint8_t>(e[11]) == 0x02);
  CHECK(e.find("reward/policy") != std::string::npos);
  CHECK(e.find("skipped") == std::string::npos);  // not finite: left out
}

TEST_CASE("the report draws its charts and escapes what it quotes") {
  skilldb::trainer::ScopedTempDir temp("skilldb_report_test");
  const std::string dir = temp.path();
  std::string lines;
  for (int i = 1; i <= 4; ++i) {
    lines += "{\"step\":" + std::to_string(i) +
             ",\"reward\":{\"policy\":{\"mean\":" + std::to_string(0.1 * i) +
             "},\"<script>x</script>\":{\"mean\":0.2}},\"speedup\":{\"mean\":"
             "1.5,\"best\":2.5},\"skills\":{\"proposed\":1,\"rejected\":1,"
             "\"added\":0,\"rejected_reasons\":{\"a & <b>\":1}},"
             "\"library\":{\"size\":" + std::to_string(170 + i) +
             ",\"version\":" + std::to_string(10 + i) + "}}\n";
  }
  REQUIRE(WriteFile(dir + "/steps.jsonl", lines).ok());
  ReportOptions options = DefaultReportOptions();
  options.script = std::string(SKILLDB_TRAINER_TOOLS) + "/report.py";
  auto r = WriteReport(dir, options);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  CHECK(r->steps == 4);
  for (const char* f : {"reward.png", "speedup.png", "skills.png",
                        "library.png", "run_skills.png", "utility.png"}) {
    auto png = ReadFile(dir + "/" + f);
    REQUIRE_MESSAGE(png.ok(), f);
    CHECK(png->compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0);
  }
  auto html = ReadFile(r->html_path);
  REQUIRE(html.ok());
  CHECK(html->find("<script>") == std::string::npos);
  CHECK(html->find("&lt;script&gt;x&lt;/script&gt;") != std::string::npos);
  CHECK(html->find("a &amp; &lt;b&gt;") != std::string::npos);
  CHECK(html->find("data:image/png;base64,iVBORw0KGgo") != std::string::npos);

  REQUIRE(WriteFile(dir + "/steps.jsonl", "not json\n[]\n").ok());
  auto bad = WriteReport(dir, options);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK(bad.status().message().find("no step object") != std::string::npos);
  auto missing = WriteReport(dir + "/nope", options);
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
                    "{\"step\":1,\"reward\":{\"policy\":{\"mean\":-1e308}},"
                    "\"skills\":{\"added\":-1e308}}\n"
                    "{\"step\":2,\"reward\":{\"policy\":{\"mean\":1e308}},"
                    "\"skills\":{\"added\":1e308}}\n")
              .ok());
  auto r = WriteReport(dir);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  CHECK(r->steps == 2);
}

}  // namespace
}  // namespace skilldb::trainer
