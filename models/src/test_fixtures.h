// Helpers for the models/ tests: where the fixtures are, reading their JSON,
// the seed skill texts the fixtures hash, and FNV-1a over token ids (the
// hash models/tools/make_fixtures.py writes). Header-only, test code only.
#ifndef SKILLDB_MODELS_SRC_TEST_FIXTURES_H_
#define SKILLDB_MODELS_SRC_TEST_FIXTURES_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace skilldb::models::testing {

// The fixture directory: $SKILLDB_MODELS_FIXTURES when set (fixtures
// regenerated elsewhere, e.g. on the GPU machine), else the committed ones.
inline std::string FixtureDir() {
  if (const char* env = std::getenv("SKILLDB_MODELS_FIXTURES")) return env;
  return SKILLDB_MODELS_TESTDATA;
}

// all-MiniLM-L6-v2: $SKILLDB_MINILM_DIR, else where setup.sh installs it.
inline std::string MiniLmDir() {
  if (const char* env = std::getenv("SKILLDB_MINILM_DIR")) return env;
  return SKILLDB_MINILM_DIR;
}

inline bool HaveMiniLm() {
  return std::filesystem::exists(MiniLmDir() + "/model.safetensors") &&
         std::filesystem::exists(MiniLmDir() + "/tokenizer.json");
}

inline nlohmann::json ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return nlohmann::json::parse(buffer.str());
}

inline std::vector<nlohmann::json> SeedSkills() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(SKILLDB_SEED_DIR)) {
    if (e.path().extension() == ".jsonl") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<nlohmann::json> skills;
  for (const std::string& f : files) {
    std::ifstream in(f);
    std::string line;
    while (std::getline(in, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      skills.push_back(nlohmann::json::parse(line));
    }
  }
  return skills;
}

inline std::string Field(const nlohmann::json& skill, const char* key) {
  if (!skill.contains(key) || !skill[key].is_string()) return "";
  return skill[key].get<std::string>();
}

// make_fixtures.py's corpus_texts: every text field of every seed skill.
inline std::vector<std::string> SeedCorpus() {
  std::vector<std::string> texts;
  for (const auto& s : SeedSkills()) {
    for (const char* key : {"title", "summary", "body", "code"}) {
      texts.push_back(Field(s, key));
    }
  }
  return texts;
}

// make_fixtures.py's embedding_texts: the titles, then title + summary +
// body of each skill.
inline std::vector<std::string> SeedEmbeddingTexts() {
  std::vector<std::string> titles, full;
  for (const auto& s : SeedSkills()) {
    titles.push_back(Field(s, "title"));
    full.push_back(Field(s, "title") + "\n" + Field(s, "summary") + "\n" +
                   Field(s, "body"));
  }
  titles.insert(titles.end(), full.begin(), full.end());
  return titles;
}

inline std::string Fnv1a64(const std::vector<int32_t>& ids) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (int32_t id : ids) {
    const uint32_t u = static_cast<uint32_t>(id);
    for (int b = 0; b < 4; ++b) {
      h ^= (u >> (8 * b)) & 0xFF;
      h *= 0x100000001B3ull;
    }
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace skilldb::models::testing

#endif  // SKILLDB_MODELS_SRC_TEST_FIXTURES_H_
