// Helpers the seed tests share (seed_test, seed_review_test,
// seed_evidence_test): the seed skills, loaded or the test fails, and a
// skill's extra JSON.
#ifndef SKILLDB_TESTS_SEED_TEST_UTIL_H_
#define SKILLDB_TESTS_SEED_TEST_UTIL_H_

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "seed_data.h"
#include "skilldb/skill.h"
#include "build_paths.h"

#ifndef SKILLDB_SEED_DIR
#error "SKILLDB_SEED_DIR must name the seed directory (data/seed)"
#endif

namespace skilldb::testing {

// The seed directory of this build ($SKILLDB_SEED_DIR overrides it).
inline std::string SeedTestDir() { return SeedDir(SKILLDB_SEED_DIR); }

// Every seed skill; the calling test fails if one does not load.
inline std::vector<Skill> SeedSkillsOrFail() {
  auto skills = LoadSeedSkills(SeedTestDir());
  REQUIRE_MESSAGE(skills.ok(), skills.status().ToString());
  return std::move(skills).value();
}

// The skill's extra JSON object ({} when it has none).
inline nlohmann::json ExtraJson(const Skill& s) {
  return s.extra_json.empty() ? nlohmann::json::object()
                              : nlohmann::json::parse(s.extra_json);
}

}  // namespace skilldb::testing

#endif  // SKILLDB_TESTS_SEED_TEST_UTIL_H_
