#include <charconv>

#include "context.h"

namespace skilldb::cli {
namespace {

template <typename T>
Result<T> Number(const std::string& item, std::string_view text) {
  T v{};
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) {
    return Status::InvalidArgument("policy '" + item + "' has a bad number '" +
                                   std::string(text) + "'");
  }
  return v;
}

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
      SKILLDB_ASSIGN_OR_RETURN(double x,
                               Number<double>(item, value.substr(0, colon)));
      policy.low_utility_threshold = x;
      if (colon != std::string::npos) {
        SKILLDB_ASSIGN_OR_RETURN(
            policy.low_utility_min_applied,
            Number<uint64_t>(item, value.substr(colon + 1)));
      }
    } else if (key == "unused" && !value.empty()) {
      SKILLDB_ASSIGN_OR_RETURN(uint64_t k, Number<uint64_t>(item, value));
      policy.unused_versions = k;
    } else if (key == "near-duplicates" && !value.empty()) {
      SKILLDB_ASSIGN_OR_RETURN(double j, Number<double>(item, value));
      if (!(j > 0 && j <= 1)) {
        return Status::InvalidArgument(
            "near-duplicates threshold must be in (0, 1]");
      }
      policy.near_duplicate_jaccard = j;
    } else {
      return Status::InvalidArgument("unknown prune policy '" + item +
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
    *io.out << (version ? "pruned " : "would prune ") << p.id << "\n";
    for (const auto& r : p.reasons) *io.out << "    - " << r << "\n";
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
