// Running a child program with a deadline, resource limits, captured output
// and (optionally) a confinement: used for the compilers (nvcc, g++), never
// for candidate code (candidates run in workers, see worker_client.h).
//
// Confinement (RunOptions::confine): the child runs in new mount, network
// and PID namespaces (through a user namespace when not root) on a fresh
// root where only RunOptions::visible paths (read-only, at their own path),
// /dev/null and the writable directory exist; it has no
// network, no capabilities, no_new_privs, and everything it starts dies
// with it (it is the PID namespace's init). A source that includes a host
// file then gets "No such file or directory". If a step cannot be taken the
// child does not run the program: RunResult::confine_error names the step,
// and the caller may retry unconfined (see ProbeConfinement).
//
// Run() is safe to call from several threads at once.
#ifndef SKILLDB_VERIFY_SUBPROCESS_H_
#define SKILLDB_VERIFY_SUBPROCESS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::verify::internal {

struct Confinement {
  bool enabled = false;
  // Absolute paths made visible read-only at the same place (directories,
  // files or symbolic links, e.g. "/usr", "/lib64"); missing ones are
  // skipped.
  std::vector<std::string> visible;
  // REQUIRED when enabled: the one writable directory (the scratch). It also
  // holds the new root's mount point while the child sets up.
  std::string writable_dir;
  // A /proc of the child's own PID namespace. Off by default: nvcc and g++
  // do without, and /proc/self/environ would be one more file to include.
  bool mount_proc = false;
};

struct RunOptions {
  std::vector<std::string> argv;  // argv[0] is the program (PATH searched)
  std::string cwd;                // "" = inherit
  double timeout_s = 60;          // wall clock; the process group is killed
  int64_t max_output_bytes = 1 << 20;  // stdout+stderr kept (rest dropped)
  int64_t cpu_limit_s = 0;             // RLIMIT_CPU per process; 0 = none
  int64_t file_size_limit_bytes = 0;   // RLIMIT_FSIZE; 0 = none
  int64_t address_space_bytes = 0;     // RLIMIT_AS per process; 0 = none
  std::vector<std::string> extra_env;  // "NAME=value" added to the env
  // Start from an environment of PATH alone instead of this process's (whose
  // variables may hold secrets a compile log should never show).
  bool clean_env = false;
  Confinement confine;
};

struct RunResult {
  int exit_code = -1;   // valid when !signaled
  int term_signal = 0;  // nonzero when killed by a signal
  bool timed_out = false;
  std::string output;  // stdout and stderr interleaved, verbatim
  bool output_truncated = false;
  double wall_ms = 0;
  // Set when the program was never run: the errno of execve (exit code
  // 127), or the confinement step that failed ("mount /usr: Permission
  // denied"; exit code 125).
  int exec_errno = 0;
  std::string confine_error;
  bool ok() const { return !timed_out && term_signal == 0 && exit_code == 0; }
};

// Runs the program to completion or the deadline. IOError if it cannot be
// started (a missing program shows as exit code 127 and exec_errno).
Result<RunResult> Run(const RunOptions& options);

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_SUBPROCESS_H_
