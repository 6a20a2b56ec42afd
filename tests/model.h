// A deterministic commit script shared by the crash and concurrency tests:
// commit v of the script depends only on v and the state before it, so a
// test can replay the script to know exactly what the library must hold at
// any version.
#ifndef SKILLDB_TESTS_MODEL_H_
#define SKILLDB_TESTS_MODEL_H_

#include <map>
#include <string>
#include <vector>

#include "skilldb/library.h"

namespace skilldb::testing {

using ModelState = std::map<std::string, std::string>;  // id -> title

struct ScriptedCommit {
  std::vector<Skill> puts;
  std::vector<std::string> deletes;
};

inline std::string ScriptText(uint64_t v, int j) {
  static const char* kWords[] = {"shared",  "memory",    "tiling", "warp",
                                 "shuffle", "reduction", "tensor", "core",
                                 "async",   "copy",      "bank",   "conflict"};
  std::string text;
  uint64_t x = v * 2654435761u + static_cast<uint64_t>(j) * 40503u + 17;
  const int len = 3 + static_cast<int>(x % 9);
  for (int i = 0; i < len; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    text += (i ? " " : "") + std::string(kWords[(x >> 33) % 12]);
  }
  return text + " v" + std::to_string(v);
}

// Commit v: every 6th imports `import_size` skills; every 4th deletes a small
// skill (or re-adds it if absent); the others put one of ten small skills.
inline ScriptedCommit Script(uint64_t v, const ModelState& before,
                             int import_size = 40) {
  ScriptedCommit c;
  if (v % 6 == 0) {
    for (int j = 0; j < import_size; ++j) {
      c.puts.push_back(
          Skill::Make("imp-" + std::to_string(v) + "-" + std::to_string(j),
                      ScriptText(v, j)));
    }
  } else {
    const std::string id = "s-" + std::to_string(v % 10);
    if (v % 4 == 0 && before.count(id)) {
      c.deletes.push_back(id);
    } else {
      c.puts.push_back(Skill::Make(id, ScriptText(v, 0)));
    }
  }
  return c;
}

inline void ApplyScript(const ScriptedCommit& c, ModelState* state) {
  for (const Skill& s : c.puts) (*state)[s.id] = s.title;
  for (const std::string& id : c.deletes) state->erase(id);
}

inline ModelState ModelAt(uint64_t version, int import_size = 40) {
  ModelState state;
  for (uint64_t v = 1; v <= version; ++v) {
    ApplyScript(Script(v, state, import_size), &state);
  }
  return state;
}

}  // namespace skilldb::testing

#endif  // SKILLDB_TESTS_MODEL_H_
