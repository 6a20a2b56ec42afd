// A fully populated trajectory for codec and store tests.
#ifndef SKILLDB_TESTS_AGENTS_TRAJECTORY_FIXTURE_H_
#define SKILLDB_TESTS_AGENTS_TRAJECTORY_FIXTURE_H_

#include "skilldb/policy/trajectory.h"

namespace skilldb::policy::testing {

inline SampleRecord FixtureSample(int index, SampleVerdict verdict,
                                  double reward) {
  SampleRecord s;
  s.index = index;
  s.generation.model = "m";
  s.generation.prompt = {{"system", "protocol"}, {"user", "task"}};
  s.generation.prompt_text = "<|im_start|>system";
  s.generation.prompt_token_ids = {7, 8, 9};
  s.generation.completion = "```cpp\nint x;\n```" + std::to_string(index);
  s.generation.completion_token_ids = {1, 2, index};
  s.generation.completion_logprobs = {-0.25, -0.5, -1.0};
  s.finish_reason = "stop";
  s.extraction = "fenced block 1 of 1 (cpp)";
  s.source = "int x;\n";
  s.language = "cpp";
  s.verdict = verdict;
  s.findings = {"wrong_output", "unwritten_output"};
  s.reward = reward;
  s.feedback = "The output is wrong.";
  s.times = {1.5, 2.5, 3.5, 9.0, true};
  if (verdict != SampleVerdict::kNoCode) {
    VerificationReport r;
    r.verifier = "host";
    r.task = "sum_dim1_fp32";
    r.compiled = true;
    r.speedup = {1.25, 1.1, 1.4, 0.95};
    r.passed = verdict == SampleVerdict::kFaster;
    r.reasons = {"[wrong_output] 3 elements"};
    s.report = r;
  }
  return s;
}

inline Trajectory FixtureTrajectory() {
  Trajectory t;
  t.id = "t-abc-00000001";
  t.group = "step-3";
  t.task = "sum_dim1_fp32";
  t.backend = "host";
  t.model = "m";
  t.library_version = 4;
  t.max_turns = 3;
  t.samples_per_turn = 2;
  t.started_ms = 1000;
  t.finished_ms = 2000;
  for (int k = 0; k < 2; ++k) {
    TurnRecord turn;
    turn.turn = k;
    turn.selection.query = "sum reduction";
    turn.selection.library_version = 4;
    turn.selection.retrieved = {{"a", 2, "A", 3.5, 1, 3.5},
                                {"b", 3, "B", 2.0, 2, 2.0}};
    turn.selection.selected = {{"b", 3, "B", 2.0, 2, 0.9}};
    turn.selection.reranked = true;
    turn.selection.rerank_mode = "listwise";
    turn.selection.generations = {GenerationRecord{
        "m", {{"user", "rank these"}}, "", {}, "[2, 1]", {5}, {-0.1}}};
    turn.samples = {
        FixtureSample(0, SampleVerdict::kWrong, 0.0),
        FixtureSample(1,
                      k == 1 ? SampleVerdict::kFaster : SampleVerdict::kNoCode,
                      k == 1 ? 1.125 : 0.0)};
    turn.best_sample = k == 1 ? 1 : 0;
    turn.reward = turn.samples[turn.best_sample].reward;
    turn.times.generation_ms = 10 + k;
    turn.times.total_ms = 20 + k;
    t.turns.push_back(turn);
  }
  t.solved = true;
  t.best_turn = 1;
  t.best_sample = 1;
  return t;
}

}  // namespace skilldb::policy::testing

#endif  // SKILLDB_TESTS_AGENTS_TRAJECTORY_FIXTURE_H_
