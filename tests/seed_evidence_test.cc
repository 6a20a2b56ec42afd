// The seed library's speedup evidence says what it was measured against
// (issue 21): every verifier report stored in a seed skill carries a
// `context` (scripts/seed_evidence_context.py) naming the task reference it
// beat (file and SHA-256 as committed), the vendor library or PyTorch call
// on the same shapes (measured with the same protocol, or "not measured"),
// and the candidate (file, SHA-256 equal to the report's candidate_hash,
// and whether it is the skill's own code pattern or what it is instead);
// every Hopper benchmark (extra.benchmarks) names cuBLAS and the hash of the
// skill's code it timed; and every skill without a record says so.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "seed_data.h"
#include "seed_test_util.h"
#include "build_paths.h"
#include "skilldb/util/sha256.h"

#ifndef SKILLDB_SEED_DIR
#error "SKILLDB_SEED_DIR must name the seed directory (data/seed)"
#endif

namespace skilldb {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

// The repository root (data/seed's grandparent).
fs::path Root() {
  return fs::path(testing::SeedTestDir())
      .parent_path()
      .parent_path();
}

// SHA-256 of a committed file, "" if it cannot be read.
std::string FileSha256(const std::string& relative) {
  auto text = util::ReadFile((Root() / relative).string());
  return text.ok() ? util::Sha256Hex(*text) : std::string();
}

std::string Str(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>()
                                               : std::string();
}

// "16.27x" for 16.2712.
std::string Ratio(double r) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fx", r);
  return buf;
}

void CheckVendor(const Json& vendor) {
  CHECK_MESSAGE(!Str(vendor, "library").empty(), "vendor baseline unnamed");
  CHECK_MESSAGE(!Str(vendor, "call").empty(), "vendor call unnamed");
  const std::string status = Str(vendor, "status");
  CHECK_MESSAGE((status == "measured" || status == "not measured"),
                "vendor status '" << status << "'");
  if (status != "measured") return;
  for (const char* key : {"candidate_over_vendor", "reference_over_vendor",
                          "vendor_median_ms", "candidate_median_ms"}) {
    CHECK_MESSAGE((vendor.contains(key) && vendor[key].is_number() &&
                   vendor[key].get<double>() > 0),
                  "measured vendor baseline without " << key);
  }
  CHECK(!Str(vendor, "protocol").empty());
}

void CheckContext(const Json& report) {
  REQUIRE_MESSAGE(report.contains("context"), "evidence without context");
  const Json& c = report["context"];
  const Json& base = c.at("baseline");
  CHECK(Str(base, "task") == Str(report, "task"));
  CHECK(!Str(base, "what").empty());
  CHECK_MESSAGE(FileSha256(Str(base, "file")) == Str(base, "sha256"),
                "baseline " << Str(base, "file")
                            << " differs from the one measured (or is gone)");
  const Json& cand = c.at("candidate");
  const std::string hash = Str(report, "candidate_hash");
  CHECK(Str(cand, "sha256") == hash);
  CHECK_MESSAGE(FileSha256(Str(cand, "file")) == hash,
                "candidate " << Str(cand, "file")
                             << " differs from the one measured (or is gone)");
  const std::string pattern = Str(cand, "pattern");
  CHECK_MESSAGE(
      (pattern == "skill-code" || pattern == "technique-in-other-kernel"),
      "pattern '" << pattern << "'");
  CHECK_MESSAGE(!Str(cand, "what").empty(), "the candidate is not described");
  CheckVendor(c.at("vendor"));
  // The sentence states the report's own ratio and names both baselines.
  const std::string summary = Str(c, "summary");
  const double ratio = report.at("speedup").at("ratio").get<double>();
  CHECK_MESSAGE(
      summary.rfind(Ratio(ratio) + " over the task reference", 0) == 0,
      "summary does not start with " << Ratio(ratio));
  CHECK(summary.find(Str(c["vendor"], "call")) != std::string::npos);
}

TEST_CASE(
    "every seed evidence record names its baseline, the vendor baseline and "
    "the candidate, with hashes of the committed files") {
  int records = 0;
  for (const Skill& s : testing::SeedSkillsOrFail()) {
    for (const std::string& e : s.evidence_json) {
      CAPTURE(s.id);
      const Json report = Json::parse(e);
      CheckContext(report);
      ++records;
    }
  }
  CHECK(records >= 36);
}

TEST_CASE(
    "every seed skill carries a speedup record or says it was not measured") {
  for (const Skill& s : testing::SeedSkillsOrFail()) {
    CAPTURE(s.id);
    const Json extra = testing::ExtraJson(s);
    const bool benchmarked =
        extra.contains("benchmarks") && !extra["benchmarks"].empty();
    const std::string says = Str(extra, "speedup_evidence");
    if (!s.evidence_json.empty() || benchmarked) {
      CHECK_MESSAGE(says.empty(),
                    "has a record but says '" << says.substr(0, 40) << "'");
      continue;
    }
    CHECK_MESSAGE((says.rfind("not measured", 0) == 0 ||
                   says.rfind("measured without a passing record", 0) == 0),
                  "no record, and extra.speedup_evidence does not say "
                  "\"not measured\"");
  }
}

TEST_CASE(
    "every hopper benchmark names cuBLAS and the hash of the skill code it "
    "timed") {
  for (const Skill& s : testing::SeedSkillsOrFail()) {
    const Json extra = testing::ExtraJson(s);
    if (!extra.contains("benchmarks")) continue;
    CAPTURE(s.id);
    const std::string code_hash = util::Sha256Hex(s.code);
    for (const Json& b : extra["benchmarks"]) {
      CHECK_MESSAGE(Str(b, "candidate_sha256") == code_hash,
                    "the benchmark timed other code than the skill's");
      CHECK(b.value("correct", false));
      CHECK(!Str(b, "baseline").empty());
      CHECK(b.at("candidate_over_vendor").get<double>() > 0);
      CHECK(!Str(b, "protocol").empty());
      CHECK(!Str(b, "device").empty());
    }
  }
}

TEST_CASE("the evidence summary format is the one the test reads") {
  CHECK(Ratio(16.2712) == "16.27x");
  CHECK(Ratio(0.7) == "0.70x");
  CHECK(util::Sha256Hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace skilldb
