// The verifier from an installed prefix: loads the task catalogue and runs
// the host backend on one task's reference against itself (a candidate that
// is correct but not faster, so the verdict is "rejected: not faster").
//
//   verify_example
#include <cstdio>

#include "skilldb/verify/verify.h"

int main() {
  const skilldb::verify::VerifierOptions options =
      skilldb::verify::DefaultOptions(skilldb::verify::Backend::kHost);
  std::fprintf(stderr, "worker: %s\ntasks: %s\n", options.worker_path.c_str(),
               options.task_dir.c_str());
  auto verifier = skilldb::verify::MakeVerifier(options);
  if (!verifier.ok()) {
    std::fprintf(stderr, "verify_example: %s\n",
                 verifier.status().ToString().c_str());
    return 1;
  }
  auto candidate = skilldb::verify::ArtifactFromFile(
      options.task_dir + "/sum_dim1_fp32/reference.cc");
  if (!candidate.ok()) {
    std::fprintf(stderr, "verify_example: %s\n",
                 candidate.status().ToString().c_str());
    return 1;
  }
  skilldb::VerificationRequest request;
  request.task = "sum_dim1_fp32";
  request.candidate = *candidate;
  auto report = (*verifier)->Verify(request);
  if (!report.ok()) {
    std::fprintf(stderr, "verify_example: %s\n",
                 report.status().ToString().c_str());
    return 1;
  }
  std::printf("%s\n", skilldb::ReportToJson(*report).c_str());
  // The reference checks out against itself; it cannot be faster than
  // itself, so the verifier rejects it.
  return report->compiled && report->correctness.passed ? 0 : 1;
}
