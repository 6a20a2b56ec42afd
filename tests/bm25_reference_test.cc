// The engine's BM25 against an independent, plain implementation of the
// formula, over generated and real-text corpora, at the head and as of older
// versions after inserts, updates and deletes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "reference_bm25.h"
#include "test_util.h"

namespace skilldb {
namespace {

using testing::ReferenceIndex;
using testing::TempLibrary;

Options WhitespaceOptions() {
  Options o = TempLibrary::DefaultOptions();
  o.analyzer = Analyzer::kWhitespace;
  o.merge_factor = 4;  // exercise merges
  return o;
}

void CheckSame(Library& lib, const ReferenceIndex& ref, Version version,
               const std::string& query, size_t k) {
  CAPTURE(query);
  CAPTURE(version);
  auto got = lib.Query(
      QueryOptions{.k = k, .as_of = version, .fields = HitFields::None()}, query);
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  auto want = ref.TopK(query, k);
  REQUIRE(got->hits.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK(got->hits[i].id == want[i].first);
    CHECK(got->hits[i].score == doctest::Approx(want[i].second).epsilon(1e-6));
  }
}

std::string Word(std::mt19937& rng, std::discrete_distribution<int>& zipf) {
  return "w" + std::to_string(zipf(rng));
}

TEST_CASE("BM25 matches an independent implementation across versions") {
  std::mt19937 rng(20261129);
  std::vector<double> weights;
  for (int i = 0; i < 2000; ++i) weights.push_back(1.0 / std::pow(i + 1, 1.07));
  std::discrete_distribution<int> zipf(weights.begin(), weights.end());
  auto doc_text = [&] {
    std::string text;
    const int len = 20 + static_cast<int>(rng() % 180);
    for (int i = 0; i < len; ++i) text += Word(rng, zipf) + " ";
    return text;
  };

  TempLibrary lib(WhitespaceOptions());
  ReferenceIndex ref;
  std::vector<std::pair<Version, ReferenceIndex>> snapshots;
  std::vector<std::string> live;
  int next_id = 0;
  // 40 commits: imports of 100-400 skills, single updates, deletes and
  // mixed commits.
  for (int commit = 0; commit < 40; ++commit) {
    std::vector<Skill> puts;
    std::vector<std::string> deletes;
    std::set<std::string> touched;
    const int kind = commit < 3 ? 0 : static_cast<int>(rng() % 4);
    const int adds = kind == 0 ? 100 + static_cast<int>(rng() % 300)
                               : static_cast<int>(rng() % 5);
    for (int i = 0; i < adds; ++i) {
      char id[24];
      std::snprintf(id, sizeof(id), "doc-%06d", next_id++);
      puts.push_back(Skill::Make(id, doc_text()));
      touched.insert(id);
    }
    if (kind >= 1) {  // updates of existing skills
      for (int i = 0; i < 1 + static_cast<int>(rng() % 30) && !live.empty();
           ++i) {
        const std::string& id = live[rng() % live.size()];
        if (touched.insert(id).second)
          puts.push_back(Skill::Make(id, doc_text()));
      }
    }
    if (kind >= 2) {  // deletes
      for (int i = 0; i < 1 + static_cast<int>(rng() % 20) && !live.empty();
           ++i) {
        const std::string id = live[rng() % live.size()];
        if (touched.insert(id).second) deletes.push_back(id);
      }
    }
    REQUIRE(lib->Commit(puts, deletes).ok());
    for (const Skill& s : puts) ref.Put(s.id, s.title);
    for (const std::string& id : deletes) ref.Delete(id);
    for (const Skill& s : puts) {
      if (std::find(live.begin(), live.end(), s.id) == live.end())
        live.push_back(s.id);
    }
    for (const std::string& id : deletes)
      live.erase(std::find(live.begin(), live.end(), id));
    if (commit % 8 == 1 || commit == 39)
      snapshots.emplace_back(lib->CurrentVersion(), ref);
  }
  REQUIRE(lib->Stats({})->num_segments < 40);  // merges happened

  std::vector<std::string> queries;
  for (int q = 0; q < 30; ++q) {
    std::string text;
    const int n = 1 + static_cast<int>(rng() % 5);
    for (int i = 0; i < n; ++i) {
      // Sample over the whole frequency range, not only frequent words.
      text += (i ? " " : "") + ("w" + std::to_string(rng() % 2000));
    }
    queries.push_back(text);
  }
  for (const auto& [version, snapshot] : snapshots) {
    for (size_t i = 0; i < queries.size(); ++i) {
      CheckSame(*lib, snapshot, version, queries[i], i % 2 ? 10 : 100);
    }
  }
  // The same holds after reopening (nothing is rebuilt in memory).
  lib.Reopen();
  for (const auto& [version, snapshot] : snapshots) {
    CheckSame(*lib, snapshot, version, queries[0], 10);
  }
}

TEST_CASE(
    "a real-text corpus imported in two commits ranks like the reference") {
  // Paragraphs of the license texts every Debian system ships: real prose
  // nobody here wrote.
  const std::filesystem::path dir = "/usr/share/common-licenses";
  std::vector<std::string> paragraphs;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path());
    std::string line, para;
    while (std::getline(in, line)) {
      if (line.find_first_not_of(" \t") == std::string::npos) {
        if (!para.empty()) paragraphs.push_back(para);
        para.clear();
      } else {
        para += line + " ";
      }
    }
    if (!para.empty()) paragraphs.push_back(para);
  }
  if (paragraphs.size() < 200) {
    MESSAGE("skipped: /usr/share/common-licenses is not available");
    return;
  }
  // Lower-case and strip punctuation so both sides see the same words.
  for (auto& p : paragraphs) {
    for (char& c : p) {
      c = std::isalnum(static_cast<unsigned char>(c))
              ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
              : ' ';
    }
  }
  std::erase_if(paragraphs, [](const std::string& p) {
    return p.find_first_not_of(' ') == std::string::npos;
  });
  TempLibrary lib(WhitespaceOptions());
  ReferenceIndex ref;
  const size_t half = paragraphs.size() / 2;
  std::vector<Skill> first, second;
  for (size_t i = 0; i < paragraphs.size(); ++i) {
    char id[24];
    std::snprintf(id, sizeof(id), "p%05zu", i);
    (i < half ? first : second).push_back(Skill::Make(id, paragraphs[i]));
  }
  auto v = lib->PutMany(first);
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  const Version v1 = lib->CurrentVersion();
  ReferenceIndex ref1;
  for (const Skill& s : first) ref1.Put(s.id, s.title);
  REQUIRE(lib->PutMany(second).ok());
  for (const Skill& s : first) ref.Put(s.id, s.title);
  for (const Skill& s : second) ref.Put(s.id, s.title);
  for (const char* q : {"software license", "warranty", "copyright notice",
                        "distribute modify", "the", "patent rights grant",
                        "source code object form", "liability damages"}) {
    CheckSame(*lib, ref, lib->CurrentVersion(), q, 10);
    CheckSame(*lib, ref1, v1, q, 10);
  }
}

}  // namespace
}  // namespace skilldb
