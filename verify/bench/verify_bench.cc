// skilldb_verify_bench: drives the verifier for the GPU suite
// (scripts/gpu_suite.sh) and for ad-hoc checks.
//
//   skilldb_verify_bench verify --task T --candidate F [--backend cuda|host]
//       [--baseline F] [--rounds N] [--calls N] [--seed S] [--json FILE]
//   skilldb_verify_bench candidates [--tasks a,b] [--only PREFIX] [--no-screen]
//   skilldb_verify_bench fp --trials 200 [--tasks a,b] [--tau 1.05]
//   skilldb_verify_bench power --trials 200 [--tasks a,b] [--slowdown 0.3]
//   skilldb_verify_bench throughput [--tasks a,b] [--cache DIR]
//   skilldb_verify_bench describe
//   skilldb_verify_bench precompile [--threads 8] [--tasks a,b]
//
// Common: --backend (default host), --json FILE, --cache DIR, --workers N,
// --no-confine (worker sandbox and compiler namespaces off, for measuring),
// --compile-memory-mib N (each compiler process's address space).
#include <cstdio>
#include <cstring>
#include <string>

#include "bench_modes.h"

int main(int argc, char** argv) {
  using namespace skilldb::verify::bench;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s verify|candidates|fp|power|throughput|describe "
                 "[--flag value ...]\n", argv[0]);
    return 2;
  }
  Args args;
  args.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string key = argv[i];
    if (key.rfind("--", 0) != 0) {
      std::fprintf(stderr, "unexpected argument '%s'\n", argv[i]);
      return 2;
    }
    key = key.substr(2);
    if (i + 1 < argc && std::strncmp(argv[i + 1], "--", 2) != 0) {
      args.values[key] = argv[++i];
    } else {
      args.values[key] = "";
    }
  }
  if (args.mode == "verify") return RunVerify(args);
  if (args.mode == "candidates") return RunCandidates(args);
  if (args.mode == "fp") return RunFalsePositives(args);
  if (args.mode == "power") return RunPower(args);
  if (args.mode == "throughput") return RunThroughput(args);
  if (args.mode == "describe") return RunDescribe(args);
  if (args.mode == "precompile") return RunPrecompile(args);
  std::fprintf(stderr, "unknown mode '%s'\n", args.mode.c_str());
  return 2;
}
