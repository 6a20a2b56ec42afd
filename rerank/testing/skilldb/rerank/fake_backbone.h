// Test support for rerank/'s unit tests, tests/rerank/ and the bench (never
// the library): a Backbone double whose answers come from functions the
// test gives, counting its calls, and helpers that read the candidates a
// listwise or pointwise prompt shows.
//
// FakeBackbone is safe for concurrent use when its functions are.
#ifndef SKILLDB_RERANK_TESTING_FAKE_BACKBONE_H_
#define SKILLDB_RERANK_TESTING_FAKE_BACKBONE_H_

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "skilldb/library.h"
#include "skilldb/llm/backbone.h"
#include "skilldb/rerank/model_reranker.h"
#include "skilldb/reranker.h"

namespace skilldb::rerank::testing {

class FakeBackbone final : public llm::Backbone {
 public:
  using GenerateFn = std::function<Result<llm::Sample>(
      const llm::Chat&, const llm::SamplingOptions&)>;
  using ScoreFn =
      std::function<Result<llm::ScoreResult>(const llm::ScoreRequest&)>;

  explicit FakeBackbone(GenerateFn generate, ScoreFn score = nullptr,
                        std::string model = "fake-model")
      : generate_(std::move(generate)),
        score_(std::move(score)),
        model_(std::move(model)) {}

  std::string Model() const override { return model_; }

  Result<std::vector<llm::Generation>> Generate(
      const std::vector<llm::Chat>& prompts,
      const llm::SamplingOptions& options) override {
    ++generate_calls_;
    prompts_ += prompts.size();
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_options_ = options;
    }
    std::vector<llm::Generation> out;
    for (const llm::Chat& chat : prompts) {
      Result<llm::Sample> sample = generate_(chat, options);
      if (!sample.ok()) return sample.status();
      llm::Generation g;
      g.prompt_token_ids = {101, 102, 103};
      g.samples.push_back(std::move(sample).value());
      out.push_back(std::move(g));
    }
    return out;
  }

  Result<std::vector<llm::ScoreResult>> Score(
      const std::vector<llm::ScoreRequest>& requests) override {
    ++score_calls_;
    if (!score_) return Status::NotSupported("this fake cannot score");
    std::vector<llm::ScoreResult> out;
    for (const llm::ScoreRequest& r : requests) {
      Result<llm::ScoreResult> s = score_(r);
      if (!s.ok()) return s.status();
      out.push_back(std::move(s).value());
    }
    return out;
  }

  llm::TokenUsage Usage() const override {
    return {static_cast<uint64_t>(generate_calls_ + score_calls_), 0, 0};
  }

  int generate_calls() const { return generate_calls_; }
  int score_calls() const { return score_calls_; }
  size_t prompts() const { return prompts_; }
  llm::SamplingOptions last_options() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_options_;
  }

 private:
  GenerateFn generate_;
  ScoreFn score_;
  std::string model_;
  std::atomic<int> generate_calls_{0};
  std::atomic<int> score_calls_{0};
  std::atomic<size_t> prompts_{0};
  mutable std::mutex mu_;
  llm::SamplingOptions last_options_;  // GUARDED_BY(mu_)
};

// A sample whose text is `text`, with one token per byte run (no logprobs).
inline llm::Sample TextSample(std::string text) {
  llm::Sample s;
  s.text = std::move(text);
  s.finish_reason = "stop";
  return s;
}

// The skill ids of a listwise prompt, by their number: lines "[k] id: ...".
inline std::map<size_t, std::string> NumberedIds(const llm::Chat& chat) {
  std::map<size_t, std::string> ids;
  const std::string& user = chat.back().content;
  size_t pos = 0;
  while ((pos = user.find("\n[", pos)) != std::string::npos) {
    const size_t close = user.find("] ", pos);
    const size_t colon = user.find(':', close);
    const size_t eol = user.find('\n', close);
    pos += 2;
    if (close == std::string::npos || colon == std::string::npos ||
        (eol != std::string::npos && colon > eol)) {
      continue;
    }
    const std::string number = user.substr(pos, close - pos);
    if (number.empty() ||
        number.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    ids[std::stoul(number)] = user.substr(close + 2, colon - close - 2);
  }
  return ids;
}

// The skill id a pointwise prompt asks about ("<Document>: id: ...").
inline std::string DocumentId(const llm::Chat& chat) {
  const std::string& user = chat.back().content;
  const size_t at = user.find("<Document>: ");
  if (at == std::string::npos) return "";
  const size_t begin = at + 12;
  const size_t colon = user.find(':', begin);
  return colon == std::string::npos ? "" : user.substr(begin, colon - begin);
}

// The answer "[a] > [b] > ..." ranking a listwise prompt's candidates by
// `relevance` (higher first; ties by number).
inline std::string RankBy(
    const llm::Chat& chat,
    const std::function<double(const std::string&)>& relevance) {
  std::vector<std::pair<double, size_t>> order;
  for (const auto& [number, id] : NumberedIds(chat)) {
    order.push_back({-relevance(id), number});
  }
  std::sort(order.begin(), order.end());
  std::string answer;
  for (const auto& [r, number] : order) {
    if (!answer.empty()) answer += " > ";
    answer += "[" + std::to_string(number) + "]";
  }
  return answer;
}

inline Hit MakeHit(std::string id, double score, std::string title = "",
                   Version revision = 0) {
  Hit h;
  h.id = std::move(id);
  h.score = score;
  h.title = title.empty() ? h.id + " title" : std::move(title);
  h.summary = "summary of " + h.id;
  h.body = "body of " + h.id;
  h.fields = {HitField::kTitle, HitField::kSummary, HitField::kBody};
  h.revision = revision;
  return h;
}

// A request for `query` over candidates s1..sn with falling BM25 scores
// (step `score_step`), revisions 1..n when `with_revisions`.
inline RerankRequest MakeRequest(std::string query, size_t n,
                                 double score_step = 0.1,
                                 bool with_revisions = false) {
  RerankRequest r;
  r.query = std::move(query);
  for (size_t i = 0; i < n; ++i) {
    r.candidates.push_back(MakeHit("s" + std::to_string(i + 1),
                                   10.0 - score_step * static_cast<double>(i), "",
                                   with_revisions ? i + 1 : 0));
  }
  return r;
}

// The ids of a result, in its order.
inline std::vector<std::string> Order(const RerankResult& r) {
  std::vector<std::string> ids;
  for (const RankedHit& h : r.hits) ids.push_back(h.hit.id);
  return ids;
}

// Pure model order: fusion off, so tests see what the judge decided.
inline RerankerOptions ModelOnly() {
  RerankerOptions o;
  o.fusion.top_bm25_weight = o.fusion.middle_bm25_weight =
      o.fusion.tail_bm25_weight = 0.0;
  o.fusion.guard_ranks = 0;
  o.fusion.min_agreement = -1.0;
  return o;
}

}  // namespace skilldb::rerank::testing

#endif  // SKILLDB_RERANK_TESTING_FAKE_BACKBONE_H_
