// Validation of the seed library (data/seed/*.jsonl): the schema of every
// record, the rules data/README.md sets for the seed, links between skills,
// coverage of the op families, and the absence of duplicate and near-duplicate
// skills.
//
// The data directory is compiled in (SKILLDB_SEED_DIR) and can be overridden
// at run time with the environment variable of the same name, which is how
// each check is tried against a deliberately broken copy of the data.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "seed_data.h"
#include "seed_test_util.h"
#include "build_paths.h"

#ifndef SKILLDB_SEED_DIR
#error "SKILLDB_SEED_DIR must name the seed directory (data/seed)"
#endif

namespace skilldb {
namespace {

using Json = nlohmann::json;
using testing::LoadSeedSkills;
using testing::ReadSeedLines;
using testing::SeedLine;
using testing::Where;

constexpr size_t kMinSkills = 120;
constexpr int kMinSkillsPerOpFamily = 2;

// Near-duplicate thresholds on word 3-shingle Jaccard similarity.
//
// Prose (title + summary + body): over the 14,535 pairs of the 171-skill seed
// the largest similarity is 0.042 (the two GELU skills, which describe the
// same formulas in different words); the median pair is 0.006 and the 99.9th
// percentile 0.025. A copy with a fraction p of its words replaced keeps about
// (1-p)^3 of its shingles, i.e. Jaccard (1-p)^3 / (2 - (1-p)^3): 0.57 at
// p = 10%, 0.27 at p = 25%, 0.21 at p = 30%. 0.20 therefore flags anything
// less than ~30% rewritten and sits ~5x above the most similar honest pair.
// (Shingles cannot see the same topic rewritten from scratch; such pairs were
// found by reading the pairs with the highest TF-IDF cosine, and three were
// merged.)
//
// Whole record (prose + code): code patterns legitimately share helpers (TMA
// descriptor setup, the Triton matmul skeleton), which puts the top honest
// pair at 0.39 (two Hopper GEMM rings sharing the TMA/mbarrier/wgmma
// helpers). 0.50 is the
// classic resemblance threshold for near-duplicate documents (Broder 1997)
// and flags a record whose code and prose are both mostly shared.
constexpr double kMaxProseJaccard = 0.20;
constexpr double kMaxRecordJaccard = 0.50;
constexpr size_t kPairsToPrint = 10;

const std::vector<std::string> kSections = {
    "## When to use", "## How", "## Pitfalls", "## How to tell it worked"};
const std::set<std::string> kCodeKinds = {"cuda-tu", "cuda-fragment", "triton",
                                          "text"};

// ---- The lists data/README.md defines --------------------------------------

// The backquoted names in the README table row of `field`, after "from:" when
// the row has it (the `ops` row lists its values after "from:").
std::vector<std::string> ReadmeValues(const std::string& field) {
  const std::string readme_path =
      (std::filesystem::path(testing::SeedTestDir()).parent_path() / "README.md").string();
  auto readme = util::ReadFile(readme_path);
  REQUIRE_MESSAGE(readme.ok(), readme.status().ToString());
  std::istringstream in(*readme);
  const std::string row_start = "| `" + field + "` |";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(row_start, 0) != 0) continue;
    const size_t rules = line.find('|', row_start.size());
    std::string text = line.substr(rules == std::string::npos ? 0 : rules);
    if (const size_t from = text.find("from:"); from != std::string::npos) {
      text = text.substr(from);
    }
    std::vector<std::string> values;
    static const std::regex kQuoted("`([a-z0-9_]+)`");
    for (std::sregex_iterator it(text.begin(), text.end(), kQuoted), end;
         it != end; ++it) {
      values.push_back((*it)[1]);
    }
    return values;
  }
  FAIL("data/README.md has no table row for `" << field << "`");
  return {};
}

// ---- Text normalization and shingles ---------------------------------------

// Lower-cased alphanumeric words (underscores kept, everything else a
// separator), so formatting, punctuation and case do not hide a copy.
std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '_') {
      word.push_back(static_cast<char>(std::tolower(u)));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

std::string Normalized(std::string_view text) {
  std::string out;
  for (const std::string& w : Words(text)) out += w + " ";
  return out;
}

// Sorted, distinct hashes of the word 3-grams of `text`.
std::vector<uint64_t> Shingles(std::string_view text) {
  const std::vector<std::string> w = Words(text);
  std::vector<uint64_t> out;
  for (size_t i = 0; i + 2 < w.size(); ++i) {
    out.push_back(
        std::hash<std::string>()(w[i] + ' ' + w[i + 1] + ' ' + w[i + 2]));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double Jaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  if (a.empty() && b.empty()) return 0.0;
  size_t common = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++common, ++i, ++j;
    }
  }
  return static_cast<double>(common) /
         static_cast<double>(a.size() + b.size() - common);
}

std::string Prose(const Skill& s) {
  return s.title + "\n" + s.summary + "\n" + s.body;
}
std::string Record(const Skill& s) { return Prose(s) + "\n" + s.code; }

struct Pair {
  double similarity;
  std::string a, b;
};

// Every pair's similarity, most similar first.
std::vector<Pair> RankedPairs(
    const std::vector<Skill>& skills,
    const std::function<std::string(const Skill&)>& text) {
  std::vector<std::vector<uint64_t>> shingles;
  for (const Skill& s : skills) shingles.push_back(Shingles(text(s)));
  std::vector<Pair> pairs;
  for (size_t i = 0; i < skills.size(); ++i) {
    for (size_t j = i + 1; j < skills.size(); ++j) {
      pairs.push_back(
          {Jaccard(shingles[i], shingles[j]), skills[i].id, skills[j].id});
    }
  }
  std::sort(pairs.begin(), pairs.end(), [](const Pair& x, const Pair& y) {
    return x.similarity > y.similarity;
  });
  return pairs;
}

// The top pairs and a few quantiles, so a reviewer sees the margin below the
// threshold.
std::string Distribution(const std::vector<Pair>& pairs, double threshold) {
  std::ostringstream out;
  out.precision(4);
  out << std::fixed << pairs.size() << " pairs, threshold " << threshold;
  const std::pair<const char*, double> quantiles[] = {
      {"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p99.9", 0.999}};
  for (const auto& [name, q] : quantiles) {
    const size_t rank = static_cast<size_t>((1.0 - q) * pairs.size());
    out << ", " << name << " "
        << pairs[std::min(rank, pairs.size() - 1)].similarity;
  }
  out << "\n";
  for (size_t i = 0; i < std::min(kPairsToPrint, pairs.size()); ++i) {
    out << "  " << pairs[i].similarity << "  " << pairs[i].a << "  "
        << pairs[i].b << "\n";
  }
  return out.str();
}

void CheckNoPairAbove(const std::vector<Skill>& skills, double threshold,
                      const std::string& what,
                      const std::function<std::string(const Skill&)>& text) {
  REQUIRE(skills.size() >= 2);
  const std::vector<Pair> pairs = RankedPairs(skills, text);
  const std::string report = Distribution(pairs, threshold);
  MESSAGE(what << " 3-shingle Jaccard: " << report);
  for (const Pair& p : pairs) {
    if (p.similarity < threshold) break;
    FAIL_CHECK(what << " near duplicates (Jaccard " << p.similarity
                    << " >= " << threshold << "): " << p.a << " and " << p.b);
  }
}

// ---- Tests ----------------------------------------------------------------

TEST_CASE("every seed line parses as a skill and ids are unique across files") {
  auto lines = ReadSeedLines(testing::SeedTestDir());
  REQUIRE_MESSAGE(lines.ok(), lines.status().ToString());
  std::map<std::string, std::string> first_seen;  // id -> file:line
  for (const SeedLine& line : *lines) {
    CAPTURE(Where(line));
    auto skill = ParseSkillJson(line.text);
    CHECK_MESSAGE(skill.ok(), skill.status().ToString());
    if (!skill.ok()) continue;
    const auto emplaced = first_seen.emplace(skill->id, Where(line));
    CHECK_MESSAGE(emplaced.second, "id " << skill->id << " also at " << emplaced.first->second);
  }
}

TEST_CASE("the seed library holds at least 120 skills") {
  CHECK(testing::SeedSkillsOrFail().size() >= kMinSkills);
}

// The lines of `text`, split at '\n'.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_CASE(
    "every seed body has the four sections once each, in order, "
    "none empty") {
  for (const Skill& s : testing::SeedSkillsOrFail()) {
    CAPTURE(s.id);
    const std::vector<std::string> lines = Lines(s.body);
    std::vector<size_t> at;  // line index of each heading
    for (const std::string& heading : kSections) {
      const auto n = std::count(lines.begin(), lines.end(), heading);
      CHECK_MESSAGE(n == 1, heading << " appears " << n << " times");
      at.push_back(static_cast<size_t>(
          std::find(lines.begin(), lines.end(), heading) - lines.begin()));
    }
    const bool ordered = std::is_sorted(at.begin(), at.end());
    CHECK_MESSAGE(ordered, "sections out of order");
    if (!ordered) continue;
    at.push_back(lines.size());
    for (size_t i = 0; i < kSections.size(); ++i) {
      std::string content;
      for (size_t l = at[i] + 1; l < at[i + 1]; ++l) content += lines[l];
      CHECK_MESSAGE(!Words(content).empty(), kSections[i] << " is empty");
    }
  }
}

TEST_CASE("every seed skill has a one-line summary, a code pattern and tags") {
  static const std::regex kTag("[a-z0-9]+(-[a-z0-9]+)*");
  for (const Skill& s : testing::SeedSkillsOrFail()) {
    CAPTURE(s.id);
    CHECK_MESSAGE(!Words(s.summary).empty(), "blank summary");
    CHECK_MESSAGE(s.summary.find('\n') == std::string::npos,
                  "summary spans lines");
    CHECK_MESSAGE(!Words(s.code).empty(), "no code pattern");
    CHECK_MESSAGE(!s.tags.empty(), "no tags");
    std::set<std::string> distinct;
    for (const std::string& tag : s.tags) {
      CHECK_MESSAGE(std::regex_match(tag, kTag),
                    "tag '" << tag << "' is not lower-case and hyphenated");
      CHECK_MESSAGE(distinct.insert(tag).second, "tag '" << tag << "' twice");
    }
  }
}

TEST_CASE(
    "every seed skill's ops and arch come from the lists of "
    "data/README.md") {
  const std::vector<std::string> op_list = ReadmeValues("ops");
  const std::vector<std::string> arch_list = ReadmeValues("arch");
  REQUIRE(op_list.size() >= 10);
  REQUIRE(arch_list.size() >= 2);
  const std::set<std::string> ops(op_list.begin(), op_list.end());
  const std::set<std::string> archs(arch_list.begin(), arch_list.end());
  for (const Skill& s : testing::SeedSkillsOrFail()) {
    CAPTURE(s.id);
    CHECK_MESSAGE(!s.ops.empty(), "no ops");
    CHECK_MESSAGE(!s.arch.empty(), "no arch");
    for (const std::string& op : s.ops) {
      CHECK_MESSAGE(ops.count(op) == 1, "op '" << op << "' is not allowed");
    }
    for (const std::string& arch : s.arch) {
      CHECK_MESSAGE(archs.count(arch) == 1,
                    "arch '" << arch << "' is not allowed");
    }
  }
}

TEST_CASE("every seed code pattern has a code kind that fits its language") {
  static const std::regex kArch("sm_[0-9]+a?");
  for (const Skill& s : testing::SeedSkillsOrFail()) {
    CAPTURE(s.id);
    const Json extra = testing::ExtraJson(s);
    REQUIRE(extra.is_object());
    const std::string kind = extra.value("code_kind", "");
    CHECK_MESSAGE(kCodeKinds.count(kind) == 1,
                  "code_kind '" << kind << "' is not one of the README's");
    if (kind.rfind("cuda", 0) == 0) CHECK(s.language == Language::kCuda);
    if (kind == "triton") CHECK(s.language == Language::kTriton);
    if (!extra.contains("nvcc_arch")) continue;
    const std::string arch = extra["nvcc_arch"].get<std::string>();
    CHECK_MESSAGE(kind == "cuda-tu", "nvcc_arch on a " << kind);
    CHECK_MESSAGE(std::regex_match(arch, kArch), "bad nvcc_arch " << arch);
    CHECK_MESSAGE(std::count(s.arch.begin(), s.arch.end(), arch) == 1,
                  "nvcc_arch " << arch << " is not in arch");
  }
}

TEST_CASE("every related and lineage id names another seed skill") {
  const std::vector<Skill> skills = testing::SeedSkillsOrFail();
  std::set<std::string> ids;
  for (const Skill& s : skills) ids.insert(s.id);
  for (const Skill& s : skills) {
    CAPTURE(s.id);
    std::vector<std::string> links = s.lineage.derived_from;
    links.insert(links.end(), s.lineage.supersedes.begin(),
                 s.lineage.supersedes.end());
    const Json extra = testing::ExtraJson(s);
    if (extra.contains("related")) {
      REQUIRE(extra["related"].is_array());
      for (const Json& id : extra["related"]) {
        REQUIRE(id.is_string());
        links.push_back(id.get<std::string>());
      }
    }
    for (const std::string& link : links) {
      CHECK_MESSAGE(ids.count(link) == 1, "unknown skill '" << link << "'");
      CHECK_MESSAGE(link != s.id, "links to itself");
    }
  }
}

TEST_CASE(
    "every op family of data/README.md is covered by at least two "
    "seed skills") {
  std::map<std::string, int> count;
  for (const std::string& op : ReadmeValues("ops")) count[op] = 0;
  REQUIRE(count.size() >= 10);
  for (const Skill& s : testing::SeedSkillsOrFail()) {
    for (const std::string& op : s.ops) {
      if (auto it = count.find(op); it != count.end()) ++it->second;
    }
  }
  for (const auto& [family, n] : count) {
    const std::string op = family;  // clang 14 captures no structured binding
    CAPTURE(op);
    CHECK(n >= kMinSkillsPerOpFamily);
  }
}

TEST_CASE(
    "no two seed skills repeat a title, summary, body or code pattern "
    "after normalization") {
  const std::vector<
      std::pair<std::string, std::function<std::string(const Skill&)>>>
      fields = {{"title", [](const Skill& s) { return s.title; }},
                {"summary", [](const Skill& s) { return s.summary; }},
                {"body", [](const Skill& s) { return s.body; }},
                {"code", [](const Skill& s) { return s.code; }}};
  const std::vector<Skill> skills = testing::SeedSkillsOrFail();
  for (const auto& [name, field] : fields) {
    std::map<size_t, std::string> seen;  // hash of normalized text -> id
    for (const Skill& s : skills) {
      const size_t hash = std::hash<std::string>()(Normalized(field(s)));
      const auto emplaced = seen.emplace(hash, s.id);
      const std::string& what = name;  // clang 14 captures no structured binding
      CHECK_MESSAGE(emplaced.second, what << " of " << s.id << " repeats that of "
                                          << emplaced.first->second);
    }
  }
}

TEST_CASE(
    "no two seed skills are near duplicates by word 3-shingle "
    "Jaccard similarity") {
  const std::vector<Skill> skills = testing::SeedSkillsOrFail();
  CheckNoPairAbove(skills, kMaxProseJaccard, "prose (title+summary+body)",
                   Prose);
  CheckNoPairAbove(skills, kMaxRecordJaccard, "whole record (prose+code)",
                   Record);
}

}  // namespace
}  // namespace skilldb
