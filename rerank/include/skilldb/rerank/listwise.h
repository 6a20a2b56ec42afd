// Listwise reranking, RankGPT style: the model sees the query and the
// candidates numbered [1]..[n] and answers with a ranking such as
// "[3] > [1] > [2]", read by ParsePermutation (permutation.h). More
// candidates than one window holds are ranked with RankGPT's sliding
// window: from the last window to the first, each moved up by `step`, so
// the best candidates bubble to the top.
//
// A ListwiseJudge is safe for concurrent use by multiple threads when its
// Backbone is (backbone.h says every Backbone is).
#ifndef SKILLDB_RERANK_LISTWISE_H_
#define SKILLDB_RERANK_LISTWISE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "skilldb/llm/backbone.h"
#include "skilldb/rerank/judge.h"
#include "skilldb/rerank/model_reranker.h"
#include "skilldb/rerank/permutation.h"
#include "skilldb/rerank/prompt.h"

namespace skilldb::rerank {

struct ListwiseOptions {
  PromptOptions prompt;
  size_t window = 20;  // candidates per model call, >= 2. Default: 20.
  size_t step = 10;    // window shift, in [1, window]. Default: 10.
  // Sampling of each ranking. Default: greedy (temperature 0).
  double temperature = 0.0;
  double top_p = 1.0;
  std::optional<uint64_t> seed;
  // Completion tokens per window; 0 = 16 + 6 per candidate in the window
  // (room for "[12] > " per id). Reasoning models think first: give them
  // more. Default: 0.
  int max_tokens = 0;
  // An answer is read up to this many bytes. Default: kMaxAnswerBytes.
  size_t max_answer_bytes = kMaxAnswerBytes;
  // Share of a window's candidates the answer itself must rank (the rest
  // are appended in BM25 order); below it the answer is unusable. In
  // [0, 1]. Default: 0 (one id is enough).
  double min_ranked_fraction = 0.0;
  // An answer cut at max_tokens (finish_reason "length") that does not
  // rank every candidate of its window is handled like an unparsable one
  // (the window keeps BM25's order; the reason says it was cut): the ids it
  // never reached were not judged. A cut answer that ranks them all is
  // applied, and the note says it was cut. Default: true.
  bool reject_cut = true;
  // Give up (BM25 order) when the windows so far took this long; checked
  // before each window. 0 = no limit. Default: 0.
  int deadline_ms = 0;
};

// InvalidArgument naming the field.
Status ValidateListwiseOptions(const ListwiseOptions& options);

// The model's ranking of the candidates. Relevance of the candidate at
// final position p (0-based) of n: (n - p) / n.
class ListwiseJudge final : public Judge {
 public:
  // `backbone` is not owned and must outlive the judge. Errors:
  // InvalidArgument for a null backbone or bad options.
  static Result<std::unique_ptr<ListwiseJudge>> Create(
      llm::Backbone* backbone, const ListwiseOptions& options);

  std::string_view Mode() const override { return "listwise"; }
  std::string Model() const override { return backbone_->Model(); }
  std::string Fingerprint() const override;
  // Failures: the backbone's error (named with the window), an answer
  // ParsePermutation cannot read or that ranks too few ids, the deadline.
  Judgment Assess(const std::string& query,
                  const std::vector<Hit>& candidates) override;
  Judgment AssessSeeded(const std::string& query,
                        const std::vector<Hit>& candidates,
                        uint64_t seed) override;

 private:
  ListwiseJudge(llm::Backbone* backbone, const ListwiseOptions& options)
      : backbone_(backbone), options_(options) {}
  struct Tally;
  Judgment AssessWith(const std::string& query,
                      const std::vector<Hit>& candidates,
                      std::optional<uint64_t> seed);
  Status RankWindow(const std::string& query,
                    const std::vector<Hit>& candidates, size_t begin,
                    size_t end, std::optional<uint64_t> seed,
                    std::vector<size_t>* order, Tally* tally,
                    Judgment* judgment);

  llm::Backbone* const backbone_;
  const ListwiseOptions options_;
};

// A listwise ModelReranker over `backbone` (not owned).
Result<std::unique_ptr<ModelReranker>> MakeListwiseReranker(
    llm::Backbone* backbone, const ListwiseOptions& listwise,
    const RerankerOptions& options);

}  // namespace skilldb::rerank

#endif  // SKILLDB_RERANK_LISTWISE_H_
