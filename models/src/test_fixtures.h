// Helpers for the models/ tests: where the fixtures are, reading their JSON,
// the seed skill texts the fixtures were made from (read from data/seed,
// checked against the hashes the fixtures keep), FNV-1a over token ids (the hash
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
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>
#include "build_paths.h"
#include "skilldb/util/sha256.h"

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

inline std::string Field(const nlohmann::json& skill, const char* key) {
  if (!skill.contains(key) || !skill[key].is_string()) return "";
  return skill[key].get<std::string>();
}

// The text fields of a seed skill that the fixtures hash, in
// make_fixtures.py's order (SEED_FIELDS).
inline constexpr const char* kSeedFields[] = {"title", "summary", "body",
                                              "code"};

// The seed checks compare at least this many skills' worth of texts (150 of
// the fixtures' 171 skills: 4 texts a skill for the tokenizers, 2 for the
// embeddings); with fewer still in data/seed the fixtures are stale and must
// be regenerated (models/tools/make_fixtures.py).
inline constexpr size_t kMinSeedSkillsStillMatching = 150;

// One text the fixtures were made from that data/seed still holds: `index` is
// its position in the fixtures' list of texts.
struct SeedText {
  size_t index;
  std::string text;
};

// The texts of a fixture list that can still be compared, and the list's size.
struct SeedTexts {
  std::vector<SeedText> texts;
  size_t total = 0;
};

// The skills of data/seed (every non-blank line of its *.jsonl files) by id.
inline std::map<std::string, nlohmann::json> CurrentSeedById() {
  std::map<std::string, nlohmann::json> by_id;
  const std::string dir = SKILLDB_SEED_DIR;
  for (const std::string& name : ListFiles(dir)) {
    if (name.size() < 6 || name.substr(name.size() - 6) != ".jsonl") continue;
    std::ifstream in(dir + "/" + name);
    std::string line;
    while (std::getline(in, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      nlohmann::json skill = nlohmann::json::parse(line);
      const std::string id = Field(skill, "id");
      by_id[id] = std::move(skill);
    }
  }
  return by_id;
}

// The fixtures' seed skills, in their order: reference/seed_hashes.json holds
// each skill's id and the SHA-256 of each text field as make_fixtures.py read
// them; the texts come from data/seed. A field whose current text hashes
// otherwise (an edited skill) is left out, not compared with a reference made
// from another text. `fields_ok[i][f]` says whether skill i's field
// kSeedFields[f] is usable, `text[i][f]` is its text.
struct SeedRows {
  std::vector<std::array<bool, 4>> fields_ok;
  std::vector<std::array<std::string, 4>> text;
};

inline SeedRows ReadSeedRows() {
  const nlohmann::json hashes =
      ReadJsonFile(FixtureDir() + "/reference/seed_hashes.json");
  const std::map<std::string, nlohmann::json> current = CurrentSeedById();
  SeedRows rows;
  for (const nlohmann::json& row : hashes["skills"]) {
    std::array<bool, 4> ok{};
    std::array<std::string, 4> text;
    auto it = current.find(row["id"].get<std::string>());
    for (size_t f = 0; f < 4; ++f) {
      if (it == current.end()) break;
      text[f] = Field(it->second, kSeedFields[f]);
      ok[f] = util::Sha256Hex(text[f]) ==
              row["sha256"][kSeedFields[f]].get<std::string>();
    }
    rows.fields_ok.push_back(ok);
    rows.text.push_back(std::move(text));
  }
  return rows;
}

// make_fixtures.py's corpus_texts: every text field of every seed skill
// (skill i's field f at index 4 i + f), those still in data/seed.
inline SeedTexts SeedCorpus() {
  const SeedRows rows = ReadSeedRows();
  SeedTexts out;
  out.total = 4 * rows.text.size();
  for (size_t i = 0; i < rows.text.size(); ++i) {
    for (size_t f = 0; f < 4; ++f) {
      if (rows.fields_ok[i][f]) out.texts.push_back({4 * i + f, rows.text[i][f]});
    }
  }
  return out;
}

// make_fixtures.py's embedding_texts: the titles (index i), then title +
// summary + body of each skill (index n + i), those still in data/seed.
inline SeedTexts SeedEmbeddingTexts() {
  const SeedRows rows = ReadSeedRows();
  SeedTexts out;
  const size_t n = rows.text.size();
  out.total = 2 * n;
  for (size_t i = 0; i < n; ++i) {
    if (rows.fields_ok[i][0]) out.texts.push_back({i, rows.text[i][0]});
  }
  for (size_t i = 0; i < n; ++i) {
    const auto& ok = rows.fields_ok[i];
    const auto& t = rows.text[i];
    if (ok[0] && ok[1] && ok[2]) {
      out.texts.push_back({n + i, t[0] + "\n" + t[1] + "\n" + t[2]});
    }
  }
  return out;
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
