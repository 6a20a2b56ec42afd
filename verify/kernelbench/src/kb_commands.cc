#include "skilldb/verify/kernelbench_commands.h"

#include <ostream>

#include "kb_internal.h"
#include "skilldb/util/clock.h"
#include "skilldb/util/exit_code.h"
#include "skilldb/util/text.h"

namespace skilldb::verify::kb {
namespace {

using internal::json;
using internal::Num;

int Fail(const CommandIo& io, const Status& s) {
  const int code = util::ExitCodeFor(s.code());
  if (io.json) {
    *io.err << internal::Dump({{"error", {{"code", std::string(StatusCodeName(s.code()))}, {"message", s.message()}}}})
            << "\n";
  } else {
    *io.err << "skilldb kernelbench: " << util::EscapeBlock(s.message()) << "\n";
  }
  return code;
}

std::function<void(const std::string&)> Progress(const CommandIo& io) {
  if (!io.progress) return nullptr;
  std::ostream* err = io.err;
  return [err](const std::string& line) { *err << util::EscapeBlock(line) << "\n" << std::flush; };
}

std::string StoreDir(const std::string& s) { return s.empty() ? TaskStore::DefaultDir() : s; }

json ProblemJson(const Problem& p) {
  return {{"level", p.level},
          {"id", p.id},
          {"name", p.name},
          {"code_hash", p.code_hash},
          {"precision", p.precision},
          {"tolerance", p.tolerance},
          {"input_bytes", p.input_bytes},
          {"flops", p.flops},
          {"inputs", internal::SpecsToJson(p.inputs)},
          {"degenerate", p.degenerate},
          {"degenerate_reason", p.degenerate_reason}};
}

}  // namespace

int RunImportCommand(const ImportCommandArgs& a, const CommandIo& io) {
  if (a.path.empty()) return Fail(io, Status::InvalidArgument("give the path of a KernelBench "
                                                              "checkout, level folder or problem"));
  auto store = TaskStore::Open(StoreDir(a.store));
  if (!store.ok()) return Fail(io, store.status());
  ImportOptions o;
  o.path = a.path;
  o.level = a.level;
  o.problems = a.problems;
  o.precision = a.precision;
  o.max_screen_bytes = a.max_screen_bytes;
  o.jobs = a.jobs;
  o.runner = a.runner;
  if (a.bytecode_cache) {
    EvalOptions e;
    e.cache_dir = a.cache;
    o.bytecode_dir =
        verify::internal::JoinPath(internal::CacheRoot(e), "pycache");
  }
  o.progress = Progress(io);
  auto s = ImportProblems(o, &*store);
  if (!s.ok()) return Fail(io, s.status());
  if (io.json) {
    json imported = json::array(), skipped = json::array();
    for (const Problem& p : s->imported) imported.push_back(ProblemJson(p));
    for (const Unimportable& u : s->skipped) {
      skipped.push_back({{"level", u.level}, {"id", u.id}, {"file", u.file}, {"reason", u.reason}});
    }
    *io.out << internal::Dump({{"store", store->dir()}, {"imported", imported},
                               {"not_imported", skipped}})
            << "\n";
  } else {
    int degenerate = 0;
    for (const Problem& p : s->imported) degenerate += p.degenerate == "yes" ? 1 : 0;
    *io.out << "imported " << s->imported.size() << " problems into " << store->dir() << " ("
            << degenerate << " degenerate)\n";
    for (const Problem& p : s->imported) {
      if (p.degenerate == "yes") {
        *io.out << "  degenerate: level " << p.level << " problem " << p.id << " (" << p.name
                << "): " << util::EscapeBlock(p.degenerate_reason) << "\n";
      }
    }
    if (!s->skipped.empty()) *io.out << "not imported: " << s->skipped.size() << "\n";
    for (const Unimportable& u : s->skipped) {
      *io.out << "  level " << u.level << " " << util::EscapeBlock(u.file) << ": "
              << util::EscapeBlock(u.reason.substr(0, 400)) << "\n";
    }
  }
  return 0;
}

int RunEvalCommand(const EvalCommandArgs& a, const CommandIo& io) {
  if (a.run_dir.empty()) return Fail(io, Status::InvalidArgument("give the run directory"));
  auto store = TaskStore::Open(StoreDir(a.store));
  if (!store.ok()) return Fail(io, store.status());
  const auto made = util::SteadyClock::now();
  auto ev = Evaluator::Make(a.runner, a.eval);
  if (!ev.ok()) return Fail(io, ev.status());
  RunOptions o;
  o.run_dir = a.run_dir;
  o.level = a.level;
  o.problems = a.problems;
  o.results_path = a.results;
  o.declared_backend = a.backend;
  o.progress = Progress(io);
  // The run's edges, on stderr with the answers' lines: making the
  // evaluator, and stopping it (its runners ended, its build threads
  // joined) after the report is out.
  if (o.progress)
    o.progress("evaluator made in " +
               Num(util::MsSince(made) / 1000.0, "%.1f") + " s");
  auto report = EvaluateRunDir(o, ev->get(), *store);
  if (!report.ok()) return Fail(io, report.status());
  if (io.json) {
    *io.out << RunReportToJson(*report) << "\n";
  } else {
    *io.out << util::EscapeBlock(FormatRunReport(*report));
  }
  io.out->flush();
  const auto stopping = util::SteadyClock::now();
  ev->reset();
  if (o.progress) {
    o.progress("evaluator stopped in " +
               Num(util::MsSince(stopping) / 1000.0, "%.1f") + " s");
  }
  return 0;
}

int RunListCommand(const ListCommandArgs& a, const CommandIo& io) {
  auto store = TaskStore::Open(StoreDir(a.store));
  if (!store.ok()) return Fail(io, store.status());
  auto problems = store->List(a.level);
  if (!problems.ok()) return Fail(io, problems.status());
  auto bad = store->ListUnimportable(a.level);
  if (!bad.ok()) return Fail(io, bad.status());
  if (io.json) {
    json ps = json::array(), bs = json::array();
    for (const Problem& p : *problems) ps.push_back(ProblemJson(p));
    for (const Unimportable& u : *bad) {
      bs.push_back({{"level", u.level}, {"id", u.id}, {"file", u.file}, {"reason", u.reason}});
    }
    *io.out << internal::Dump({{"store", store->dir()}, {"problems", ps}, {"not_imported", bs}})
            << "\n";
    return 0;
  }
  for (const Problem& p : *problems) {
    *io.out << "level" << p.level << "/" << p.id << "\t" << util::EscapeBlock(p.name) << "\t"
            << p.precision << "\t" << (p.degenerate == "yes" ? "degenerate" : "") << "\n";
  }
  for (const Unimportable& u : *bad) {
    *io.out << "level" << u.level << "/" << u.id << "\t" << util::EscapeBlock(u.file)
            << "\tnot imported: " << util::EscapeBlock(u.reason.substr(0, 200)) << "\n";
  }
  return 0;
}

}  // namespace skilldb::verify::kb
