#include "rerank_eval.h"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <random>

#include "seed_data.h"
#include "skilldb/rerank/fake_backbone.h"
#include "skilldb/rerank/listwise.h"
#include "skilldb/rerank/pointwise.h"
#include "skilldb/rerank/selection_agent.h"

namespace skilldb::testing {
namespace {

using rerank::testing::FakeBackbone;

int GradeOf(const std::map<std::string, int>& grades, const std::string& id) {
  auto it = grades.find(id);
  return it == grades.end() ? 0 : it->second;
}

// A seeded stream per (seed, text): the same query always gets the same
// random order, whatever ran before it.
std::mt19937_64 Stream(uint64_t seed, const std::string& text) {
  return std::mt19937_64(seed ^ std::hash<std::string>()(text));
}

// The listwise answer of `model` to a prompt.
std::string ListwiseAnswer(ScriptedModel model, const llm::Chat& chat,
                           const std::map<std::string, int>& grades,
                           uint64_t seed) {
  const auto ids = rerank::testing::NumberedIds(chat);
  std::vector<size_t> numbers;
  for (const auto& [number, id] : ids) numbers.push_back(number);
  switch (model) {
    case ScriptedModel::kOracle:
      return rerank::testing::RankBy(
          chat, [&](const std::string& id) { return GradeOf(grades, id); });
    case ScriptedModel::kAntiOracle:
      return rerank::testing::RankBy(
          chat, [&](const std::string& id) { return -GradeOf(grades, id); });
    case ScriptedModel::kReverse:
      std::reverse(numbers.begin(), numbers.end());
      break;
    case ScriptedModel::kRandom: {
      auto rng = Stream(seed, chat.back().content);
      std::shuffle(numbers.begin(), numbers.end(), rng);
      break;
    }
    case ScriptedModel::kNone:
      break;
  }
  std::string answer;
  for (size_t n : numbers) {
    answer += (answer.empty() ? "[" : " > [") + std::to_string(n) + "]";
  }
  return answer;
}

// P(yes) of `model` for one pointwise prompt.
double PointwiseYes(ScriptedModel model, const llm::Chat& chat,
                    const std::map<std::string, int>& grades, uint64_t seed) {
  static constexpr double kByGrade[3] = {0.05, 0.6, 0.95};
  const int grade = GradeOf(grades, rerank::testing::DocumentId(chat));
  switch (model) {
    case ScriptedModel::kOracle:
      return kByGrade[grade];
    case ScriptedModel::kAntiOracle:
      return 1.0 - kByGrade[grade];
    default: {
      auto rng = Stream(seed, chat.back().content);
      return std::uniform_real_distribution<double>(0.01, 0.99)(rng);
    }
  }
}

llm::Sample VerdictSample(double p) {
  llm::Sample s;
  s.text = p >= 0.5 ? "yes" : "no";
  s.token_logprobs = {std::log(std::max(p, 1.0 - p))};
  s.top_logprobs = {{{"yes", -1, std::log(p)}, {"no", -1, std::log(1.0 - p)}}};
  return s;
}

}  // namespace

std::pair<double, double> PairedDelta(const std::vector<double>& a,
                                      const std::vector<double>& b) {
  const size_t n = a.size();
  if (n < 2) return {0.0, 0.0};
  double mean = 0.0;
  for (size_t i = 0; i < n; ++i) mean += (a[i] - b[i]) / n;
  double var = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double d = a[i] - b[i] - mean;
    var += d * d / (n - 1);
  }
  return {mean, 1.96 * std::sqrt(var / n)};
}

std::string ScriptedModelName(ScriptedModel model) {
  switch (model) {
    case ScriptedModel::kNone:
      return "none";
    case ScriptedModel::kOracle:
      return "oracle";
    case ScriptedModel::kAntiOracle:
      return "anti-oracle";
    case ScriptedModel::kReverse:
      return "reverse";
    case ScriptedModel::kRandom:
      return "random";
  }
  return "?";
}

Result<std::unique_ptr<RerankEvaluator>> RerankEvaluator::Create(
    const std::string& seed_dir, const std::string& queries_path) {
  std::unique_ptr<RerankEvaluator> e(new RerankEvaluator());
  SKILLDB_ASSIGN_OR_RETURN(std::vector<Skill> skills, LoadSeedSkills(seed_dir));
  SKILLDB_ASSIGN_OR_RETURN(e->queries_, LoadRelevanceQueries(queries_path));
  std::string pattern =
      (std::filesystem::temp_directory_path() / "skilldb-rerank-eval-XXXXXX")
          .string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return Status::IOError("cannot create a temporary directory");
  }
  e->dir_ = pattern;
  Options options;
  options.create_if_missing = true;
  options.sync_commits = false;
  options.analyzer = Analyzer::kCode;
  options.field_weights = kSkillLibraryWeights;
  SKILLDB_ASSIGN_OR_RETURN(e->library_,
                           Library::Open(options, e->dir_ + "/lib"));
  SKILLDB_RETURN_IF_ERROR(e->library_->PutMany(skills).status());
  return e;
}

RerankEvaluator::~RerankEvaluator() {
  library_.reset();
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

Result<RerankEvalResult> RerankEvaluator::Run(const RerankEvalConfig& c) {
  const std::map<std::string, int>* grades = nullptr;
  FakeBackbone backbone(
      [&](const llm::Chat& chat,
          const llm::SamplingOptions&) -> Result<llm::Sample> {
        if (c.mode == "pointwise") {
          return VerdictSample(PointwiseYes(c.model, chat, *grades, c.seed));
        }
        return rerank::testing::TextSample(
            ListwiseAnswer(c.model, chat, *grades, c.seed));
      },
      nullptr, "scripted-" + ScriptedModelName(c.model));
  rerank::RerankerOptions options;
  options.fusion = c.fusion;
  std::unique_ptr<Reranker> reranker;
  if (c.model != ScriptedModel::kNone) {
    Result<std::unique_ptr<rerank::ModelReranker>> made =
        c.mode == "pointwise"
            ? rerank::MakePointwiseReranker(&backbone, {}, options)
            : rerank::MakeListwiseReranker(&backbone, {}, options);
    if (!made.ok()) return made.status();
    reranker = std::move(made).value();
  }
  rerank::SelectionAgent agent(library_.get(), reranker.get());
  RerankEvalResult result;
  for (const RelevanceQuery& q : queries_) {
    grades = &q.grades;
    rerank::SelectionOptions o;
    o.k = c.k;
    o.candidates = std::max(c.candidates, c.k);
    o.record_usage = false;
    SKILLDB_ASSIGN_OR_RETURN(rerank::Selection s, agent.Select(q.text, o));
    std::vector<std::string> ranked;
    for (const RankedHit& h : s.result.hits) ranked.push_back(h.hit.id);
    const double ndcg = NdcgAtK(ranked, q.grades, c.k);
    result.ndcg += ndcg / queries_.size();
    result.recall += RecallAtK(ranked, q.grades, c.k) / queries_.size();
    result.per_query_ndcg.push_back(ndcg);
    result.applied += s.result.applied ? 1 : 0;
    result.strong_signal +=
        s.result.reason.rfind("strong BM25", 0) == 0 ? 1 : 0;
  }
  return result;
}

}  // namespace skilldb::testing
