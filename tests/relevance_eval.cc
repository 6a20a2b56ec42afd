// relevance_eval: retrieval quality of the seed library for each analyzer and
// a grid of field weightings, measured against data/relevance/queries.jsonl.
//
// For every configuration it builds a temporary library from the seed, runs
// every judged query for the top 10 and reports mean nDCG@10 (graded) and
// recall@10 (grade >= 1). Output: a markdown table sorted by nDCG@10, the
// per-area and per-query figures of the best and of the engine's default
// configuration, and (with --json) everything, per query, as JSON.
//
// Usage: relevance_eval [--grid full|small] [--analyzers a,b,...]
//                       [--config ANALYZER:WEIGHTS]... [--seed DIR]
//                       [--queries FILE] [--json FILE] [--markdown FILE]
// --config evaluates only the named configurations, e.g.
//   --config code:title=3,summary=2,body=1,tags=2,ops=1,code=1
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "relevance.h"
#include "seed_data.h"
#include "build_paths.h"

#ifndef SKILLDB_SEED_DIR
#error "SKILLDB_SEED_DIR must name the seed directory"
#endif
#ifndef SKILLDB_RELEVANCE_QUERIES
#error "SKILLDB_RELEVANCE_QUERIES must name data/relevance/queries.jsonl"
#endif

namespace skilldb::testing {
namespace {

using Json = nlohmann::json;

constexpr size_t kTopK = 10;

struct Args {
  std::string grid = "full";
  std::vector<std::string> analyzers = {"whitespace", "standard", "code"};
  std::vector<EvalConfig> configs;  // explicit --config values
  std::string seed_dir = SeedDir(SKILLDB_SEED_DIR);
  std::string queries = SKILLDB_RELEVANCE_QUERIES;
  std::string json_path;
  std::string markdown_path;
};

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, sep);) parts.push_back(part);
  return parts;
}

Result<EvalConfig> ParseConfig(const std::string& text) {
  const size_t colon = text.find(':');
  EvalConfig config;
  config.analyzer = text.substr(0, colon);
  if (colon != std::string::npos) {
    SKILLDB_ASSIGN_OR_RETURN(config.weights,
                             ParseFieldWeights(text.substr(colon + 1)));
  }
  return config;
}

Result<Args> ParseArgs(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return Status::InvalidArgument(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--grid" && (value == "full" || value == "small")) {
      args.grid = value;
    } else if (flag == "--analyzers") {
      args.analyzers = Split(value, ',');
    } else if (flag == "--config") {
      SKILLDB_ASSIGN_OR_RETURN(EvalConfig config, ParseConfig(value));
      args.configs.push_back(config);
    } else if (flag == "--seed") {
      args.seed_dir = value;
    } else if (flag == "--queries") {
      args.queries = value;
    } else if (flag == "--json") {
      args.json_path = value;
    } else if (flag == "--markdown") {
      args.markdown_path = value;
    } else {
      return Status::InvalidArgument("unknown argument " + flag + " " + value);
    }
  }
  return args;
}

// The weight grid: body and ops stay 1 (body carries most of the text; ops
// repeats words of the title and tags); title, summary and tags are boosted
// and the code pattern is indexed or not.
std::vector<EvalConfig> Grid(const Args& args) {
  if (!args.configs.empty()) return args.configs;
  const bool full = args.grid == "full";
  const std::vector<int> titles =
      full ? std::vector<int>{1, 2, 3, 4, 6} : std::vector<int>{1, 3};
  const std::vector<int> tags =
      full ? std::vector<int>{1, 2, 3, 4} : std::vector<int>{1, 2};
  std::vector<EvalConfig> grid;
  for (const std::string& analyzer : args.analyzers) {
    for (int title : titles) {
      for (int summary : {1, 2}) {
        for (int tag : tags) {
          for (int code : {0, 1}) {
            EvalConfig c{analyzer, FieldWeights{}};
            c.weights.title = title;
            c.weights.summary = summary;
            c.weights.tags = tag;
            c.weights.code = code;
            grid.push_back(c);
          }
        }
      }
    }
  }
  return grid;
}

std::string Fixed(double value) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(4) << value;
  return out.str();
}

// Mean and half-width of a 95% confidence interval (normal approximation) of
// the per-query nDCG differences between `a` and `b`: the paired comparison
// tells which gaps between configurations exceed query-sampling noise.
std::pair<double, double> PairedDelta(const EvalResult& a,
                                      const EvalResult& b) {
  const size_t n = a.per_query.size();
  double sum = 0.0, sum_sq = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double d = a.per_query[i].ndcg - b.per_query[i].ndcg;
    sum += d;
    sum_sq += d * d;
  }
  const double mean = sum / n;
  const double var = n > 1 ? (sum_sq - n * mean * mean) / (n - 1) : 0.0;
  return {mean, 1.96 * std::sqrt(std::max(var, 0.0) / n)};
}

std::string MainTable(const std::vector<EvalResult>& results) {
  std::ostringstream out;
  out << "| rank | analyzer | field weights | nDCG@10 | recall@10 "
         "| nDCG@10 vs rank 1 (95% CI) |\n"
      << "|---:|---|---|---:|---:|---:|\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const EvalResult& r = results[i];
    const auto [delta, half_width] = PairedDelta(r, results.front());
    out << "| " << i + 1 << " | " << r.config.analyzer << " | "
        << FormatFieldWeights(r.config.weights) << " | " << Fixed(r.ndcg)
        << " | " << Fixed(r.recall) << " | "
        << (i == 0 ? std::string("-")
                   : Fixed(delta) + " ± " + Fixed(half_width))
        << " |\n";
  }
  return out.str();
}

// Best configuration per analyzer, then the per-area means of `shown`.
std::string AreaTable(const std::vector<const EvalResult*>& shown,
                      const std::vector<RelevanceQuery>& queries) {
  std::map<std::string, std::vector<size_t>> by_area;
  for (size_t i = 0; i < queries.size(); ++i) {
    by_area[queries[i].area].push_back(i);
  }
  std::ostringstream out;
  out << "| area | queries |";
  for (const EvalResult* r : shown) out << " " << ConfigName(r->config) << " |";
  out << "\n|---|---:|";
  for (size_t i = 0; i < shown.size(); ++i) out << "---:|";
  out << "\n";
  for (const auto& [area, indexes] : by_area) {
    out << "| " << area << " | " << indexes.size() << " |";
    for (const EvalResult* r : shown) {
      double ndcg = 0.0, recall = 0.0;
      for (size_t i : indexes) {
        ndcg += r->per_query[i].ndcg / indexes.size();
        recall += r->per_query[i].recall / indexes.size();
      }
      out << " " << Fixed(ndcg) << " / " << Fixed(recall) << " |";
    }
    out << "\n";
  }
  return out.str();
}

// Per query for one configuration, worst first, with the grade-2 skills it
// did not retrieve in the top 10.
std::string QueryTable(const EvalResult& r,
                       const std::vector<RelevanceQuery>& queries) {
  std::vector<size_t> order(queries.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return r.per_query[a].ndcg < r.per_query[b].ndcg;
  });
  std::ostringstream out;
  out << "| query | text | nDCG@10 | recall@10 | grade-2 skills missed |\n"
      << "|---|---|---:|---:|---|\n";
  for (size_t i : order) {
    const QueryScore& s = r.per_query[i];
    std::string missed;
    for (const auto& [id, grade] : queries[i].grades) {
      if (grade == 2 &&
          std::find(s.ranked.begin(), s.ranked.end(), id) == s.ranked.end()) {
        missed += (missed.empty() ? "" : ", ") + id;
      }
    }
    out << "| " << s.query_id << " | " << queries[i].text << " | "
        << Fixed(s.ndcg) << " | " << Fixed(s.recall) << " | " << missed
        << " |\n";
  }
  return out.str();
}

Json ToJson(const EvalResult& r) {
  Json per_query = Json::array();
  for (const QueryScore& s : r.per_query) {
    per_query.push_back({{"id", s.query_id},
                         {"ndcg_at_10", s.ndcg},
                         {"recall_at_10", s.recall},
                         {"top", s.ranked}});
  }
  return {{"analyzer", r.config.analyzer},
          {"field_weights", FormatFieldWeights(r.config.weights)},
          {"ndcg_at_10", r.ndcg},
          {"recall_at_10", r.recall},
          {"per_query", per_query}};
}

const EvalResult* Find(const std::vector<EvalResult>& results,
                       const EvalConfig& config) {
  for (const EvalResult& r : results) {
    if (r.config.analyzer == config.analyzer &&
        r.config.weights == config.weights) {
      return &r;
    }
  }
  return nullptr;
}

std::string Report(const std::vector<EvalResult>& results,
                   const std::vector<RelevanceQuery>& queries,
                   size_t num_skills) {
  const Options defaults;
  const EvalResult* best = &results.front();
  const EvalResult* engine_default =
      Find(results, EvalConfig{std::string(AnalyzerName(defaults.analyzer)), defaults.field_weights});
  std::vector<const EvalResult*> shown = {best};
  if (engine_default != nullptr && engine_default != best) {
    shown.push_back(engine_default);
  }
  std::ostringstream out;
  out << "# Seed retrieval quality\n\n"
      << queries.size() << " judged queries over " << num_skills
      << " seed skills; BM25 k1 = " << defaults.k1 << ", b = " << defaults.b
      << "; nDCG@10 with gain 2^grade - 1; recall@10 counts grade >= 1.\n\n"
      << MainTable(results) << "\n## By area (nDCG@10 / recall@10)\n\n"
      << AreaTable(shown, queries);
  for (const EvalResult* r : shown) {
    out << "\n## Per query: " << ConfigName(r->config)
        << (r == best ? " (best)" : " (engine default)") << "\n\n"
        << QueryTable(*r, queries);
  }
  return out.str();
}

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return out ? Status::Ok() : Status::IOError("cannot write " + path);
}

Status Run(const Args& args) {
  SKILLDB_ASSIGN_OR_RETURN(std::vector<Skill> skills,
                           LoadSeedSkills(args.seed_dir));
  SKILLDB_ASSIGN_OR_RETURN(std::vector<RelevanceQuery> queries,
                           LoadRelevanceQueries(args.queries));
  if (auto unknown = UnknownJudgedIds(queries, skills); !unknown.empty()) {
    return Status::InvalidArgument("judged skill not in the seed: " +
                                   unknown.front());
  }
  std::vector<EvalResult> results;
  for (const EvalConfig& config : Grid(args)) {
    SKILLDB_ASSIGN_OR_RETURN(EvalResult r,
                             Evaluate(config, skills, queries, kTopK));
    std::fprintf(stderr, "%-60s nDCG@10 %.4f  recall@10 %.4f\n",
                 ConfigName(config).c_str(), r.ndcg, r.recall);
    results.push_back(std::move(r));
  }
  std::stable_sort(
      results.begin(), results.end(),
      [](const EvalResult& a, const EvalResult& b) { return a.ndcg > b.ndcg; });
  const std::string report = Report(results, queries, skills.size());
  std::cout << report;
  if (!args.markdown_path.empty()) {
    SKILLDB_RETURN_IF_ERROR(WriteFile(args.markdown_path, report));
  }
  if (!args.json_path.empty()) {
    Json all = {{"k", kTopK},
                {"num_queries", queries.size()},
                {"num_skills", skills.size()},
                {"configs", Json::array()}};
    for (const EvalResult& r : results) all["configs"].push_back(ToJson(r));
    SKILLDB_RETURN_IF_ERROR(WriteFile(args.json_path, all.dump() + "\n"));
  }
  return Status::Ok();
}

}  // namespace
}  // namespace skilldb::testing

int main(int argc, char** argv) {
  auto args = skilldb::testing::ParseArgs(argc, argv);
  skilldb::Status status =
      args.ok() ? skilldb::testing::Run(*args) : args.status();
  if (!status.ok()) {
    std::fprintf(stderr, "relevance_eval: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
