// What one rollout of the Policy Agent leaves behind: a trajectory of turns,
// each with the skills the Selection Agent retrieved and selected, the
// model calls (prompt and completion, with token ids where the backend gave
// them), the code extracted from every sample, the verifier's report on it,
// the feedback the next turn saw, and a reward.
//
// These records are what the rollout store keeps (rollout_store.h), what
// the trainer learns from and what the Skill Summary Agent distills. Plain
// values: safe to copy and to share read-only across threads.
#ifndef SKILLDB_POLICY_TRAJECTORY_H_
#define SKILLDB_POLICY_TRAJECTORY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/generation.h"
#include "skilldb/skill.h"
#include "skilldb/status.h"
#include "skilldb/verifier.h"

namespace skilldb::policy {

// What became of one sample. Stored by name (SampleVerdictName) in the
// rollout store: never rename a value's name.
enum class SampleVerdict {
  kFaster,         // verified: correct and a reproducible speedup
  kNotFaster,      // correct, but the speedup was not established
  kWrong,          // ran; outputs outside tolerance or left unwritten
  kCompileError,   // the compiler rejected the source (log verbatim)
  kLoadError,      // compiled, but the entry point is missing or wrong
  kRuntimeError,   // crashed, hung, failed a launch or hit a limit
  kHack,           // rejected as a reward hack (see reward.h IsHackFinding)
  kNoCode,         // the completion holds no candidate source
  kTooLarge,       // the source exceeds the verifier's limit; never run
  kVerifierError,  // the verifier itself failed (no device, no worker)
};
// "faster", "not_faster", "wrong", "compile_error", "load_error",
// "runtime_error", "hack", "no_code", "too_large", "verifier_error".
std::string_view SampleVerdictName(SampleVerdict verdict);
// InvalidArgument naming the accepted names for an unknown one.
Result<SampleVerdict> ParseSampleVerdict(std::string_view name);

// A skill as the Selection Agent saw it.
struct SkillRef {
  std::string id;
  Version revision = 0;  // the revision live at the queried version
  std::string title;
  double bm25_score = 0;
  size_t bm25_rank = 0;  // 1-based rank in the retrieved list
  double score = 0;      // final score (the reranker's fused score or BM25)
  bool operator==(const SkillRef&) const = default;
};

// One selection: what was asked, what came back, what was kept.
struct SelectionRecord {
  std::string query;
  Version library_version = 0;      // the version every hit comes from
  std::vector<SkillRef> retrieved;  // BM25 order (see selection.h)
  std::vector<SkillRef> selected;   // prompt order
  bool reranked = false;            // a reranker's judgment shaped `selected`
  std::string rerank_mode;          // "" without a reranker
  std::string rerank_reason;        // why not applied, or a note
  // The Selection Agent's model calls (empty for plain BM25).
  std::vector<GenerationRecord> generations;
  // True when the turn reused the previous turn's selection (the selector
  // did not run; no retrieved/selected usage was recorded again).
  bool reused = false;
  bool operator==(const SelectionRecord&) const = default;
};

// Time the verifier spent on one sample (its PhaseTimes).
struct SampleTimes {
  double compile_ms = 0;
  double correctness_ms = 0;
  double timing_ms = 0;
  double verify_ms = 0;  // the whole VerifyDetailed call, queueing included
  bool compile_cache_hit = false;
  bool operator==(const SampleTimes&) const = default;
};

struct SampleRecord {
  int index = 0;                // 0-based within its turn
  GenerationRecord generation;  // the model call that produced it
  std::string finish_reason;    // "stop" | "length" | ""
  // How the code was found ("fenced block 2 of 3 (cpp)", "unfenced") or
  // why none was.
  std::string extraction;
  std::string source;    // the candidate source ("" for kNoCode)
  std::string language;  // "cuda" | "cpp" | "" (as the verifier's Artifact)
  SampleVerdict verdict = SampleVerdict::kNoCode;
  std::vector<std::string> findings;         // the verifier's finding codes
  std::optional<VerificationReport> report;  // when the verifier ran
  SampleTimes times;
  double reward = 0;
  std::string feedback;  // what the next turn is told about this sample
  // Field for field (reports compared through their JSON form, as
  // VerificationReport has no operator==).
  friend bool operator==(const SampleRecord& a, const SampleRecord& b);
};

// Where one turn's time went, in milliseconds. Verification phases are
// sums over the turn's samples (which run in parallel); verify_wall_ms is
// the elapsed time of the whole parallel verification.
struct TurnTimes {
  double retrieval_ms = 0;
  double rerank_ms = 0;
  double prompt_ms = 0;
  double generation_ms = 0;
  double extraction_ms = 0;
  double compile_ms = 0;
  double correctness_ms = 0;
  double timing_ms = 0;
  double verify_wall_ms = 0;
  // Recording usage events in the library, after the turn is stored (the
  // stored turn gets it when the trajectory is finished).
  double usage_ms = 0;
  double total_ms = 0;
  bool operator==(const TurnTimes&) const = default;
};

struct TurnRecord {
  int turn = 0;  // 0-based
  SelectionRecord selection;
  std::vector<SampleRecord> samples;
  int best_sample = -1;  // highest reward (first on ties); -1: none
  double reward = 0;     // the best sample's reward (the turn's return)
  TurnTimes times;
  bool operator==(const TurnRecord&) const = default;
};

struct Trajectory {
  std::string id;     // "t-<ms hex>-<random hex>"
  std::string group;  // RL group key set by the caller ("" = none)
  std::string task;
  std::string backend;          // "cuda" | "host"
  std::string model;            // the backbone's model name
  Version library_version = 0;  // head when the trajectory started
  int max_turns = 0;
  int samples_per_turn = 0;
  int64_t started_ms = 0;  // Unix time, milliseconds
  int64_t finished_ms = 0;
  std::vector<TurnRecord> turns;
  bool solved = false;   // some sample was verified faster
  int best_turn = -1;    // the best sample overall (highest reward, the
  int best_sample = -1;  // earliest on ties); -1 when no sample exists
  // "finished", or "failed" when a turn could not complete (the backbone
  // or the verifier failed): `error` says why; the turns before it stand.
  std::string status = "finished";
  std::string error;
  bool operator==(const Trajectory&) const = default;
};

// The best sample, or nullptr when the trajectory has none.
const SampleRecord* BestSample(const Trajectory& trajectory);
// The turn holding the best sample, or nullptr.
const TurnRecord* BestTurn(const Trajectory& trajectory);

// A new trajectory id: "t-" + Unix milliseconds in hex + "-" + 8 random hex
// digits. Safe from any thread.
std::string NewTrajectoryId();

// JSON codecs (one compact object each; the readers return InvalidArgument
// naming the field). Reports and generations use the API layer's codecs.
std::string ToJson(const SkillRef& ref);
std::string ToJson(const SelectionRecord& selection);
std::string ToJson(const SampleTimes& times);
std::string ToJson(const SampleRecord& sample);
std::string ToJson(const TurnTimes& times);
std::string ToJson(const TurnRecord& turn);
std::string ToJson(const Trajectory& trajectory);
Result<SelectionRecord> SelectionFromJson(std::string_view json);
Result<SampleTimes> SampleTimesFromJson(std::string_view json);
Result<SampleRecord> SampleFromJson(std::string_view json);
Result<TurnTimes> TurnTimesFromJson(std::string_view json);
Result<Trajectory> TrajectoryFromJson(std::string_view json);

}  // namespace skilldb::policy

#endif  // SKILLDB_POLICY_TRAJECTORY_H_
