// Retrieval-quality evaluation of the seed library against the team's
// relevance judgments (data/relevance/queries.jsonl): graded nDCG@k and
// recall@k for one analyzer and field weighting.
//
// Used by the relevance_eval tool (the full grid) and by relevance_test (a
// floor on the chosen configuration). Functions are thread-compatible.
#ifndef SKILLDB_TESTS_RELEVANCE_H_
#define SKILLDB_TESTS_RELEVANCE_H_

#include <map>
#include <string>
#include <vector>

#include "skilldb/options.h"
#include "skilldb/skill.h"
#include "skilldb/status.h"

namespace skilldb::testing {

// One judged query. Grades: 2 = the skill directly answers the query,
// 1 = useful or related; skills not listed are not relevant (0).
struct RelevanceQuery {
  std::string id;    // "q001"
  std::string text;  // what a kernel writer would type
  std::string area;  // memory, parallel, compute, fusion, triton, ops
  std::map<std::string, int> grades;
};

// Reads the judgments (JSONL: id, query, area, relevant {skill id: grade}).
// InvalidArgument naming the line for malformed records, grades outside
// {1, 2}, or a query without any grade-2 skill; IOError if unreadable.
Result<std::vector<RelevanceQuery>> LoadRelevanceQueries(
    const std::string& path);

// Every judged skill id that is not in `skills` ("q007: no-such-id"), so
// stale judgments are caught rather than silently lowering the scores.
std::vector<std::string> UnknownJudgedIds(
    const std::vector<RelevanceQuery>& queries,
    const std::vector<Skill>& skills);

// nDCG@k with exponential gain 2^grade - 1 and discount 1/log2(rank + 1),
// normalized by the ideal ordering of all judged skills (so a query whose
// relevant skills are not all retrieved scores below 1). 0 if nothing is
// judged relevant.
double NdcgAtK(const std::vector<std::string>& ranked,
               const std::map<std::string, int>& grades, size_t k);

// The fraction of the skills with grade >= 1 found in the first k ranks.
double RecallAtK(const std::vector<std::string>& ranked,
                 const std::map<std::string, int>& grades, size_t k);

// What is varied: the analyzer and the per-field weights.
struct EvalConfig {
  std::string analyzer = "code";
  FieldWeights weights;
};

// "code title=3,summary=2,body=1,tags=2,ops=1,code=1"
std::string ConfigName(const EvalConfig& config);

struct QueryScore {
  std::string query_id;
  double ndcg = 0.0;
  double recall = 0.0;
  std::vector<std::string> ranked;  // the top k ids
};

struct EvalResult {
  EvalConfig config;
  double ndcg = 0.0;                  // mean over queries
  double recall = 0.0;                // mean over queries
  std::vector<QueryScore> per_query;  // in query order
};

// Builds a fresh library with `config` in a temporary directory (removed
// afterwards), imports `skills` in one commit, runs every query for the top
// `k` and scores it. Errors from opening, importing or querying the library
// are returned with the configuration named.
Result<EvalResult> Evaluate(const EvalConfig& config,
                            const std::vector<Skill>& skills,
                            const std::vector<RelevanceQuery>& queries,
                            size_t k = 10);

}  // namespace skilldb::testing

#endif  // SKILLDB_TESTS_RELEVANCE_H_
