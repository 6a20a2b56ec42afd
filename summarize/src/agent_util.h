// What the Skill Summary Agent's two runs share: one model call kept as a
// GenerationRecord, ids and clocks, and the record's bookkeeping. Internal.
#ifndef SKILLDB_SUMMARIZE_AGENT_UTIL_H_
#define SKILLDB_SUMMARIZE_AGENT_UTIL_H_

#include <string>
#include <vector>

#include "skilldb/generation.h"
#include "skilldb/llm/backbone.h"
#include "skilldb/policy/rollout_store.h"
#include "skilldb/policy/trajectory.h"
#include "skilldb/status.h"

namespace skilldb::summarize::internal {

// "d-<ms hex>-<random hex>".
std::string NewDistillationId();

// Asks `backbone` for one completion of `chat`; the call is kept (with its
// tokens) in *record, and *cut says whether the answer stopped at
// max_tokens (finish_reason "length"). Errors: the backbone's, or Internal
// for no sample.
Result<std::string> Ask(llm::Backbone& backbone,
                        const std::vector<ChatMessage>& chat,
                        const llm::SamplingOptions& sampling,
                        GenerationRecord* record, bool* cut);

// The error recorded (and fed back) for an answer that did not validate:
// `error`, prefixed, when the answer was cut at max_tokens, with that
// likely cause.
std::string AnswerError(bool cut, int max_tokens, const std::string& error);

// The sampling of one call: `base`, with its seed (when set) mixed with the
// trajectory's id and the attempt, so a trajectory's runs sample the same
// stream in any process and the calls of one run differ.
llm::SamplingOptions CallSampling(const llm::SamplingOptions& base,
                                  const std::string& trajectory_id,
                                  int attempt);

// The follow-up of a rejected answer: the answer as the assistant's turn,
// then the error and the request to answer again.
void AppendRetry(std::vector<ChatMessage>* chat, const std::string& answer,
                 const std::string& error);

// The skills the trajectory's best turn (or, without one, its last turn)
// selected.
std::vector<policy::SkillRef> UsedSkills(const policy::Trajectory& t);

// A short account of each turn's best sample: verdict and feedback, the
// code (when code_bytes > 0) in a fence the code cannot close.
std::string Attempts(const policy::Trajectory& t, size_t feedback_bytes,
                     size_t code_bytes);

}  // namespace skilldb::summarize::internal

#endif  // SKILLDB_SUMMARIZE_AGENT_UTIL_H_
