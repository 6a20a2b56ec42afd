// skilldb_kernelbench: the kernelbench commands where the skilldb CLI
// cannot be built (the GPU machine builds verify/ alone). Same library,
// same options as `skilldb kernelbench`.
//
//   skilldb_kernelbench import PATH [--level L] [--problems LIST] [options]
//   skilldb_kernelbench eval RUN_DIR [--protocol skilldb|kernelbench] [options]
//   skilldb_kernelbench list [--level L]
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "skilldb/verify/kernelbench_commands.h"

namespace {

using namespace skilldb::verify::kb;

constexpr char kUsage[] =
    "usage: skilldb_kernelbench import PATH | eval RUN_DIR | list [options]\n"
    "common: --store DIR --level L --problems 1-20,33 --json --no-progress\n"
    "        --python PY --device cuda|cpu --no-confine --scratch DIR\n"
    "import: --precision fp32|fp16|bf16 --max-screen-bytes N --jobs N\n"
    "        --cache DIR --no-bytecode-cache\n"
    "eval:   --protocol skilldb|kernelbench --precision P --backend "
    "cuda|triton\n"
    "        --results FILE --cache DIR --trials N --rounds N --calls N\n"
    "        --perf-trials N --credit-torch-ops --no-compile-baseline\n"
    "        --build-jobs N --seed N --no-light-include --no-split\n"
    "        --no-generic-caller --no-bytecode-cache --workers N\n"
    "        --gpus N\n";

struct Parsed {
  std::string command, positional;
  std::map<std::string, std::string> values;
  std::map<std::string, bool> flags;
};

bool IsFlag(const std::string& k) {
  return k == "--json" || k == "--no-progress" || k == "--no-confine" ||
         k == "--credit-torch-ops" || k == "--no-compile-baseline" ||
         k == "--no-light-include" || k == "--no-split" ||
         k == "--no-generic-caller" || k == "--no-bytecode-cache";
}

int Usage(const std::string& why) {
  std::cerr << "skilldb_kernelbench: " << why << "\n" << kUsage;
  return 1;
}

bool Number(const std::map<std::string, std::string>& v, const char* key, long long lo,
            long long hi, long long* out, std::string* err) {
  auto it = v.find(key);
  if (it == v.end()) return true;
  char* end = nullptr;
  const long long n = std::strtoll(it->second.c_str(), &end, 10);
  if (end == it->second.c_str() || *end != '\0' || n < lo || n > hi) {
    *err = std::string(key) + " must be a number in " + std::to_string(lo) + ".." +
           std::to_string(hi) + ", not '" + it->second + "'";
    return false;
  }
  *out = n;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage("give a command");
  Parsed p;
  p.command = argv[1];
  if (p.command == "--help" || p.command == "-h") {
    std::cout << kUsage;
    return 0;
  }
  for (int i = 2; i < argc; ++i) {
    const std::string k = argv[i];
    if (k.rfind("--", 0) == 0) {
      if (IsFlag(k)) {
        p.flags[k] = true;
      } else if (i + 1 < argc) {
        p.values[k] = argv[++i];
      } else {
        return Usage(k + " needs a value");
      }
    } else if (p.positional.empty()) {
      p.positional = k;
    } else {
      return Usage("unexpected argument '" + k + "'");
    }
  }
  CommandIo io{&std::cout, &std::cerr, p.flags.count("--json") > 0,
               p.flags.count("--no-progress") == 0};
  RunnerOptions runner;
  if (p.values.count("--python")) runner.python = p.values["--python"];
  if (p.values.count("--device")) runner.device = p.values["--device"];
  if (p.values.count("--scratch")) runner.scratch_root = p.values["--scratch"];
  runner.confine = p.flags.count("--no-confine") == 0;
  std::string err;
  long long workers = 1;
  if (!Number(p.values, "--workers", 1, 64, &workers, &err)) return Usage(err);
  runner.workers = static_cast<int>(workers);
  long long gpus = 1;
  if (!Number(p.values, "--gpus", 1, 64, &gpus, &err)) return Usage(err);
  runner.gpus = static_cast<int>(gpus);
  long long level = 0;
  if (!Number(p.values, "--level", 1, 99, &level, &err)) return Usage(err);
  const std::string store = p.values.count("--store") ? p.values["--store"] : "";
  const std::string problems = p.values.count("--problems") ? p.values["--problems"] : "";
  const std::string precision =
      p.values.count("--precision") ? p.values["--precision"] : "fp32";
  if (p.command == "import") {
    ImportCommandArgs a;
    a.path = p.positional;
    a.store = store;
    a.level = static_cast<int>(level);
    a.problems = problems;
    a.precision = precision;
    a.runner = runner;
    if (p.values.count("--cache")) a.cache = p.values["--cache"];
    a.bytecode_cache = p.flags.count("--no-bytecode-cache") == 0;
    long long cap = a.max_screen_bytes;
    if (!Number(p.values, "--max-screen-bytes", 0, 1LL << 46, &cap, &err)) return Usage(err);
    a.max_screen_bytes = cap;
    long long jobs = 0;
    if (!Number(p.values, "--jobs", 0, 64, &jobs, &err)) return Usage(err);
    a.jobs = static_cast<int>(jobs);
    return RunImportCommand(a, io);
  }
  if (p.command == "list") {
    ListCommandArgs a;
    a.store = store;
    a.level = static_cast<int>(level);
    return RunListCommand(a, io);
  }
  if (p.command != "eval") return Usage("unknown command '" + p.command + "'");
  EvalCommandArgs a;
  a.run_dir = p.positional;
  a.store = store;
  a.level = static_cast<int>(level);
  a.problems = problems;
  a.results = p.values.count("--results") ? p.values["--results"] : "";
  a.backend = p.values.count("--backend") ? p.values["--backend"] : "";
  a.runner = runner;
  EvalOptions& e = a.eval;
  e.precision = precision;
  if (p.values.count("--protocol")) {
    auto proto = ParseProtocol(p.values["--protocol"]);
    if (!proto.ok()) return Usage(proto.status().message());
    e.protocol = *proto;
  }
  if (p.values.count("--cache")) e.cache_dir = p.values["--cache"];
  long long trials = e.correctness_trials, rounds = e.rounds, calls = e.calls_per_round,
            perf = e.kb_perf_trials, jobs = e.build_jobs, seed = 0;
  if (!Number(p.values, "--trials", 1, 100, &trials, &err) ||
      !Number(p.values, "--rounds", 1, 100, &rounds, &err) ||
      !Number(p.values, "--calls", 1, 10000, &calls, &err) ||
      !Number(p.values, "--perf-trials", 1, 10000, &perf, &err) ||
      !Number(p.values, "--build-jobs", 0, 1024, &jobs, &err) ||
      !Number(p.values, "--seed", 0, (1LL << 62), &seed, &err)) {
    return Usage(err);
  }
  e.correctness_trials = static_cast<int>(trials);
  e.rounds = static_cast<int>(rounds);
  e.calls_per_round = static_cast<int>(calls);
  e.kb_perf_trials = static_cast<int>(perf);
  e.build_jobs = static_cast<int>(jobs);
  e.seed = static_cast<uint64_t>(seed);
  e.credit_torch_ops = p.flags.count("--credit-torch-ops") > 0;
  e.compile_baseline = p.flags.count("--no-compile-baseline") == 0;
  e.light_cuda_include = p.flags.count("--no-light-include") == 0;
  e.split_cuda = p.flags.count("--no-split") == 0;
  e.generic_caller = p.flags.count("--no-generic-caller") == 0;
  e.bytecode_cache = p.flags.count("--no-bytecode-cache") == 0;
  return RunEvalCommand(a, io);
}
