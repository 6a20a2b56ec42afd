#include "rerank_protocol.h"

#include "json_util.h"

namespace skilldb::llm::internal {
namespace {

// The list of {index, <score_key>} objects, validated against `count`.
Result<std::vector<RerankScore>> ReadScores(const HttpAnswer& answer,
                                            const json& list,
                                            const char* score_key,
                                            size_t count) {
  std::vector<RerankScore> scores;
  std::vector<bool> seen(count, false);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = "result " + std::to_string(i);
    auto index = internal::AsCount(Find(list[i], "index"));
    auto score = internal::AsNumber(Find(list[i], score_key));
    if (!index || *index >= count || seen[*index]) {
      return BadAnswer(answer, at + " has a bad or repeated \"index\"");
    }
    if (!score) {
      return BadAnswer(answer, at + " has no numeric \"" + score_key + "\"");
    }
    seen[*index] = true;
    scores.push_back({static_cast<size_t>(*index), *score});
  }
  return scores;
}

}  // namespace

Result<std::vector<RerankScore>> ParseRerankAnswer(const HttpAnswer& answer,
                                                   RerankApi api, size_t count,
                                                   uint64_t* tokens) {
  SKILLDB_ASSIGN_OR_RETURN(
      json root, internal::ParseJson(answer, 4096 + 8 * count));
  if (api == RerankApi::kTei) {
    if (!root.is_array())
      return BadAnswer(answer, "answer is not a JSON array");
    return ReadScores(answer, root, "score", count);
  }
  const json* results = Find(root, "results");
  if (results == nullptr || !results->is_array()) {
    return BadAnswer(answer, "answer has no \"results\" array");
  }
  const json* usage = Find(root, "usage");
  *tokens = internal::AsCount(usage ? Find(*usage, "total_tokens") : nullptr)
                .value_or(0);
  return ReadScores(answer, *results, "relevance_score", count);
}


}  // namespace skilldb::llm::internal
