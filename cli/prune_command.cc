#include "context.h"
#include "numbers.h"

namespace skilldb::cli {
namespace {

// low-utility=X[:N]  superseded  unused=K  near-duplicates=J
Result<PrunePolicy> ParsePrunePolicy(const std::vector<std::string>& items) {
  PrunePolicy policy;
  for (const std::string& item : items) {
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value =
        eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "superseded" && value.empty()) {
      policy.superseded = true;
    } else if (key == "low-utility" && !value.empty()) {
      const size_t colon = value.find(':');
      // A utility is a success rate, in [0, 1].
      SKILLDB_ASSIGN_OR_RETURN(
          double x, ParseRealArg("policy low-utility", value.substr(0, colon),
                                 RealRange{0, 1}));
      policy.low_utility_threshold = x;
      if (colon != std::string::npos) {
        SKILLDB_ASSIGN_OR_RETURN(
            policy.low_utility_min_applied,
            ParseUnsignedArg("policy low-utility's MIN_APPLIED",
                             value.substr(colon + 1), IntRange{0}));
      }
    } else if (key == "unused" && !value.empty()) {
      SKILLDB_ASSIGN_OR_RETURN(
          uint64_t k, ParseUnsignedArg("policy unused", value, IntRange{1}));
      policy.unused_versions = k;
    } else if (key == "near-duplicates" && !value.empty()) {
      SKILLDB_ASSIGN_OR_RETURN(
          double j, ParseRealArg("policy near-duplicates", value,
                                 {.min = 0, .max = 1, .exclusive_min = true}));
      policy.near_duplicate_jaccard = j;
    } else {
      return Status::InvalidArgument("unknown prune policy '" +
                                     EscapeLine(item) +
                                     "' (expected low-utility=X[:MIN_APPLIED], "
                                     "superseded, unused=VERSIONS, "
                                     "near-duplicates=JACCARD)");
    }
  }
  if (items.empty()) {
    return Status::InvalidArgument(
        "give at least one --policy (see skilldb prune --help)");
  }
  return policy;
}

}  // namespace

int RunPrune(const GlobalArgs& g, const PruneArgs& a, const Io& io) {
  auto policy = ParsePrunePolicy(a.policy);
  if (!policy.ok()) return Fail(g, io, policy.status());
  auto library = OpenLibrary(g, /*read_only=*/!a.apply, io);
  if (!library.ok()) return Fail(g, io, library.status());
  auto plan = (*library)->PlanPrune(*policy);
  if (!plan.ok()) return Fail(g, io, plan.status());
  std::optional<Version> version;
  if (a.apply && !plan->empty()) {
    CommitOptions o;
    o.message = a.message;
    o.author = a.author;
    auto v = (*library)->ApplyPrune(*plan, o);
    if (!v.ok()) return Fail(g, io, v.status());
    version = *v;
  }
  if (g.json) {
    Json actions = Json::array();
    for (const PruneAction& p : *plan) actions.push_back(AsJson(p));
    Json j{{"applied", version.has_value()}, {"actions", actions}};
    j["version"] = version ? Json(*version) : Json(nullptr);
    PrintJson(io, j);
    return kExitOk;
  }
  for (const PruneAction& p : *plan) {
    *io.out << (version ? "pruned " : "would prune ") << EscapeLine(p.id)
            << "\n";
    for (const auto& r : p.reasons) {
      *io.out << "    - " << EscapeLine(r) << "\n";
    }
  }
  if (plan->empty()) {
    *io.out << "nothing to prune\n";
  } else if (version) {
    *io.out << plan->size() << " skill(s) pruned as version " << *version
            << " (undo with `skilldb revert " << *version << "`)\n";
  } else {
    *io.out << plan->size()
            << " skill(s) would be pruned; run again with --apply\n";
  }
  return kExitOk;
}

}  // namespace skilldb::cli
