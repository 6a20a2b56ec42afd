#include "skilldb/rerank/pointwise.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "records.h"
#include "skilldb/rerank/permutation.h"

namespace skilldb::rerank {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
// Tokens before the verdict are read up to this many bytes of text.
constexpr size_t kMaxPrefixBytes = 4096;

std::string_view Trim(std::string_view s) {
  const char* ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != b[i]) return false;
  }
  return true;
}

// +1 for "yes", -1 for "no", 0 otherwise.
int VerdictOf(std::string_view token) {
  const std::string_view t = Trim(token);
  if (EqualsIgnoreCase(t, "yes")) return 1;
  if (EqualsIgnoreCase(t, "no")) return -1;
  return 0;
}

bool InThink(const std::string& text) {
  const size_t open = text.rfind("<think>");
  if (open == std::string::npos) return false;
  const size_t close = text.rfind("</think>");
  return close == std::string::npos || close < open;
}

// The sampled token among the alternatives at position i: by id, else by
// logprob, else the most likely (greedy sampling picks it).
const llm::TokenChoice& Chosen(const std::vector<llm::TokenChoice>& alts,
                               const llm::Sample& s, size_t i) {
  if (i < s.token_ids.size() && s.token_ids[i] >= 0) {
    for (const llm::TokenChoice& a : alts) {
      if (a.id == s.token_ids[i]) return a;
    }
  }
  if (i < s.token_logprobs.size()) {
    for (const llm::TokenChoice& a : alts) {
      if (std::abs(a.logprob - s.token_logprobs[i]) < 1e-6) return a;
    }
  }
  const llm::TokenChoice* best = &alts.front();
  for (const llm::TokenChoice& a : alts) {
    if (a.logprob > best->logprob) best = &a;
  }
  return *best;
}

double LogAddExp(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double m = std::max(a, b);
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

std::optional<Verdict> FromAlternatives(
    const std::vector<llm::TokenChoice>& alts) {
  double yes = kNegInf, no = kNegInf, least = 0.0, listed_mass = 0.0;
  for (const llm::TokenChoice& a : alts) {
    if (!std::isfinite(a.logprob)) continue;  // untrusted
    const double lp = std::min(a.logprob, 0.0);
    least = std::min(least, lp);
    listed_mass += std::exp(lp);
    const int v = VerdictOf(a.text);
    if (v > 0) yes = LogAddExp(yes, lp);
    if (v < 0) no = LogAddExp(no, lp);
  }
  if (yes == kNegInf && no == kNegInf) return std::nullopt;
  // A verdict outside the listed alternatives (the most likely ones) is at
  // most as likely as the least likely one listed, and at most the mass the
  // list leaves over.
  const double unlisted =
      std::min(least, std::log(std::max(1.0 - listed_mass, 1e-12)));
  if (yes == kNegInf) yes = unlisted;
  if (no == kNegInf) no = unlisted;
  return Verdict{Sigmoid(yes - no), true};
}

// The answer's first word, after any reasoning, when it is yes or no.
std::optional<Verdict> FromText(const std::string& text) {
  bool unfinished = false;
  const std::string_view rest = Trim(StripThinking(text, &unfinished));
  size_t end = 0;
  while (end < rest.size() &&
         std::isalpha(static_cast<unsigned char>(rest[end]))) {
    ++end;
  }
  const int v = VerdictOf(rest.substr(0, end));
  if (v == 0) return std::nullopt;
  return Verdict{v > 0 ? 1.0 : 0.0, false};
}

}  // namespace

std::optional<Verdict> ReadVerdict(const llm::Sample& s) {
  std::string text;
  for (size_t i = 0; i < s.top_logprobs.size(); ++i) {
    const std::vector<llm::TokenChoice>& alts = s.top_logprobs[i];
    if (alts.empty()) break;
    const llm::TokenChoice& chosen = Chosen(alts, s, i);
    if (!InThink(text) && VerdictOf(chosen.text) != 0) {
      return FromAlternatives(alts);
    }
    text += chosen.text;
    if (text.size() > kMaxPrefixBytes) break;
  }
  return FromText(s.text);
}

Status ValidatePointwiseOptions(const PointwiseOptions& o) {
  if (o.top_logprobs < 2) {
    return Status::InvalidArgument("top_logprobs must be >= 2");
  }
  if (o.max_tokens < 1) {
    return Status::InvalidArgument("max_tokens must be >= 1");
  }
  if (o.batch_size < 1) {
    return Status::InvalidArgument("batch_size must be >= 1");
  }
  if (!(o.min_verdict_fraction >= 0.0 && o.min_verdict_fraction <= 1.0)) {
    return Status::InvalidArgument("min_verdict_fraction must be in [0, 1]");
  }
  if (o.deadline_ms < 0) {
    return Status::InvalidArgument("deadline_ms must be >= 0");
  }
  return Status::Ok();
}

Result<std::unique_ptr<PointwiseJudge>> PointwiseJudge::Create(
    llm::Backbone* backbone, const PointwiseOptions& options) {
  if (backbone == nullptr) return Status::InvalidArgument("no backbone");
  SKILLDB_RETURN_IF_ERROR(ValidatePointwiseOptions(options));
  return std::unique_ptr<PointwiseJudge>(new PointwiseJudge(backbone, options));
}

std::string PointwiseJudge::Fingerprint() const {
  const PointwiseOptions& o = options_;
  return "pointwise-v1|" +
         std::string(o.method == VerdictMethod::kScore ? "score" : "top") +
         "|" + std::to_string(o.top_logprobs) + "|" +
         std::to_string(o.max_tokens) + "|" +
         std::to_string(o.verdict_prefix.size()) + ":" + o.verdict_prefix +
         "|" + std::to_string(o.instruction.size()) + ":" + o.instruction +
         "|" + std::to_string(o.min_verdict_fraction) + "|" +
         rerank::Fingerprint(o.prompt);
}

Status PointwiseJudge::JudgeByAlternatives(
    const std::vector<llm::Chat>& chats,
    std::vector<std::optional<double>>* p_yes, Judgment* judgment) {
  llm::SamplingOptions s;
  s.n = 1;
  s.temperature = 0.0;
  s.max_tokens = options_.max_tokens;
  s.logprobs = true;
  s.top_logprobs = options_.top_logprobs;
  const internal::Deadline deadline(options_.deadline_ms);
  for (size_t b = 0; b < chats.size(); b += options_.batch_size) {
    if (deadline.expired()) {
      return Status::DeadlineExceeded(
          "pointwise deadline of " + std::to_string(deadline.budget_ms()) +
          " ms passed after " + std::to_string(b) + " questions");
    }
    const size_t e = std::min(chats.size(), b + options_.batch_size);
    const std::vector<llm::Chat> batch(chats.begin() + b, chats.begin() + e);
    SKILLDB_ASSIGN_OR_RETURN(std::vector<llm::Generation> gens,
                             backbone_->Generate(batch, s));
    if (gens.size() != batch.size()) {
      return Status::Internal("the backbone answered " +
                              std::to_string(gens.size()) + " of " +
                              std::to_string(batch.size()) + " prompts");
    }
    for (size_t i = 0; i < gens.size(); ++i) {
      if (gens[i].samples.empty()) continue;
      const llm::Sample& sample = gens[i].samples.front();
      judgment->generations.push_back(
          internal::ToRecord(backbone_->Model(), batch[i], gens[i], sample));
      if (auto v = ReadVerdict(sample)) (*p_yes)[b + i] = v->p_yes;
    }
  }
  return Status::Ok();
}

Status PointwiseJudge::JudgeByScores(const std::vector<llm::Chat>& chats,
                                     std::vector<std::optional<double>>* p_yes,
                                     Judgment* judgment) {
  const std::string yes = options_.verdict_prefix + "yes";
  const std::string no = options_.verdict_prefix + "no";
  const internal::Deadline deadline(options_.deadline_ms);
  for (size_t b = 0; b < chats.size(); b += options_.batch_size) {
    if (deadline.expired()) {
      return Status::DeadlineExceeded(
          "pointwise deadline of " + std::to_string(deadline.budget_ms()) +
          " ms passed after " + std::to_string(b) + " questions");
    }
    const size_t e = std::min(chats.size(), b + options_.batch_size);
    std::vector<llm::ScoreRequest> requests;
    for (size_t i = b; i < e; ++i) {
      requests.push_back({chats[i], yes});
      requests.push_back({chats[i], no});
    }
    SKILLDB_ASSIGN_OR_RETURN(std::vector<llm::ScoreResult> scores,
                             backbone_->Score(requests));
    if (scores.size() != requests.size()) {
      return Status::Internal("the backbone scored " +
                              std::to_string(scores.size()) + " of " +
                              std::to_string(requests.size()) + " requests");
    }
    for (size_t i = b; i < e; ++i) {
      const llm::ScoreResult& y = scores[2 * (i - b)];
      const llm::ScoreResult& n = scores[2 * (i - b) + 1];
      const double diff = y.sum_logprob - n.sum_logprob;
      if (!std::isfinite(diff)) continue;  // untrusted
      const double p = Sigmoid(diff);
      (*p_yes)[i] = p;
      const llm::ScoreResult& kept = p >= 0.5 ? y : n;
      GenerationRecord r;
      r.model = backbone_->Model();
      r.prompt = internal::ToMessages(chats[i]);
      r.prompt_token_ids = kept.prompt_token_ids;
      r.completion = p >= 0.5 ? yes : no;
      r.completion_token_ids = kept.completion_token_ids;
      r.completion_logprobs = kept.token_logprobs;
      judgment->generations.push_back(std::move(r));
    }
  }
  return Status::Ok();
}

Judgment PointwiseJudge::Assess(const std::string& query,
                                const std::vector<Hit>& candidates) {
  Judgment judgment;
  const size_t n = candidates.size();
  std::vector<llm::Chat> chats;
  chats.reserve(n);
  for (const Hit& h : candidates) {
    chats.push_back(
        PointwisePrompt(query, h, options_.instruction, options_.prompt));
  }
  std::vector<std::optional<double>> p_yes(n);
  judgment.status = options_.method == VerdictMethod::kScore
                        ? JudgeByScores(chats, &p_yes, &judgment)
                        : JudgeByAlternatives(chats, &p_yes, &judgment);
  if (!judgment.status.ok()) return judgment;
  const size_t read = std::count_if(
      p_yes.begin(), p_yes.end(), [](const auto& p) { return p.has_value(); });
  if (read == 0 || read < options_.min_verdict_fraction * n) {
    judgment.status = Status::InvalidArgument(
        std::to_string(read) + " of " + std::to_string(n) +
        " answers held a yes/no verdict, below min_verdict_fraction");
    return judgment;
  }
  // A candidate without a verdict scores as BM25 ranks it (its share of
  // the top score), so fusion leaves it where BM25 put it.
  const double top = candidates.front().score;
  judgment.scores.resize(n);
  for (size_t i = 0; i < n; ++i) {
    judgment.scores[i] =
        p_yes[i] ? *p_yes[i] : (top > 0.0 ? candidates[i].score / top : 0.0);
  }
  if (read < n) {
    judgment.note = std::to_string(n - read) + " of " + std::to_string(n) +
                    " answers without a verdict kept their BM25 score";
  }
  return judgment;
}

Result<std::unique_ptr<ModelReranker>> MakePointwiseReranker(
    llm::Backbone* backbone, const PointwiseOptions& pointwise,
    const RerankerOptions& options) {
  SKILLDB_ASSIGN_OR_RETURN(std::unique_ptr<PointwiseJudge> judge,
                           PointwiseJudge::Create(backbone, pointwise));
  return ModelReranker::Create(std::move(judge), options);
}

}  // namespace skilldb::rerank
