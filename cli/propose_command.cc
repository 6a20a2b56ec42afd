#include "context.h"
#include "numbers.h"
#include "skilldb/replay_verifier.h"
#include "skilldb/verify/verify.h"

namespace skilldb::cli {
namespace {

// A real policy value, 0 or more.
Result<double> ParseNumber(std::string_view key, std::string_view value) {
  return ParseRealArg("policy item " + std::string(key), value, RealRange{0});
}

}  // namespace

// Items: min-rounds=N min-speedup=X min-ci-low=X correctness=true|false
// max-speedup=X device-class=NAME (also comma-separated in one item).
Result<VerificationPolicy> ParsePolicy(const std::vector<std::string>& items) {
  VerificationPolicy policy;
  for (const std::string& group : items) {
    size_t pos = 0;
    while (pos <= group.size()) {
      size_t end = group.find(',', pos);
      if (end == std::string::npos) end = group.size();
      const std::string item = group.substr(pos, end - pos);
      pos = end + 1;
      if (item.empty()) continue;
      const size_t eq = item.find('=');
      const std::string key = item.substr(0, eq);
      const std::string value =
          eq == std::string::npos ? "" : item.substr(eq + 1);
      if (key == "min-rounds") {
        // At most the rounds a verifier runs (1..100).
        SKILLDB_ASSIGN_OR_RETURN(
            int64_t v,
            ParseSignedArg("policy item min-rounds", value, {1, 100}));
        policy.min_rounds = static_cast<int>(v);
      } else if (key == "min-speedup") {
        SKILLDB_ASSIGN_OR_RETURN(policy.min_speedup, ParseNumber(key, value));
      } else if (key == "min-ci-low") {
        SKILLDB_ASSIGN_OR_RETURN(policy.min_ci_low, ParseNumber(key, value));
      } else if (key == "max-speedup") {
        SKILLDB_ASSIGN_OR_RETURN(policy.max_plausible_speedup,
                                 ParseNumber(key, value));
      } else if (key == "correctness" &&
                 (value == "true" || value == "false")) {
        policy.require_correctness = value == "true";
      } else if (key == "device-class" && !value.empty()) {
        policy.device_class = value;
      } else {
        return Status::InvalidArgument(
            "unknown policy item '" + item +
            "' (expected min-rounds=N, min-speedup=X, min-ci-low=X, "
            "max-speedup=X, "
            "correctness=true|false, device-class=NAME)");
      }
    }
  }
  return policy;
}

namespace {


Result<std::unique_ptr<Verifier>> MakeVerifierFor(
    const ProposeArgs& a, const Io& io, VerificationRequest* request) {
  std::string kind = a.verifier.empty() ? "replay" : a.verifier;
  request->task = a.task;
  request->rounds = a.rounds;
  if (kind == "replay") {
    if (a.evidence.empty()) {
      return Status::InvalidArgument(
          "--verifier replay needs --evidence REPORT.json");
    }
    SKILLDB_ASSIGN_OR_RETURN(std::string text, ReadInput(a.evidence, io));
    auto report = ReportFromJson(text);
    if (!report.ok()) return report.status().WithContext(a.evidence);
    return std::unique_ptr<Verifier>(new ReplayVerifier(*report));
  }
  if (kind != "host" && kind != "cuda") {
    return Status::InvalidArgument("unknown verifier '" + kind +
                                   "' (expected replay, host or cuda)");
  }
  if (a.task.empty() || a.candidate.empty()) {
    return Status::InvalidArgument("--verifier " + kind +
                                   " needs --task NAME and --candidate FILE");
  }
  SKILLDB_ASSIGN_OR_RETURN(request->candidate,
                           verify::ArtifactFromFile(a.candidate));
  if (!a.baseline.empty()) {
    SKILLDB_ASSIGN_OR_RETURN(request->baseline,
                             verify::ArtifactFromFile(a.baseline));
  }
  SKILLDB_ASSIGN_OR_RETURN(verify::Backend backend, verify::ParseBackend(kind));
  SKILLDB_ASSIGN_OR_RETURN(
      auto verifier, verify::MakeVerifier(verify::DefaultOptions(backend)));
  return std::unique_ptr<Verifier>(std::move(verifier));
}

}  // namespace

int RunPropose(const GlobalArgs& g, const ProposeArgs& a, const Io& io) {
  // The arguments first: a bad policy fails before any input is read.
  ProposalOptions options;
  auto policy = ParsePolicy(a.policy);
  if (!policy.ok()) return Fail(g, io, policy.status());
  options.policy = *policy;
  auto text = ReadInput(a.file, io);
  if (!text.ok()) return Fail(g, io, text.status());
  auto candidate = ParseSkillJson(*text);
  if (!candidate.ok())
    return Fail(g, io, candidate.status().WithContext(a.file));
  auto dedup = ParseDedupPolicy(a.dedup);
  if (!dedup.ok()) return Fail(g, io, dedup.status());
  options.dedup = *dedup;
  options.near_duplicate_jaccard = a.near_jaccard;
  options.author = a.author;
  options.message = a.message;
  VerificationRequest request;
  auto verifier = MakeVerifierFor(a, io, &request);
  if (!verifier.ok()) return Fail(g, io, verifier.status());

  auto library = OpenLibrary(g, /*read_only=*/false, io);
  if (!library.ok()) return Fail(g, io, library.status());
  auto proposal = (*library)->Propose(*candidate, options);
  if (!proposal.ok()) return Fail(g, io, proposal.status());
  auto dups = (*proposal)->Duplicates();
  if (!dups.ok()) return Fail(g, io, dups.status());
  if (!g.json && !dups->empty()) {
    *io.err << "skilldb: " << dups->size() << " duplicate(s) found\n";
  }
  Progress progress(g.progress, io.err, "verifying", "");
  progress.StartTicking();
  auto report = (*proposal)->Verify(**verifier, request);
  progress.Finish();
  if (!report.ok()) return Fail(g, io, report.status());
  auto outcome = (*proposal)->Commit();
  if (!outcome.ok()) return Fail(g, io, outcome.status());
  if (g.json) {
    // The outcome's codec, plus what a script asks first.
    Json j{{"proposal", (*proposal)->id()},
           {"outcome", outcome->accepted ? "accepted" : "rejected"},
           {"id", outcome->accepted ? outcome->skill_id : candidate->id}};
    j.update(AsJson(*outcome));
    j["verifier"] = report->verifier;
    j["report_passed"] = report->passed;
    j["speedup"] = report->speedup.ratio;
    j["ci_low"] = report->speedup.ci_low;
    PrintJson(io, j);
  } else if (outcome->accepted) {
    *io.out << "accepted " << EscapeLine(outcome->skill_id) << " as version "
            << outcome->version;
    if (!outcome->deprecated.empty()) {
      *io.out << " (deprecated " << outcome->deprecated.size()
              << " superseded skill(s))";
    }
    *io.out << "\n";
  } else {
    *io.out << "rejected " << EscapeLine(candidate->id) << ":\n";
    for (const auto& r : outcome->reasons) {
      *io.out << "  - " << EscapeLine(r) << "\n";
    }
  }
  // A rejection is a completed transaction, but scripts need to tell it
  // apart from acceptance: exit 1, as for other unmet requests.
  return outcome->accepted ? kExitOk : kExitUserError;
}

}  // namespace skilldb::cli
