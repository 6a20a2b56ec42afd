// skilldb kernelbench run OUT_DIR: the Policy Agent on KernelBench problems
// through any OpenAI-compatible server, or a checkpoint run in process
// (--local-model, in skilldb-ml) (policy/kernelbench_run.h), each
// answer verified by the KernelBench evaluator as it arrives; ends with
// kernelbench eval's table over the generation layout it wrote.
#include <algorithm>
#include <iostream>
#include <utility>

#include "agent_setup.h"
#include "context.h"
#include "llm_options.h"
#include "skilldb/policy/kernelbench_run.h"
#include "skilldb/verify/kernelbench.h"

namespace skilldb::cli {
namespace {

namespace kb = verify::kb;

Status CheckRunArgs(const KernelbenchArgs& a) {
  if (a.path.empty()) {
    return Status::InvalidArgument(
        "kernelbench run needs OUT_DIR, the directory the answers go to");
  }
  if (a.level < 1) {
    return Status::InvalidArgument(
        "kernelbench run needs --level (1, 2, 3 or 4)");
  }
  if (!a.local_model.empty()) {
    // The server's options say nothing to a model run in process.
    const std::pair<bool, const char*> server_only[] = {
        {a.llm.url.has_value(), "--llm-url"},
        {a.llm.model.has_value(), "--llm-model"},
        {a.llm.key.has_value(), "--llm-key"},
        {a.llm.timeout_s > 0, "--llm-timeout"},
        {a.llm.retries.has_value(), "--llm-retries"},
        {!a.llm.native_n.empty(), "--llm-native-n"},
        {a.llm.max_in_flight > 0, "--llm-concurrency"},
        {a.llm.token_ids, "--llm-token-ids"}};
    for (const auto& [given, flag] : server_only) {
      if (given) {
        return Status::InvalidArgument(
            std::string("kernelbench run: --local-model runs the model in "
                        "process; ") +
            flag + " is for a server (give one of the two)");
      }
    }
  }
  return Status::Ok();
}

policy::KernelBenchFormat DefaultFormat(const KernelbenchArgs& a) {
  if (!a.format.empty()) return *policy::ParseKernelBenchFormat(a.format);
  return a.device == "cpu" ? policy::KernelBenchFormat::kCpp
                           : policy::KernelBenchFormat::kCuda;
}

// Everything the run borrows, alive until it ends.
struct RunRig {
  std::unique_ptr<Library> library;
  std::unique_ptr<policy::SkillSelector> selector;
  std::unique_ptr<llm::Backbone> backbone;
  std::unique_ptr<kb::Evaluator> evaluator;
};

Status BuildRig(const GlobalArgs& g, const KernelbenchArgs& a, const Io& io,
                const kb::RunnerOptions& runner, const kb::EvalOptions& eval,
                RunRig* r) {
  if (a.skills == "on") {
    auto lib = OpenLibrary(g, /*read_only=*/true, io);
    if (!lib.ok()) {
      return Status(lib.status().code(),
                    "--skills on reads the skill library: " +
                        std::string(lib.status().message()) +
                        " (--skills off runs without it)");
    }
    r->library = std::move(*lib);
    policy::SelectionOptions so;
    so.select_k = static_cast<size_t>(a.select_k);
    r->selector = std::make_unique<policy::Bm25Selector>(r->library.get(), so);
  }
  SKILLDB_ASSIGN_OR_RETURN(r->evaluator, kb::Evaluator::Make(runner, eval));
  if (r->backbone) return Status::Ok();  // --local-model
  llm::ClientConfig base;
  // Server answers are untrusted: a chat answer of one sample is far below
  // this; a server that sends more is refused without reading further.
  base.max_response_bytes = size_t{16} << 20;
  base.request_timeout_ms = 1800000;
  LlmClientArgs llm = a.llm;
  if (llm.max_in_flight == 0) llm.max_in_flight = std::max(8, a.concurrency);
  SKILLDB_ASSIGN_OR_RETURN(llm::ClientConfig config,
                           ResolveLlmConfig(llm, base, io));
  SKILLDB_ASSIGN_OR_RETURN(r->backbone, llm::OpenAiClient::Create(config));
  return Status::Ok();
}

}  // namespace

int RunKernelbenchRun(const GlobalArgs& g, const KernelbenchArgs& a,
                      const Io& io, const kb::RunnerOptions& runner,
                      const kb::EvalOptions& eval) {
  if (Status st = CheckRunArgs(a); !st.ok()) return Fail(g, io, st);
  RunRig rig;
  if (!a.local_model.empty()) {
    // skilldb hands the command to skilldb-ml here, before it has done
    // anything; skilldb-ml loads the checkpoint.
    auto local = OpenLocalModel(a.local_model, a.local_device);
    if (!local.ok()) return Fail(g, io, local.status());
    rig.backbone = std::move(*local);
  }
  auto store = kb::TaskStore::Open(a.store.empty() ? kb::TaskStore::DefaultDir()
                                                   : a.store);
  if (!store.ok()) return Fail(g, io, store.status());
  if (Status st = BuildRig(g, a, io, runner, eval, &rig); !st.ok())
    return Fail(g, io, st);
  policy::KernelBenchRunOptions o;
  o.out_dir = a.path;
  o.level = a.level;
  o.problems = a.problems;
  o.turns = a.turns;
  o.samples = a.samples;
  o.format = DefaultFormat(a);
  o.sampling.temperature = a.temperature;
  o.sampling.max_tokens = a.max_tokens;
  o.sampling.logprobs = false;
  o.concurrency = a.concurrency;
  o.selector = rig.selector.get();
  o.library = rig.library.get();
  if (rig.library) o.library_version = rig.library->CurrentVersion();
  if (g.progress != ProgressMode::kOff) {
    o.progress = [&io](const std::string& line) {
      *io.err << EscapeLine(line) << "\n";
    };
  }
  auto report = policy::RunKernelBench(o, rig.backbone.get(),
                                       rig.evaluator.get(), *store);
  if (!report.ok()) return Fail(g, io, report.status());
  if (g.json) {
    *io.out << policy::KernelBenchRunReportToJson(*report) << "\n";
  } else {
    *io.out << EscapeBlock(policy::FormatKernelBenchRunReport(*report));
  }
  return 0;
}

}  // namespace skilldb::cli
