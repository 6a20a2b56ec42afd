// Helpers for the models/ tests: where the fixtures are, reading their JSON,
// the seed skill texts the fixtures hash, FNV-1a over token ids (the hash
// models/tools/make_fixtures.py writes), and small file operations. Header
// only, test code only.
//
// POSIX calls rather than std::filesystem: the torch wheel's libtorch.so
// exports std::filesystem symbols of its own build, which the dynamic linker
// binds a test's calls to (remove_all crashed through them).
#ifndef SKILLDB_MODELS_SRC_TEST_FIXTURES_H_
#define SKILLDB_MODELS_SRC_TEST_FIXTURES_H_

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>
#include "build_paths.h"

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

inline bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

inline bool HaveMiniLm() {
  return Exists(MiniLmDir() + "/model.safetensors") &&
         Exists(MiniLmDir() + "/tokenizer.json");
}

// The names of the regular files in `dir`, sorted.
inline std::vector<std::string> ListFiles(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      struct stat st;
      if (::stat((dir + "/" + name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        names.push_back(name);
      }
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

inline void CopyFile(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  out << in.rdbuf();
}

// A fresh directory of regular files under $TMPDIR, removed at scope exit.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string templ =
        std::string(base ? base : "/tmp") + "/skilldb-models-XXXXXX";
    path_ = ::mkdtemp(templ.data()) ? templ : "";
  }
  ~TempDir() {
    for (const std::string& f : ListFiles(path_))
      ::unlink((path_ + "/" + f).c_str());
    ::rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline nlohmann::json ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return nlohmann::json::parse(buffer.str());
}

// The seed skills the fixtures were made from: make_fixtures.py writes
// their text fields to reference/seed_snapshot.jsonl beside the references,
// so the library's seed can change without invalidating the fixtures.
inline std::vector<nlohmann::json> SeedSkills() {
  std::vector<nlohmann::json> skills;
  std::ifstream in(FixtureDir() + "/reference/seed_snapshot.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    skills.push_back(nlohmann::json::parse(line));
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
