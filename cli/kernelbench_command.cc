// skilldb kernelbench import|eval|list: the commands of verify/kernelbench
// (kernelbench_commands.h), with this CLI's global options; run is
// kernelbench_run_command.cc's.
#include "context.h"
#include "skilldb/verify/kernelbench_commands.h"

namespace skilldb::cli {

int RunKernelbench(const GlobalArgs& g, const KernelbenchArgs& a, const Io& io) {
  namespace kb = verify::kb;
  kb::CommandIo kio{io.out, io.err, g.json, g.progress != ProgressMode::kOff};
  kb::RunnerOptions runner;
  runner.python = a.python;
  runner.device = a.device;
  runner.confine = !a.no_confine;
  runner.workers = a.workers;
  runner.gpus = a.gpus;
  if (a.action == "import") {
    kb::ImportCommandArgs i;
    i.path = a.path;
    i.store = a.store;
    i.level = a.level;
    i.problems = a.problems;
    i.precision = a.precision;
    i.max_screen_bytes = a.max_screen_bytes;
    i.jobs = a.import_jobs;
    i.runner = runner;
    i.cache = a.cache;
    i.bytecode_cache = !a.no_bytecode_cache;
    return kb::RunImportCommand(i, kio);
  }
  if (a.action == "list") {
    kb::ListCommandArgs l;
    l.store = a.store;
    l.level = a.level;
    return kb::RunListCommand(l, kio);
  }
  kb::EvalCommandArgs e;
  e.run_dir = a.path;
  e.store = a.store;
  e.level = a.level;
  e.problems = a.problems;
  e.results = a.results;
  e.backend = a.backend;
  e.runner = runner;
  auto protocol = kb::ParseProtocol(a.protocol);
  if (!protocol.ok()) return Fail(g, io, protocol.status());
  e.eval.protocol = *protocol;
  e.eval.precision = a.precision;
  e.eval.cache_dir = a.cache;
  e.eval.correctness_trials = a.trials;
  e.eval.rounds = a.rounds;
  e.eval.calls_per_round = a.calls;
  e.eval.kb_perf_trials = a.perf_trials;
  e.eval.build_jobs = a.build_jobs;
  e.eval.seed = a.seed;
  e.eval.credit_torch_ops = a.credit_torch_ops;
  e.eval.compile_baseline = !a.no_compile_baseline;
  e.eval.generic_caller = !a.no_generic_caller;
  e.eval.bytecode_cache = !a.no_bytecode_cache;
  if (a.action == "run") return RunKernelbenchRun(g, a, io, runner, e.eval);
  return kb::RunEvalCommand(e, kio);
}

#ifndef SKILLDB_CLI_AGENTS
int RunKernelbenchRun(const GlobalArgs& g, const KernelbenchArgs&, const Io& io,
                      const verify::kb::RunnerOptions&,
                      const verify::kb::EvalOptions&) {
  return Fail(g, io,
              Status::NotSupported(
                  "kernelbench run needs the agents (policy/, summarize/, "
                  "rerank/): this skilldb was built without them"));
}
#endif

}  // namespace skilldb::cli
