#include "relevance.h"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "seed_data.h"
#include "skilldb/library.h"

namespace skilldb::testing {

namespace {

using Json = nlohmann::json;

Result<RelevanceQuery> ParseQuery(const std::string& line) {
  Json j;
  try {
    j = Json::parse(line);
  } catch (const Json::exception& e) {
    return Status::InvalidArgument(std::string("not JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("id") || !j.contains("query") ||
      !j.contains("relevant") || !j["relevant"].is_object()) {
    return Status::InvalidArgument("needs id, query and a relevant object");
  }
  RelevanceQuery q;
  try {
    q.id = j["id"].get<std::string>();
    q.text = j["query"].get<std::string>();
    q.area = j.value("area", "");
    for (const auto& [id, grade] : j["relevant"].items()) {
      q.grades[id] = grade.get<int>();
    }
  } catch (const Json::exception& e) {
    return Status::InvalidArgument(std::string("wrong type: ") + e.what());
  }
  bool has_answer = false;
  for (const auto& [id, grade] : q.grades) {
    if (grade != 1 && grade != 2) {
      return Status::InvalidArgument("grade of " + id + " is not 1 or 2");
    }
    has_answer = has_answer || grade == 2;
  }
  if (!has_answer) return Status::InvalidArgument("no skill with grade 2");
  return q;
}

double Gain(int grade) { return std::exp2(grade) - 1.0; }
double Discount(size_t rank0) { return 1.0 / std::log2(rank0 + 2.0); }

// A library directory under $TMPDIR, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "skilldb-relevance-XXXXXX")
            .string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Result<std::unique_ptr<Library>> BuildLibrary(const EvalConfig& config,
                                              const std::vector<Skill>& skills,
                                              const std::string& path) {
  Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.sync_commits = false;  // a throwaway library
  SKILLDB_ASSIGN_OR_RETURN(options.analyzer, ParseAnalyzer(config.analyzer));
  options.field_weights = config.weights;
  SKILLDB_ASSIGN_OR_RETURN(std::unique_ptr<Library> library,
                           Library::Open(options, path));
  CommitOptions commit;
  commit.message = "relevance evaluation";
  SKILLDB_RETURN_IF_ERROR(library->PutMany(skills, commit).status());
  return library;
}

}  // namespace

Result<std::vector<RelevanceQuery>> LoadRelevanceQueries(
    const std::string& path) {
  SKILLDB_ASSIGN_OR_RETURN(std::string text, util::ReadFile(path));
  std::istringstream in(text);
  std::vector<RelevanceQuery> queries;
  std::set<std::string> ids;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(number) + ": ";
    Result<RelevanceQuery> q = ParseQuery(line);
    if (!q.ok()) return Status::InvalidArgument(where + q.status().message());
    if (!ids.insert(q->id).second) {
      return Status::InvalidArgument(where + "duplicate query id " + q->id);
    }
    queries.push_back(std::move(q).value());
  }
  if (queries.empty()) return Status::InvalidArgument(path + ": no queries");
  return queries;
}

std::vector<std::string> UnknownJudgedIds(
    const std::vector<RelevanceQuery>& queries,
    const std::vector<Skill>& skills) {
  std::set<std::string> known;
  for (const Skill& s : skills) known.insert(s.id);
  std::vector<std::string> unknown;
  for (const RelevanceQuery& q : queries) {
    for (const auto& [id, grade] : q.grades) {
      if (known.count(id) == 0) unknown.push_back(q.id + ": " + id);
    }
  }
  return unknown;
}

double NdcgAtK(const std::vector<std::string>& ranked,
               const std::map<std::string, int>& grades, size_t k) {
  double dcg = 0.0;
  for (size_t i = 0; i < std::min(k, ranked.size()); ++i) {
    auto it = grades.find(ranked[i]);
    if (it != grades.end()) dcg += Gain(it->second) * Discount(i);
  }
  std::vector<int> ideal;
  for (const auto& [id, grade] : grades) ideal.push_back(grade);
  std::sort(ideal.rbegin(), ideal.rend());
  double idcg = 0.0;
  for (size_t i = 0; i < std::min(k, ideal.size()); ++i) {
    idcg += Gain(ideal[i]) * Discount(i);
  }
  return idcg > 0.0 ? dcg / idcg : 0.0;
}

double RecallAtK(const std::vector<std::string>& ranked,
                 const std::map<std::string, int>& grades, size_t k) {
  size_t relevant = 0, found = 0;
  for (const auto& [id, grade] : grades) relevant += grade >= 1 ? 1 : 0;
  for (size_t i = 0; i < std::min(k, ranked.size()); ++i) {
    auto it = grades.find(ranked[i]);
    found += it != grades.end() && it->second >= 1 ? 1 : 0;
  }
  return relevant > 0 ? static_cast<double>(found) / relevant : 0.0;
}

std::string ConfigName(const EvalConfig& config) {
  return config.analyzer + " " + FormatFieldWeights(config.weights);
}

Result<EvalResult> Evaluate(const EvalConfig& config,
                            const std::vector<Skill>& skills,
                            const std::vector<RelevanceQuery>& queries,
                            size_t k) {
  ScratchDir dir;
  if (dir.path().empty()) return Status::IOError("cannot create a temp dir");
  auto library = BuildLibrary(config, skills, dir.path() + "/lib");
  if (!library.ok()) return library.status().WithContext(ConfigName(config));
  EvalResult result;
  result.config = config;
  for (const RelevanceQuery& q : queries) {
    auto hits =
        (*library)->Query(QueryOptions{.k = k, .fields = HitFields::None()}, q.text);
    if (!hits.ok()) return hits.status().WithContext(ConfigName(config));
    QueryScore score;
    score.query_id = q.id;
    for (const Hit& hit : hits->hits) score.ranked.push_back(hit.id);
    score.ndcg = NdcgAtK(score.ranked, q.grades, k);
    score.recall = RecallAtK(score.ranked, q.grades, k);
    result.ndcg += score.ndcg / queries.size();
    result.recall += score.recall / queries.size();
    result.per_query.push_back(std::move(score));
  }
  return result;
}

}  // namespace skilldb::testing
