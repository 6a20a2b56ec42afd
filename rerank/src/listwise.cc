#include "skilldb/rerank/listwise.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "records.h"

namespace skilldb::rerank {

// What the windows' answers needed fixing, for the result's reason.
struct ListwiseJudge::Tally {
  size_t windows = 0;
  size_t missing = 0;
  size_t duplicates = 0;
  size_t out_of_range = 0;
  size_t cut = 0;  // windows whose answer stopped at max_tokens
};

namespace {

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string Describe(size_t windows, size_t missing, size_t duplicates,
                     size_t out_of_range, size_t cut) {
  std::string note;
  auto add = [&](const std::string& part) {
    note += note.empty() ? part : "; " + part;
  };
  if (cut > 0) {
    add("answer cut at max_tokens in " + Plural(cut, "window", "windows"));
  }
  if (missing > 0) {
    add(Plural(missing, "id", "ids") + " missing, appended in BM25 order");
  }
  if (duplicates > 0) {
    add(Plural(duplicates, "repeated id", "repeated ids") + " dropped");
  }
  if (out_of_range > 0) {
    add(Plural(out_of_range, "id", "ids") + " out of range dropped");
  }
  if (windows > 1 && !note.empty()) {
    note = "over " + std::to_string(windows) + " windows: " + note;
  }
  return note;
}

llm::SamplingOptions Sampling(const ListwiseOptions& o, size_t window,
                              std::optional<uint64_t> seed) {
  llm::SamplingOptions s;
  s.n = 1;
  s.temperature = o.temperature;
  s.top_p = o.top_p;
  s.seed = seed;
  s.max_tokens =
      o.max_tokens > 0 ? o.max_tokens : static_cast<int>(16 + 6 * window);
  s.logprobs = true;
  return s;
}

}  // namespace

Status ValidateListwiseOptions(const ListwiseOptions& o) {
  if (o.window < 2) return Status::InvalidArgument("window must be >= 2");
  if (o.step < 1 || o.step > o.window) {
    return Status::InvalidArgument("step must be in [1, window]");
  }
  if (!std::isfinite(o.temperature) || o.temperature < 0.0) {
    return Status::InvalidArgument("temperature must be >= 0");
  }
  if (!(o.top_p > 0.0 && o.top_p <= 1.0)) {
    return Status::InvalidArgument("top_p must be in (0, 1]");
  }
  if (o.max_tokens < 0) {
    return Status::InvalidArgument("max_tokens must be >= 0");
  }
  if (!(o.min_ranked_fraction >= 0.0 && o.min_ranked_fraction <= 1.0)) {
    return Status::InvalidArgument("min_ranked_fraction must be in [0, 1]");
  }
  if (o.deadline_ms < 0) {
    return Status::InvalidArgument("deadline_ms must be >= 0");
  }
  return Status::Ok();
}

Result<std::unique_ptr<ListwiseJudge>> ListwiseJudge::Create(
    llm::Backbone* backbone, const ListwiseOptions& options) {
  if (backbone == nullptr) return Status::InvalidArgument("no backbone");
  SKILLDB_RETURN_IF_ERROR(ValidateListwiseOptions(options));
  return std::unique_ptr<ListwiseJudge>(new ListwiseJudge(backbone, options));
}

std::string ListwiseJudge::Fingerprint() const {
  const ListwiseOptions& o = options_;
  char buf[200];
  std::snprintf(buf, sizeof(buf), "listwise-v1|w%zu|s%zu|t%.17g|p%.17g|m%d|",
                o.window, o.step, o.temperature, o.top_p, o.max_tokens);
  std::string fp = buf;
  fp += o.seed ? std::to_string(*o.seed) : "-";
  fp += "|r" + std::to_string(o.min_ranked_fraction) + "|a" +
        std::to_string(o.max_answer_bytes) + (o.reject_cut ? "|c" : "") + "|" +
        rerank::Fingerprint(o.prompt);
  return fp;
}

// Ranks order[begin, end) (candidate indices) with one model call and
// writes the new order back.
Status ListwiseJudge::RankWindow(const std::string& query,
                                 const std::vector<Hit>& candidates,
                                 size_t begin, size_t end,
                                 std::optional<uint64_t> seed,
                                 std::vector<size_t>* order, Tally* tally,
                                 Judgment* judgment) {
  const size_t n = end - begin;
  std::vector<const Hit*> window;
  for (size_t i = begin; i < end; ++i)
    window.push_back(&candidates[(*order)[i]]);
  const llm::Chat chat = ListwisePrompt(query, window, options_.prompt);
  auto generations = backbone_->Generate({chat}, Sampling(options_, n, seed));
  if (!generations.ok()) return generations.status();
  if (generations->size() != 1 || generations->front().samples.empty()) {
    return Status::Internal("the backbone returned no sample");
  }
  const llm::Generation& g = generations->front();
  const llm::Sample& sample = g.samples.front();
  judgment->generations.push_back(
      internal::ToRecord(backbone_->Model(), chat, g, sample));
  const bool cut = sample.finish_reason == "length";
  auto parsed = ParsePermutation(sample.text, n, options_.max_answer_bytes);
  if (!parsed.ok()) {
    return parsed.status().WithContext(cut ? "unparsable answer (cut at "
                                             "max_tokens)"
                                           : "unparsable answer");
  }
  if (cut && parsed->ranked < n && options_.reject_cut) {
    return Status::InvalidArgument(
        "the answer was cut at max_tokens (" +
        std::to_string(Sampling(options_, n, seed).max_tokens) + ") after ranking " +
        std::to_string(parsed->ranked) + " of " + std::to_string(n) +
        " candidates");
  }
  if (cut) ++tally->cut;
  if (parsed->ranked < options_.min_ranked_fraction * n) {
    return Status::InvalidArgument(
        "the answer ranks " + std::to_string(parsed->ranked) + " of " +
        std::to_string(n) + " candidates, below min_ranked_fraction");
  }
  std::vector<size_t> next;
  for (size_t k = 0; k < parsed->ranked; ++k) {
    next.push_back((*order)[begin + parsed->order[k]]);
  }
  std::vector<size_t> left;
  for (size_t k = parsed->ranked; k < n; ++k) {
    left.push_back((*order)[begin + parsed->order[k]]);
  }
  std::sort(left.begin(), left.end());  // candidate index = BM25 order
  next.insert(next.end(), left.begin(), left.end());
  std::copy(next.begin(), next.end(), order->begin() + begin);
  ++tally->windows;
  tally->missing += parsed->missing;
  tally->duplicates += parsed->duplicates;
  tally->out_of_range += parsed->out_of_range;
  return Status::Ok();
}

Judgment ListwiseJudge::Assess(const std::string& query,
                               const std::vector<Hit>& candidates) {
  return AssessWith(query, candidates, options_.seed);
}

Judgment ListwiseJudge::AssessSeeded(const std::string& query,
                                     const std::vector<Hit>& candidates,
                                     uint64_t seed) {
  return AssessWith(query, candidates, seed);
}

Judgment ListwiseJudge::AssessWith(const std::string& query,
                                   const std::vector<Hit>& candidates,
                                   std::optional<uint64_t> seed) {
  Judgment judgment;
  const size_t n = candidates.size();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  const internal::Deadline deadline(options_.deadline_ms);
  const size_t w = options_.window;
  const size_t windows =
      n <= w ? 1 : (n - w + options_.step - 1) / options_.step + 1;
  Tally tally;
  size_t end = n;
  for (size_t k = 1;; ++k) {
    const size_t begin = end > w ? end - w : 0;
    if (deadline.expired()) {
      judgment.status = Status::DeadlineExceeded(
          "listwise deadline of " + std::to_string(deadline.budget_ms()) +
          " ms passed before window " + std::to_string(k) + " of " +
          std::to_string(windows));
      return judgment;
    }
    Status s =
        RankWindow(query, candidates, begin, end, seed, &order, &tally,
                   &judgment);
    if (!s.ok()) {
      judgment.status = windows == 1
                            ? s
                            : s.WithContext("window " + std::to_string(k) +
                                            " of " + std::to_string(windows));
      return judgment;
    }
    if (begin == 0) break;
    end -= options_.step;
  }
  judgment.scores.assign(n, 0.0);
  for (size_t p = 0; p < n; ++p) {
    judgment.scores[order[p]] = static_cast<double>(n - p) / n;
  }
  judgment.note = Describe(tally.windows, tally.missing, tally.duplicates,
                           tally.out_of_range, tally.cut);
  return judgment;
}

Result<std::unique_ptr<ModelReranker>> MakeListwiseReranker(
    llm::Backbone* backbone, const ListwiseOptions& listwise,
    const RerankerOptions& options) {
  SKILLDB_ASSIGN_OR_RETURN(std::unique_ptr<ListwiseJudge> judge,
                           ListwiseJudge::Create(backbone, listwise));
  return ModelReranker::Create(std::move(judge), options);
}

}  // namespace skilldb::rerank
