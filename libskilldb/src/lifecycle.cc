// Lifecycle changes: status updates, reverting a commit, and pruning.
#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>

#include "dedup.h"
#include "library_impl.h"

namespace skilldb::internal {
namespace {

std::string Fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

CommitOptions WithKind(const CommitOptions& options, const char* kind) {
  CommitOptions o = options;
  if (o.kind.empty()) o.kind = kind;
  return o;
}

// Union-find over indices, for near-duplicate clusters.
struct DisjointSets {
  explicit DisjointSets(size_t n) : parent(n) {
    std::iota(parent.begin(), parent.end(), size_t{0});
  }
  size_t Find(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void Join(size_t a, size_t b) { parent[Find(a)] = Find(b); }
  std::vector<size_t> parent;
};

}  // namespace

Result<Version> LibraryImpl::SetStatus(const std::vector<std::string>& ids,
                                       SkillStatus status,
                                       const CommitOptions& options) {
  if (ids.empty()) return Status::InvalidArgument("no skills given");
  auto s = state();
  std::vector<Skill> puts;
  for (const std::string& id : ids) {
    SKILLDB_ASSIGN_OR_RETURN(Skill skill,
                             Get(id, ReadOptions{.as_of = s->head}));
    if (skill.status == status) continue;
    skill.status = status;
    puts.push_back(std::move(skill));
  }
  if (puts.empty()) {
    return Status::InvalidArgument(
        std::string("every listed skill is already ") +
        std::string(SkillStatusName(status)));
  }
  CommitOptions o = WithKind(options, "status");
  const Version base = s->head;
  auto user_precondition = options.precondition;
  // The skills were read at `base`: refuse to overwrite a newer revision.
  o.precondition = [&, base](Version head) -> Status {
    if (head != base) {
      return Status::Aborted(
          "the library moved while the status change was prepared");
    }
    return user_precondition ? user_precondition(head) : Status::Ok();
  };
  return Commit(puts, {}, o);
}

Result<Version> LibraryImpl::Revert(Version version,
                                    const CommitOptions& options) {
  auto s = state();
  if (version == 0 || version > s->head) {
    return Status::NotFound("version " + std::to_string(version) +
                            " does not exist");
  }
  if (version - 1 > 0 && !s->Retained(version - 1)) {
    return Status::NotFound(
        "version " + std::to_string(version - 1) +
        " (before the commit to revert) is no longer retained");
  }
  SKILLDB_ASSIGN_OR_RETURN(auto changes, CommitChanges(version));
  std::vector<Skill> puts;
  std::vector<std::string> deletes;
  for (const Change& c : changes) {
    SKILLDB_ASSIGN_OR_RETURN(auto before, ReadRevision(*s, c.id, version - 1));
    SKILLDB_ASSIGN_OR_RETURN(auto now, ReadRevision(*s, c.id, s->head));
    const bool had = before && before->kind == RevisionKind::kPut;
    const bool has = now && now->kind == RevisionKind::kPut;
    if (had) {
      if (has && now->skill_json == before->skill_json) continue;
      SKILLDB_ASSIGN_OR_RETURN(Skill skill, ParseSkillJson(before->skill_json));
      puts.push_back(std::move(skill));
    } else if (has) {
      deletes.push_back(c.id);
    }
  }
  if (puts.empty() && deletes.empty()) {
    return Status::InvalidArgument(
        "the head already matches the state before version " +
        std::to_string(version));
  }
  CommitOptions o = WithKind(options, "revert");
  if (o.message.empty())
    o.message = "revert version " + std::to_string(version);
  const Version base = s->head;
  o.precondition = [base](Version head) {
    return head == base
               ? Status::Ok()
               : Status::Aborted(
                     "the library moved while the revert was prepared");
  };
  return Commit(puts, deletes, o);
}

Result<std::vector<PruneAction>> LibraryImpl::PlanPrune(
    const PrunePolicy& policy) {
  auto s = state();
  const Version head = s->head;
  std::vector<Skill> live;
  SKILLDB_RETURN_IF_ERROR(
      Scan(ReadOptions{.as_of = head}, [&](const Skill& skill) {
        if (skill.status != SkillStatus::kPruned) live.push_back(skill);
        return true;
      }));
  std::map<std::string, UsageCounters> usage;
  SKILLDB_RETURN_IF_ERROR(
      ScanUsage([&](const std::string& id, const UsageCounters& c) {
        usage[id] = c;
        return true;
      }));
  // First retained revision of each skill: its age, for "unused" and ties.
  std::map<std::string, Version> first_seen;
  SKILLDB_RETURN_IF_ERROR(
      ScanRevisions([&](const std::string& id, const Revision& rev) {
        first_seen[id] = rev.version;  // revisions come newest first
        return true;
      }));
  std::map<std::string, std::vector<std::string>> reasons;
  std::map<std::string, std::string> superseded_by;
  for (const Skill& skill : live) {
    for (const std::string& old : skill.lineage.supersedes)
      superseded_by[old] = skill.id;
  }
  for (const Skill& skill : live) {
    const UsageCounters& u = usage[skill.id];
    if (policy.low_utility_threshold) {
      const uint64_t applied = u.count(UsageEvent::kApplied);
      if (applied >= policy.low_utility_min_applied &&
          u.utility() < *policy.low_utility_threshold) {
        reasons[skill.id].push_back("utility " + Fixed2(u.utility()) + " < " +
                                    Fixed2(*policy.low_utility_threshold) +
                                    " after " + std::to_string(applied) +
                                    " applications");
      }
    }
    if (policy.superseded) {
      if (skill.status == SkillStatus::kDeprecated) {
        reasons[skill.id].push_back("deprecated");
      } else if (auto it = superseded_by.find(skill.id);
                 it != superseded_by.end()) {
        reasons[skill.id].push_back("superseded by '" + it->second + "'");
      }
    }
    if (policy.unused_versions) {
      const Version last = std::max(u.last_used_version, first_seen[skill.id]);
      if (head >= last && head - last >= *policy.unused_versions) {
        reasons[skill.id].push_back("unused for " +
                                    std::to_string(head - last) +
                                    " versions (last activity at version " +
                                    std::to_string(last) + ")");
      }
    }
  }
  if (policy.near_duplicate_jaccard) {
    ProposalOptions near;
    near.near_duplicate_jaccard = *policy.near_duplicate_jaccard;
    near.near_duplicate_candidates = 10;
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < live.size(); ++i) index[live[i].id] = i;
    DisjointSets sets(live.size());
    std::map<std::pair<size_t, size_t>, double> similarity;
    for (size_t i = 0; i < live.size(); ++i) {
      SKILLDB_ASSIGN_OR_RETURN(auto dups, FindDuplicates(*s, live[i], near));
      for (const DuplicateMatch& d : dups) {
        auto j = index.find(d.id);
        if (j == index.end() || j->second == i) continue;
        sets.Join(i, j->second);
        similarity[{std::min(i, j->second), std::max(i, j->second)}] =
            d.jaccard;
      }
    }
    // Best member: highest utility, then most evidence, then oldest, then id.
    auto better = [&](size_t a, size_t b) {
      const double ua = usage[live[a].id].utility(),
                   ub = usage[live[b].id].utility();
      if (ua != ub) return ua > ub;
      if (live[a].evidence_json.size() != live[b].evidence_json.size()) {
        return live[a].evidence_json.size() > live[b].evidence_json.size();
      }
      if (first_seen[live[a].id] != first_seen[live[b].id]) {
        return first_seen[live[a].id] < first_seen[live[b].id];
      }
      return live[a].id < live[b].id;
    };
    std::map<size_t, size_t> best;
    for (size_t i = 0; i < live.size(); ++i) {
      const size_t root = sets.Find(i);
      auto [it, fresh] = best.emplace(root, i);
      if (!fresh && better(i, it->second)) it->second = i;
    }
    for (size_t i = 0; i < live.size(); ++i) {
      const size_t keep = best[sets.Find(i)];
      if (keep == i) continue;
      auto sim = similarity.find({std::min(i, keep), std::max(i, keep)});
      reasons[live[i].id].push_back(
          "near duplicate of '" + live[keep].id + "', which is kept" +
          (sim != similarity.end() ? " (Jaccard " + Fixed2(sim->second) + ")"
                                   : ""));
    }
  }
  std::vector<PruneAction> plan;
  plan.reserve(reasons.size());
  for (auto& [id, why] : reasons)
    plan.push_back(PruneAction{id, std::move(why)});
  return plan;
}

Result<Version> LibraryImpl::ApplyPrune(const std::vector<PruneAction>& actions,
                                        const CommitOptions& options) {
  if (actions.empty()) return Status::InvalidArgument("nothing to prune");
  std::vector<std::string> ids;
  ids.reserve(actions.size());
  for (const PruneAction& a : actions) ids.push_back(a.id);
  CommitOptions o = WithKind(options, "prune");
  if (o.message.empty())
    o.message = "prune " + std::to_string(ids.size()) + " skills";
  return SetStatus(ids, SkillStatus::kPruned, o);
}

}  // namespace skilldb::internal
