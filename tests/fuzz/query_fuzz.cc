// Queries with arbitrary text and options on a library of the seed skills
// and 1,500 generated ones (several commits, revisions and deletions, so
// older versions differ): never a crash, at most k hits with finite
// positive scores in descending order, and the three evaluations the
// library promises to agree (windowed block-max MaxScore, block-max WAND,
// exhaustive) return exactly the same hits and scores.
//
// Input: byte 0 picks k, byte 1 the filters and the version, byte 2 the
// version's position; the rest is the query text.
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "seed_data.h"
#include "skilldb/library.h"
#include "build_paths.h"

namespace {

using skilldb::Library;
using skilldb::QueryOptions;
using skilldb::QueryResult;
using skilldb::Skill;

std::string g_dir;

void RemoveDir() {
  std::error_code ec;
  std::filesystem::remove_all(g_dir, ec);
}

void Require(bool ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "query_fuzz setup: %s\n", what);
    std::abort();
  }
}

Library* MakeLibrary() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "skilldb-query-fuzz-XXXXXX")
          .string();
  Require(mkdtemp(pattern.data()) != nullptr, "mkdtemp");
  g_dir = pattern;
  atexit(RemoveDir);
  auto loaded = skilldb::testing::LoadSeedSkills(SKILLDB_SEED_DIR);
  Require(loaded.ok(), "the seed library does not load");
  const std::vector<Skill>& seed = *loaded;
  Require(seed.size() > 100, "the seed library is missing");
  skilldb::Options o;
  o.create_if_missing = true;
  o.sync_commits = false;
  auto lib = Library::Open(o, g_dir + "/lib");
  Require(lib.ok(), "open");
  Require((*lib)->PutMany(seed).ok(), "import the seed");
  // Generated skills from the seed's words, in commits of 300, revising and
  // deleting some, so pruning has blocks to skip and versions differ.
  std::vector<std::string> words;
  for (const Skill& s : seed) {
    std::istringstream text(s.title + " " + s.summary);
    for (std::string w; text >> w;) words.push_back(w);
  }
  uint64_t x = 88172645463325252ull;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (int c = 0; c < 5; ++c) {
    std::vector<Skill> batch;
    for (int i = 0; i < 300; ++i) {
      Skill s = Skill::Make("gen-" + std::to_string((c * 300 + i) % 1300),
                            words[next() % words.size()]);
      const size_t n = 5 + next() % 60;
      for (size_t j = 0; j < n; ++j) {
        s.body += words[next() % words.size()] + " ";
      }
      s.tags = {seed[next() % seed.size()].tags.empty()
                    ? std::string("generated")
                    : seed[next() % seed.size()].tags.front()};
      s.language = next() % 2 ? skilldb::Language::kCuda
                              : skilldb::Language::kAny;
      batch.push_back(std::move(s));
    }
    Require((*lib)->PutMany(batch).ok(), "import generated skills");
    Require((*lib)->Delete("gen-" + std::to_string(c * 7)).ok(), "delete");
  }
  return lib->release();
}

bool Same(const QueryResult& a, const QueryResult& b) {
  if (a.hits.size() != b.hits.size() || a.version != b.version) return false;
  for (size_t i = 0; i < a.hits.size(); ++i) {
    if (a.hits[i].id != b.hits[i].id || a.hits[i].score != b.hits[i].score) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Library* lib = MakeLibrary();
  if (size < 3) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 3,
                              size - 3);
  QueryOptions o;
  o.k = 1 + data[0] % 64;
  o.fields = skilldb::HitFields::None();
  const uint8_t flags = data[1];
  static const char* kTags[] = {"shared-memory", "warp", "tiling",
                                "generated"};
  if (flags & 0x04) o.tags = {kTags[(flags >> 5) % 4]};
  if (flags & 0x08) o.language = skilldb::Language::kCuda;
  if (flags & 0x10) o.all_statuses = true;
  const skilldb::Version head = lib->CurrentVersion();
  if (flags & 0x03) o.as_of = 1 + data[2] % head;
  auto pruned = lib->Query(o, text);
  QueryOptions w = o;
  w.block_max_wand = true;
  auto wand = lib->Query(w, text);
  QueryOptions e = o;
  e.exhaustive = true;
  auto full = lib->Query(e, text);
  if (!pruned.ok()) {
    if (wand.ok() || full.ok()) std::abort();
    return 0;
  }
  if (!wand.ok() || !full.ok()) std::abort();
  if (pruned->hits.size() > o.k) std::abort();
  for (size_t i = 0; i < pruned->hits.size(); ++i) {
    const double s = pruned->hits[i].score;
    if (!std::isfinite(s) || s <= 0) std::abort();
    if (i > 0 && s > pruned->hits[i - 1].score) std::abort();
  }
  if (!Same(*pruned, *full) || !Same(*wand, *full)) std::abort();
  return 0;
}
