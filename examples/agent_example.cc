// An agent's side of skilldb: open (or create) a library, query it for the
// fields a prompt needs, record what the agent used, and propose a new skill
// with a verification report recorded elsewhere (replayed here).
//
//   agent_example LIBRARY_DIR
//
// Prints one line per step and exits 0 when every step did what it should.
#include <cstdio>
#include <memory>
#include <string>

#include "skilldb/json.h"
#include "skilldb/library.h"
#include "skilldb/replay_verifier.h"

namespace {

int Die(const char* step, const skilldb::Status& status) {
  std::fprintf(stderr, "agent_example: %s: %s\n", step,
               status.ToString().c_str());
  return 1;
}

skilldb::Skill Seed(std::string id, std::string title, std::string body) {
  skilldb::Skill s = skilldb::Skill::Make(std::move(id), std::move(title));
  s.body = std::move(body);
  s.language = skilldb::Language::kCuda;
  s.ops = {"matmul"};
  return s;
}

// A report as the GPU verifier writes it: three rounds, all 1.4x faster.
skilldb::VerificationReport RecordedReport() {
  skilldb::VerificationReport r;
  r.verifier = "cuda";
  r.verifier_version = "skilldb-verify/1";
  r.device = "NVIDIA H200 (sm_90)";
  r.device_class = "sm_90";
  r.task = "matmul_fp32";
  r.compiled = true;
  r.correctness = {.checked = true, .passed = true, .trials = 3};
  for (int i = 0; i < 3; ++i) {
    r.rounds.push_back({.baseline_median_ms = 1.4,
                        .candidate_median_ms = 1.0,
                        .speedup_ratio = 1.4});
  }
  r.speedup = {.ratio = 1.4, .ci_low = 1.35, .ci_high = 1.45};
  r.passed = true;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: agent_example LIBRARY_DIR\n");
    return 2;
  }
  auto library = skilldb::Library::Open({.create_if_missing = true}, argv[1]);
  if (!library.ok()) return Die("open", library.status());
  skilldb::Library& lib = **library;

  auto v = lib.PutMany(
      {Seed("smem-tiling", "Tile the K loop through shared memory",
            "Stage tiles of A and B in shared memory; sync; multiply."),
       Seed("warp-shuffle-reduce", "Warp shuffle reduction",
            "Reduce within a warp with __shfl_down_sync.")});
  if (!v.ok()) return Die("import", v.status());
  std::printf("imported 2 skills at version %llu\n",
              static_cast<unsigned long long>(*v));

  // What a prompt needs, without a read per hit; and `retrieved` recorded.
  skilldb::QueryOptions q;
  q.k = 5;
  q.fields = {skilldb::HitField::kTitle, skilldb::HitField::kBody,
              skilldb::HitField::kUsage};
  q.record_retrieved = true;
  auto hits = lib.Query(q, "shared memory tiling");
  if (!hits.ok()) return Die("query", hits.status());
  if (hits->hits.empty() || hits->hits[0].id != "smem-tiling" ||
      hits->hits[0].body.empty()) {
    std::fprintf(stderr, "agent_example: unexpected hits %s\n",
                 skilldb::ToJson(*hits).c_str());
    return 1;
  }
  std::printf("query: %s\n", skilldb::ToJson(*hits).c_str());

  // The agent used the top hit and its kernel verified faster.
  auto recorded =
      lib.RecordUsage({{"smem-tiling", skilldb::UsageEvent::kSelected, 1},
                       {"smem-tiling", skilldb::UsageEvent::kApplied, 1},
                       {"smem-tiling", skilldb::UsageEvent::kSucceeded, 1}});
  if (!recorded.ok()) return Die("usage", recorded);
  auto usage = lib.GetUsage("smem-tiling");
  if (!usage.ok()) return Die("usage", usage.status());
  std::printf("usage: %s\n", skilldb::ToJson(*usage).c_str());

  // A new skill, with evidence gathered on a GPU machine.
  skilldb::Skill candidate =
      Seed("double-buffered-smem", "Double-buffer the shared-memory tiles",
           "Load the next K tile with cp.async while computing on the current "
           "one; two buffers, one barrier per step.");
  candidate.provenance.source = "summary-agent";
  candidate.lineage.derived_from = {"smem-tiling"};
  auto proposal = lib.Propose(candidate, {});
  if (!proposal.ok()) return Die("propose", proposal.status());
  skilldb::ReplayVerifier verifier(RecordedReport());
  auto report = (*proposal)->Verify(verifier, {.task = "matmul_fp32"});
  if (!report.ok()) return Die("verify", report.status());
  auto outcome = (*proposal)->Commit();
  if (!outcome.ok()) return Die("commit", outcome.status());
  std::printf("proposal: %s\n", skilldb::ToJson(*outcome).c_str());
  if (!outcome->accepted) return 1;
  return 0;
}
