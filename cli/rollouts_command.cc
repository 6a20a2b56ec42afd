// skilldb rollouts list|show|export: reading the rollout store.
#include <fstream>

#include "agent_commands.h"
#include "agent_setup.h"
#include "context.h"

namespace skilldb::cli {
namespace {

Result<policy::ListOptions> ListFrom(const RolloutsArgs& a) {
  policy::ListOptions o;
  o.task = a.task;
  o.group = a.group;
  o.limit = a.limit;
  if (a.solved == "yes") {
    o.solved = true;
  } else if (a.solved == "no") {
    o.solved = false;
  } else if (!a.solved.empty()) {
    return Status::InvalidArgument("--solved must be yes or no");
  }
  return o;
}

Json SummaryJson(const policy::TrajectorySummary& t) {
  return Json{{"id", t.id},
              {"task", t.task},
              {"group", t.group},
              {"backend", t.backend},
              {"model", t.model},
              {"status", t.status},
              {"solved", t.solved},
              {"turns", t.turns_done},
              {"samples_per_turn", t.samples_per_turn},
              {"best_reward", t.best_reward},
              {"best_speedup", t.best_speedup},
              {"library_version", t.library_version},
              {"started_ms", t.started_ms},
              {"finished_ms", t.finished_ms}};
}

int List(const GlobalArgs& g, const RolloutsArgs& a, const Io& io,
         policy::RolloutStore& store) {
  auto o = ListFrom(a);
  if (!o.ok()) return Fail(g, io, o.status());
  auto rows = store.List(*o);
  if (!rows.ok()) return Fail(g, io, rows.status());
  if (g.json) {
    Json out = Json::array();
    for (const auto& t : *rows) out.push_back(SummaryJson(t));
    PrintJson(io, out);
    return kExitOk;
  }
  for (const auto& t : *rows) {
    *io.out << EscapeLine(t.id) << "  " << FormatTime(t.started_ms) << "  "
            << EscapeLine(t.task) << "  " << EscapeLine(t.status) << "  "
            << (t.solved ? "solved" : "-")
            << "  turns " << t.turns_done << "  reward "
            << FormatScore(t.best_reward) << "\n";
  }
  return kExitOk;
}

int Show(const GlobalArgs& g, const RolloutsArgs& a, const Io& io,
         policy::RolloutStore& store) {
  if (a.id.empty()) {
    return Fail(g, io, Status::InvalidArgument("rollouts show needs an id"));
  }
  auto t = store.LoadTrajectory(a.id);
  if (!t.ok()) return Fail(g, io, t.status());
  auto d = store.Distillations(a.id);
  if (!d.ok()) return Fail(g, io, d.status());
  Json out = Json::parse(policy::ToJson(*t));
  out["distillations"] = Json::array();
  for (const auto& rec : *d)
    out["distillations"].push_back(Json::parse(policy::ToJson(rec)));
  if (g.json) {
    PrintJson(io, out);
    return kExitOk;
  }
  *io.out << EscapeLine(t->id) << ": " << EscapeLine(t->task) << " on "
          << EscapeLine(t->backend) << ", " << EscapeLine(t->status)
          << (t->solved ? ", solved" : "") << "\n";
  if (!t->error.empty()) *io.out << "error: " << EscapeLine(t->error) << "\n";
  for (const policy::TurnRecord& turn : t->turns) {
    *io.out << "turn " << turn.turn + 1 << " (library v"
            << turn.selection.library_version << ", skills:";
    for (const auto& s : turn.selection.selected) {
      *io.out << " " << EscapeLine(s.id);
    }
    *io.out << ")\n";
    for (const policy::SampleRecord& s : turn.samples) {
      *io.out << "  sample " << s.index + 1 << ": "
              << policy::SampleVerdictName(s.verdict) << ", reward "
              << FormatScore(s.reward) << "\n";
    }
  }
  for (const auto& rec : *d) {
    *io.out << "distillation " << EscapeLine(rec.id) << " ("
            << EscapeLine(rec.kind) << "): " << EscapeLine(rec.outcome)
            << (rec.skill_id.empty() ? "" : " " + EscapeLine(rec.skill_id))
            << "\n";
  }
  return kExitOk;
}

// One line per model call, as the trainer's SFT reader takes them.
void GenerationLines(const policy::Trajectory& t,
                     const std::vector<policy::DistillationRecord>& ds,
                     std::ostream& out) {
  auto line = [&](const char* agent, int turn, int sample,
                  const GenerationRecord& g, const Json& extra) {
    Json j{{"agent", agent},
           {"trajectory_id", t.id},
           {"task", t.task},
           {"turn", turn},
           {"sample", sample}};
    j.update(Json::parse(ToJson(g)));
    j.update(extra);
    out << util::DumpLossy(j) << "\n";
  };
  for (const policy::TurnRecord& turn : t.turns) {
    for (const GenerationRecord& g : turn.selection.generations)
      line("selection", turn.turn, -1, g, Json{{"reward", turn.reward}});
    for (const policy::SampleRecord& s : turn.samples) {
      line(
          "policy", turn.turn, s.index, s.generation,
          Json{{"reward", s.reward},
               {"verdict", std::string(policy::SampleVerdictName(s.verdict))}});
    }
  }
  for (const policy::DistillationRecord& d : ds) {
    for (size_t i = 0; i < d.generations.size(); ++i) {
      line("summary", -1, static_cast<int>(i), d.generations[i],
           Json{{"outcome", d.outcome},
                {"kind", d.kind},
                {"error", i < d.errors.size() ? d.errors[i] : ""}});
    }
  }
}

int Export(const GlobalArgs& g, const RolloutsArgs& a, const Io& io,
           policy::RolloutStore& store) {
  if (a.format != "trajectories" && a.format != "generations") {
    return Fail(g, io,
                Status::InvalidArgument(
                    "--format must be trajectories or generations"));
  }
  auto o = ListFrom(a);
  if (!o.ok()) return Fail(g, io, o.status());
  std::ofstream file;
  std::ostream* out = io.out;
  if (!a.output.empty()) {
    file.open(a.output, std::ios::binary | std::ios::trunc);
    if (!file) {
      return Fail(g, io, Status::IOError("cannot write '" + a.output + "'"));
    }
    out = &file;
  }
  size_t n = 0;
  Status failed;
  Status st = store.Scan(*o, [&](const policy::Trajectory& t) {
    ++n;
    if (a.format == "trajectories") {
      *out << policy::ToJson(t) << "\n";
      return true;
    }
    auto ds = store.Distillations(t.id);
    if (!ds.ok()) {
      failed = ds.status();
      return false;
    }
    GenerationLines(t, *ds, *out);
    return true;
  });
  if (st.ok()) st = failed;
  if (st.ok() && !*out) st = Status::IOError("error writing the export");
  if (!st.ok()) return Fail(g, io, st);
  if (!a.output.empty()) {
    *io.err << "skilldb: exported " << n << " trajectories to '"
            << EscapeLine(a.output) << "'\n";
  }
  return kExitOk;
}

}  // namespace

int RunRollouts(const GlobalArgs& g, const RolloutsArgs& a, const Io& io) {
  auto store = OpenRollouts(ResolveRolloutsPath(g, a.rollouts_path),
                            /*read_only=*/true);
  if (!store.ok()) return Fail(g, io, store.status());
  if (a.action == "list") return List(g, a, io, **store);
  if (a.action == "show") return Show(g, a, io, **store);
  if (a.action == "export") return Export(g, a, io, **store);
  return Fail(
      g, io, Status::InvalidArgument("rollouts needs list, show ID or export"));
}

}  // namespace skilldb::cli
