// SFT cold-start data: JSONL records (agent role, task, prompt messages,
// completion) and the diversity filter that runs before training:
// near-duplicate completions removed by MinHash over character shingles
// (LSH banding finds candidate pairs; the signature estimate of the
// Jaccard similarity decides), then caps per task and per agent, with every
// count reported. The learner formats the messages with the same chat
// format the agents use at run time (DecoderModel::EncodeChat) and trains
// on the completion tokens only.
#ifndef SKILLDB_TRAINER_SFT_DATA_H_
#define SKILLDB_TRAINER_SFT_DATA_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/generation.h"
#include "skilldb/status.h"

namespace skilldb::trainer {

struct SftRecord {
  std::string agent;                  // "selection" | "policy" | "summary"
  std::string task;                   // "" when the record names none
  std::vector<ChatMessage> messages;  // the prompt
  std::string completion;
};

// One JSON object a line: {"agent", "task"?, "messages": [{role,
// content}], "completion"}. Blank lines are skipped. InvalidArgument
// naming the file and line of a malformed record.
Result<std::vector<SftRecord>> ReadSftJsonl(const std::string& path);
std::string SftRecordToJson(const SftRecord& record);

struct SftFilterOptions {
  // Completions whose estimated Jaccard similarity (shingles) with an
  // earlier kept one reaches this are dropped. 1.01 keeps everything.
  // Default: 0.8.
  double max_similarity = 0.8;
  int shingle_chars = 5;     // Default: 5.
  int num_hashes = 64;       // signature length. Default: 64.
  int bands = 16;            // LSH bands (divides num_hashes). Default: 16.
  size_t max_per_task = 0;   // 0 = no cap. Default: 0.
  size_t max_per_agent = 0;  // 0 = no cap. Default: 0.
  uint64_t seed = 1;         // hash family. Default: 1.
  // A record is a near-duplicate only when its prompt (the messages'
  // contents) is one too, of the same kept record: a demonstration is a
  // prompt and its answer, so one answer under two different prompts
  // (a parameter line with and without a skill stating it) is kept twice.
  // Default: false (completions alone).
  bool compare_prompts = false;
};

struct SftFilterReport {
  size_t read = 0;
  size_t near_duplicates = 0;
  size_t over_task_cap = 0;
  size_t over_agent_cap = 0;
  size_t kept = 0;
  std::map<std::string, size_t> kept_per_agent;
  std::map<std::string, size_t> kept_per_task;
  std::string ToJson() const;
};

Status ValidateSftFilterOptions(const SftFilterOptions& options);

// Keeps records in input order (the first of near-duplicates survives).
Result<std::vector<SftRecord>> FilterSft(const std::vector<SftRecord>& records,
                                         const SftFilterOptions& options,
                                         SftFilterReport* report);

// The MinHash signature of `text`'s character shingles (a text shorter
// than a shingle is one shingle).
std::vector<uint64_t> MinHashSignature(std::string_view text, int shingle_chars,
                                       int num_hashes, uint64_t seed);
double EstimatedJaccard(const std::vector<uint64_t>& a,
                        const std::vector<uint64_t>& b);
// The exact Jaccard similarity of the two texts' shingle sets.
double ShingleJaccard(std::string_view a, std::string_view b,
                      int shingle_chars);

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_SFT_DATA_H_
