// The measuring modes of skilldb_verify_bench (the GPU suite's driver and
// an ad-hoc verification tool). Each mode prints a table on stdout and, with
// --json FILE, writes its raw results.
#ifndef SKILLDB_VERIFY_BENCH_BENCH_MODES_H_
#define SKILLDB_VERIFY_BENCH_BENCH_MODES_H_

#include <map>
#include <string>
#include <vector>

#include "skilldb/verify/verify.h"

namespace skilldb::verify::bench {

// Parsed command line: the mode, --flags with values, and bare flags.
struct Args {
  std::string mode;
  std::map<std::string, std::string> values;
  std::string Get(const std::string& key, const std::string& def = "") const;
  int GetInt(const std::string& key, int def) const;
  double GetDouble(const std::string& key, double def) const;
  bool Has(const std::string& key) const { return values.count(key) > 0; }
};

// Builds verifier options from --backend, --cache, --no-screen, --tau,
// --workers, --rounds-min.
VerifierOptions OptionsFrom(const Args& args);

int RunVerify(const Args& args);      // one candidate file
int RunCandidates(const Args& args);  // every shipped candidate vs expectation
int RunFalsePositives(const Args& args);  // identical copy, many trials
int RunPower(const Args& args);       // a true ~1.3x speedup, many trials
int RunThroughput(const Args& args);  // candidates per minute, cold and warm
int RunDescribe(const Args& args);    // device and measured ceilings
int RunPrecompile(const Args& args);  // fill the compile cache in parallel

}  // namespace skilldb::verify::bench

#endif  // SKILLDB_VERIFY_BENCH_BENCH_MODES_H_
