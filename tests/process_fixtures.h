// What the multi-process tests and their worker program share: a verifier
// that passes everything, distinct candidates, and the consistency check a
// reader makes at one version.
#ifndef SKILLDB_TESTS_PROCESS_FIXTURES_H_
#define SKILLDB_TESTS_PROCESS_FIXTURES_H_

#include <string>

#include "skilldb/library.h"
#include "skilldb/proposal.h"
#include "skilldb/verifier.h"

namespace skilldb::testing {

class PassingVerifier : public Verifier {
 public:
  std::string_view Name() const override { return "passing"; }
  Result<VerificationReport> Verify(
      const VerificationRequest& request) override {
    VerificationReport r;
    r.verifier = "passing";
    r.task = request.task;
    r.device_class = "host";
    r.compiled = true;
    r.correctness = {true, true, 3, 0, 0, {}};
    for (int i = 0; i < 3; ++i) {
      RoundTiming t;
      t.speedup_ratio = 1.3;
      r.rounds.push_back(t);
    }
    r.speedup = {1.3, 1.25, 1.35, 0.95};
    r.passed = true;
    return r;
  }
};

inline Skill Candidate(int i) {
  // Distinct topics, so no two candidates are near duplicates.
  static const char* kTopics[] = {
      "coalesced global loads", "bank conflict padding",
      "warp shuffle reduce",    "cp async pipelining",
      "tensor core mma",        "persistent tile scheduler",
      "split k reduction",      "online softmax rescale",
      "layernorm welford",      "tma bulk copies",
      "grid stride loops",      "thread coarsening"};
  Skill s = Skill::Make("cand-" + std::to_string(i), kTopics[i % 12]);
  s.body = std::string(kTopics[i % 12]) + " variant " + std::to_string(i) +
           " explained with its own distinct words number " +
           std::to_string(i * 7919);
  return s;
}

// What must hold for any single version v, whatever else runs: WAND and
// exhaustive queries agree, every hit is readable as of v, and the number of
// skills a scan sees is the number the commit record states.
inline bool ConsistentAt(Library& lib, Version v, std::string* why) {
  for (const char* q : {"warp shuffle", "memory tiling", "tensor core async"}) {
    auto fast =
        lib.Query(QueryOptions{.k = 15, .as_of = v, .fields = HitFields::None()}, q);
    auto full = lib.Query(
        QueryOptions{
            .k = 15, .as_of = v, .fields = HitFields::None(), .exhaustive = true},
        q);
    if (!fast.ok() || !full.ok()) {
      *why = "query failed";
      return false;
    }
    if (fast->hits.size() != full->hits.size()) {
      *why = "pruned and exhaustive queries differ in size";
      return false;
    }
    for (size_t i = 0; i < fast->hits.size(); ++i) {
      if (fast->hits[i].id != full->hits[i].id ||
          fast->hits[i].score != full->hits[i].score) {
        *why = "pruned and exhaustive queries differ";
        return false;
      }
      if (!lib.Get(fast->hits[i].id, ReadOptions{.as_of = v}).ok()) {
        *why = "a hit is not readable at its version";
        return false;
      }
    }
  }
  uint64_t scanned = 0;
  if (!lib.Scan(ReadOptions{.as_of = v},
                [&](const Skill&) {
                  ++scanned;
                  return true;
                })
           .ok()) {
    *why = "scan failed";
    return false;
  }
  auto stats = lib.Stats(ReadOptions{.as_of = v});
  if (!stats.ok() || stats->num_skills != scanned) {
    *why = "scan count differs from the commit record";
    return false;
  }
  return true;
}

}  // namespace skilldb::testing

#endif  // SKILLDB_TESTS_PROCESS_FIXTURES_H_
