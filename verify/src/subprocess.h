// Running a child program with a deadline, resource limits and captured
// output: used for the compilers (nvcc, g++), never for candidate code
// (candidates run in workers, see worker_client.h).
//
// Run() is safe to call from several threads at once.
#ifndef SKILLDB_VERIFY_SUBPROCESS_H_
#define SKILLDB_VERIFY_SUBPROCESS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::verify::internal {

struct RunOptions {
  std::vector<std::string> argv;  // argv[0] is the program (PATH searched)
  std::string cwd;                // "" = inherit
  double timeout_s = 60;          // wall clock; the process group is killed
  int64_t max_output_bytes = 1 << 20;  // stdout+stderr kept (rest dropped)
  int64_t cpu_limit_s = 0;        // RLIMIT_CPU per process; 0 = none
  int64_t file_size_limit_bytes = 0;  // RLIMIT_FSIZE; 0 = none
  std::vector<std::string> extra_env;  // "NAME=value" added to the env
};

struct RunResult {
  int exit_code = -1;    // valid when !signaled
  int term_signal = 0;   // nonzero when killed by a signal
  bool timed_out = false;
  std::string output;    // stdout and stderr interleaved, verbatim
  bool output_truncated = false;
  double wall_ms = 0;
  bool ok() const { return !timed_out && term_signal == 0 && exit_code == 0; }
};

// Runs the program to completion or the deadline. IOError if it cannot be
// started (a missing program shows as exit code 127 with a message).
Result<RunResult> Run(const RunOptions& options);

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_SUBPROCESS_H_
