#include "agent_util.h"

#include <chrono>
#include <cstdio>
#include <random>

#include "skilldb/policy/prompt.h"
#include "skilldb/util/clock.h"
#include "skilldb/util/text.h"

namespace skilldb::summarize::internal {

std::string NewDistillationId() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  char buf[48];
  std::snprintf(buf, sizeof(buf), "d-%llx-%08llx",
                static_cast<unsigned long long>(util::NowUnixMs()),
                static_cast<unsigned long long>(rng() & 0xffffffffull));
  return buf;
}

llm::SamplingOptions CallSampling(const llm::SamplingOptions& base,
                                  const std::string& trajectory_id,
                                  int attempt) {
  llm::SamplingOptions out = base;
  if (!out.seed) return out;
  // FNV-1a over the id, then a splitmix64 finish of seed, id and attempt.
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : trajectory_id) h = (h ^ c) * 0x100000001b3ull;
  uint64_t z = *out.seed ^ h ^ (static_cast<uint64_t>(attempt) << 48);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  out.seed = z ^ (z >> 31);
  return out;
}

Result<std::string> Ask(llm::Backbone& backbone,
                        const std::vector<ChatMessage>& chat,
                        const llm::SamplingOptions& sampling,
                        GenerationRecord* record, bool* cut) {
  llm::Chat prompt;
  for (const ChatMessage& m : chat) prompt.push_back({m.role, m.content});
  llm::SamplingOptions one = sampling;
  one.n = 1;
  SKILLDB_ASSIGN_OR_RETURN(std::vector<llm::Generation> gens,
                           backbone.Generate({prompt}, one));
  if (gens.size() != 1 || gens[0].samples.empty()) {
    return Status::Internal("the backbone returned no sample");
  }
  llm::Sample& s = gens[0].samples[0];
  record->model = backbone.Model();
  record->prompt = chat;
  record->prompt_text = gens[0].prompt_text;
  record->prompt_token_ids = gens[0].prompt_token_ids;
  record->completion = s.text;
  record->completion_token_ids = std::move(s.token_ids);
  record->completion_logprobs = std::move(s.token_logprobs);
  *cut = s.finish_reason == "length";
  return s.text;
}

std::string AnswerError(bool cut, int max_tokens, const std::string& error) {
  if (!cut) return error;
  return "the answer was cut at the token limit (max_tokens " +
         std::to_string(max_tokens) + "), so it is incomplete: " + error;
}

void AppendRetry(std::vector<ChatMessage>* chat, const std::string& answer,
                 const std::string& error) {
  chat->push_back({"assistant", policy::Truncate(answer, 16000)});
  chat->push_back({"user", "Your answer was not accepted: " + error +
                               "\nAnswer again with only the corrected JSON "
                               "object."});
}

std::vector<policy::SkillRef> UsedSkills(const policy::Trajectory& t) {
  if (const policy::TurnRecord* best = policy::BestTurn(t)) {
    return best->selection.selected;
  }
  return t.turns.empty() ? std::vector<policy::SkillRef>{}
                         : t.turns.back().selection.selected;
}

std::string Attempts(const policy::Trajectory& t, size_t feedback_bytes,
                     size_t code_bytes) {
  std::string out;
  for (const policy::TurnRecord& turn : t.turns) {
    if (turn.best_sample < 0) continue;
    const policy::SampleRecord& s = turn.samples[turn.best_sample];
    out += "## Turn " + std::to_string(turn.turn + 1) + ": " +
           std::string(policy::SampleVerdictName(s.verdict)) + "\n";
    if (code_bytes > 0 && !s.source.empty()) {
      out += util::FencedBlock("", policy::Truncate(s.source, code_bytes)) +
             "\n";
    }
    out += policy::Truncate(s.feedback, feedback_bytes) + "\n";
  }
  return out;
}

}  // namespace skilldb::summarize::internal
