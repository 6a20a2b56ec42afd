// skilldb distill: the Skill Summary Agent on one stored trajectory.
#include "agent_commands.h"
#include "agent_setup.h"
#include "context.h"
#include "skilldb/summarize/summary_agent.h"

namespace skilldb::cli {

int RunDistill(const GlobalArgs& g, const DistillArgs& a, const Io& io) {
  if (a.attempts < 1) {
    return Fail(g, io,
                Status::InvalidArgument("--attempts must be at least 1"));
  }
  auto dedup = ParseDedupPolicy(a.dedup);
  if (!dedup.ok()) return Fail(g, io, dedup.status());
  // Writable (the run's record is stored) but never created: distilling
  // needs a trajectory the store already holds.
  auto store = OpenRollouts(ResolveRolloutsPath(g, a.rollouts_path),
                            /*read_only=*/false, /*create=*/false);
  if (!store.ok()) return Fail(g, io, store.status());
  auto t = (*store)->LoadTrajectory(a.id);
  if (!t.ok()) return Fail(g, io, t.status());
  auto verifier =
      MakeAgentVerifier(a.backend.empty() ? t->backend : a.backend, a.workers);
  if (!verifier.ok()) return Fail(g, io, verifier.status());
  auto task = policy::LoadPolicyTask((*verifier)->options(), t->task);
  if (!task.ok()) return Fail(g, io, task.status());
  auto backbone = MakeBackbone(a.llm, io);
  if (!backbone.ok()) return Fail(g, io, backbone.status());
  auto library = OpenLibrary(g, /*read_only=*/false, io);
  if (!library.ok()) return Fail(g, io, library.status());
  summarize::SummaryOptions options;
  options.max_attempts = a.attempts;
  options.proposal.dedup = *dedup;
  auto agent = summarize::SummaryAgent::Make(
      {backbone->get(), library->get(), verifier->get(), store->get()},
      options);
  if (!agent.ok()) return Fail(g, io, agent.status());
  // A solved trajectory is distilled into a skill; a failed one leaves
  // pitfall notes on the skills it used.
  auto rec = t->solved ? (*agent)->Distill(*t, *task)
                       : (*agent)->AttachPitfalls(*t, *task);
  if (!rec.ok()) return Fail(g, io, rec.status());
  if (g.json) {
    PrintJson(io, Json::parse(policy::ToJson(*rec)));
  } else {
    // Reasons and errors quote the model and the verifier: escaped.
    *io.out << rec->kind << " from " << EscapeLine(t->id) << ": "
            << EscapeLine(rec->outcome);
    if (!rec->skill_id.empty()) *io.out << " " << EscapeLine(rec->skill_id);
    if (rec->version > 0) *io.out << " at version " << rec->version;
    *io.out << "\n";
    for (const std::string& r : rec->reasons) {
      *io.out << "  - " << EscapeLine(r) << "\n";
    }
    // Why each answer was refused, not only with --json.
    if (rec->outcome == "invalid" || rec->outcome == "error") {
      for (size_t i = 0; i < rec->errors.size(); ++i) {
        if (rec->errors[i].empty()) continue;
        *io.out << "  attempt " << i + 1 << ": " << EscapeLine(rec->errors[i])
                << "\n";
      }
    }
  }
  return rec->outcome == "accepted" || rec->outcome == "attached"
             ? kExitOk
             : kExitUserError;
}

}  // namespace skilldb::cli
