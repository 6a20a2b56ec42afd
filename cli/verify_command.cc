#include "context.h"
#include "skilldb/verify/verify.h"

namespace skilldb::cli {

int RunVerify(const GlobalArgs& g, const VerifyArgs& a, const Io& io) {
  auto backend = verify::ParseBackend(a.backend);
  if (!backend.ok()) return Fail(g, io, backend.status());
  verify::VerifierOptions options = verify::DefaultOptions(*backend);
  if (a.list_tasks) {
    auto tasks = verify::ListTasks(options.task_dir);
    if (!tasks.ok()) return Fail(g, io, tasks.status());
    if (g.json) {
      PrintJson(io, Json(*tasks));
    } else {
      for (const auto& t : *tasks) *io.out << EscapeLine(t) << "\n";
    }
    return kExitOk;
  }
  if (a.task.empty() || a.candidate.empty()) {
    return Fail(g, io,
                Status::InvalidArgument("give --task NAME and --candidate FILE "
                                        "(or --list-tasks)"));
  }
  VerificationRequest request;
  request.task = a.task;
  request.rounds = a.rounds;
  auto candidate = verify::ArtifactFromFile(a.candidate);
  if (!candidate.ok()) return Fail(g, io, candidate.status());
  request.candidate = *candidate;
  if (!a.baseline.empty()) {
    auto baseline = verify::ArtifactFromFile(a.baseline);
    if (!baseline.ok()) return Fail(g, io, baseline.status());
    request.baseline = *baseline;
  }
  auto verifier = verify::MakeVerifier(options);
  if (!verifier.ok()) return Fail(g, io, verifier.status());
  if (!g.json)
    *io.err << "skilldb: verifying " << EscapeLine(a.candidate) << " on "
            << EscapeLine(a.task) << "...\n";
  Progress progress(g.progress, io.err, "verifying", "");
  progress.StartTicking();
  auto report = (*verifier)->Verify(request);
  progress.Finish();
  if (!report.ok()) return Fail(g, io, report.status());
  if (g.json) {
    PrintJson(io, Json::parse(ReportToJson(*report)));
  } else {
    *io.out << EscapeBlock(verify::FormatReportText(*report));
  }
  // A candidate that fails verification is a completed run with a verdict;
  // exit 1 so scripts can branch on it.
  return report->passed ? kExitOk : kExitUserError;
}

}  // namespace skilldb::cli
