// skilldb_kb_launch: starts one KernelBench runner (a Python interpreter)
// inside the verifier's confinement, then execs it.
//
//   skilldb_kb_launch --fd N --scratch DIR [--confine 0|1] [--visible P]...
//       [--cpu-seconds S] [--memory-bytes B] [--file-bytes B] [--nofile N]
//       [--seccomp 0|1] [--env NAME=VALUE]... -- PYTHON ARGS...
//
// With --confine 1 it enters the GPU worker's namespaces (verify/src/worker/
// sandbox.h: new mount, network, PID, IPC and UTS namespaces on a fresh
// root where the system libraries, the toolkit, /sys, the device nodes and
// the --visible paths are read-only and the scratch directory is the only
// writable place; this process stays outside as a relay), drops every
// capability, sets the resource limits, installs the runner's build-stage
// system-call filter and execs PYTHON with only the --env variables, plus
// SKILLDB_KB_ISOLATION (the layers that held, in words) and SKILLDB_KB_MNTNS
// (1 when the mount namespace held), and "--fd N --scratch DIR" appended.
// The runner itself enters the stricter run stage (kb_guard.py). Exit
// status 126 if the confinement was asked for and could not be finished.
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "confine.h"
#include "worker/sandbox.h"

namespace {

using skilldb::verify::internal::DropPrivileges;
using skilldb::verify::internal::EnterGpuNamespaces;
using skilldb::verify::internal::GpuSandboxOptions;
using skilldb::verify::internal::InstallRunnerBuildFilter;

struct Args {
  std::string fd;
  std::string scratch;
  bool confine = true;
  bool seccomp = true;
  std::vector<std::string> visible;
  std::vector<std::string> env;
  long long cpu_seconds = 0;
  long long memory_bytes = 0;
  long long file_bytes = int64_t{1} << 30;
  long long nofile = 1024;
  std::vector<std::string> command;
};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "skilldb_kb_launch: %s\n", message.c_str());
  std::exit(126);
}

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--") {
      for (++i; i < argc; ++i) a.command.emplace_back(argv[i]);
      break;
    }
    if (i + 1 >= argc) Die("option " + k + " needs a value");
    const std::string v = argv[++i];
    if (k == "--fd") a.fd = v;
    else if (k == "--scratch") a.scratch = v;
    else if (k == "--confine") a.confine = v != "0";
    else if (k == "--seccomp") a.seccomp = v != "0";
    else if (k == "--visible") a.visible.push_back(v);
    else if (k == "--env") a.env.push_back(v);
    else if (k == "--cpu-seconds") a.cpu_seconds = std::atoll(v.c_str());
    else if (k == "--memory-bytes") a.memory_bytes = std::atoll(v.c_str());
    else if (k == "--file-bytes") a.file_bytes = std::atoll(v.c_str());
    else if (k == "--nofile") a.nofile = std::atoll(v.c_str());
    else Die("unknown option " + k);
  }
  if (a.fd.empty() || a.scratch.empty() || a.command.empty()) {
    Die("usage: --fd N --scratch DIR [options] -- PYTHON ARGS...");
  }
  return a;
}

void SetLimit(int resource, long long value) {
  if (value <= 0) return;
  rlimit rl{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  ::setrlimit(resource, &rl);
}

}  // namespace

int main(int argc, char** argv) {
  Args a = Parse(argc, argv);
  std::string notes;
  if (a.confine) {
    GpuSandboxOptions o;
    o.scratch_dir = a.scratch;
    o.file_size_bytes = a.file_bytes;
    o.extra_visible = a.visible;
    // Returns in the confined process (PID 1 of its namespace) or, where
    // namespaces are not to be had, here with the reason in the notes.
    const skilldb::Status s = EnterGpuNamespaces(o, &notes);
    if (!s.ok()) Die(s.message());
    int step = 0, err = 0;
    if (DropPrivileges(&step, &err)) {
      notes += " no-caps";
    } else {
      notes += std::string(" (capabilities kept: ") + std::strerror(err) + ")";
    }
  } else {
    notes = " (not confined: asked for)";
  }
  if (::chdir(a.scratch.c_str()) != 0) Die("cannot enter " + a.scratch);
  rlimit core{0, 0};
  ::setrlimit(RLIMIT_CORE, &core);
  SetLimit(RLIMIT_CPU, a.cpu_seconds);
  SetLimit(RLIMIT_AS, a.memory_bytes);
  SetLimit(RLIMIT_FSIZE, a.file_bytes);
  SetLimit(RLIMIT_NOFILE, a.nofile);
  notes += " rlimits(cpu";
  notes += a.memory_bytes > 0 ? ",as" : "";
  notes += ",fsize,nofile)";
  if (a.seccomp) {
    const skilldb::Status s = InstallRunnerBuildFilter();
    if (!s.ok()) Die("the build-stage filter: " + s.message());
    notes += " seccomp-denylist(build)";
  }
  std::vector<std::string> env = a.env;
  env.push_back("SKILLDB_KB_ISOLATION=sandbox:" + notes);
  env.push_back(std::string("SKILLDB_KB_MNTNS=") +
                (notes.find("mntns") != std::string::npos ? "1" : "0"));
  std::vector<std::string> cmd = a.command;
  cmd.insert(cmd.end(), {"--fd", a.fd, "--scratch", a.scratch});
  std::vector<char*> argvp, envp;
  for (std::string& s : cmd) argvp.push_back(s.data());
  argvp.push_back(nullptr);
  for (std::string& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  ::execve(argvp[0], argvp.data(), envp.data());
  Die("cannot execute " + cmd[0] + ": " + std::strerror(errno));
}
