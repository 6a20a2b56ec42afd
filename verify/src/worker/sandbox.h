// Process sandboxes for worker processes, entered by the worker itself
// before it loads any candidate code.
//
// Host workers (untrusted C++ runs on the CPU):
//   1. resource limits: address space, CPU seconds, file size (caps the
//      candidate's output), open files, no core dumps;
//   2. new network and mount namespaces (through a user namespace when not
//      root): no network interface but a down loopback;
//   3. chroot into the scratch directory: every path, read or write,
//      resolves inside it, so nothing outside can be written;
//   4. seccomp-bpf allowlist: memory, I/O on already-open descriptors,
//      clocks, read-only or scratch-local opens, signals to itself. Sockets,
//      threads, processes, exec, ptrace, clock setting, mounts and anything
//      unlisted trap: the worker reports the call and exits with
//      kWorkerExitSandboxViolation.
// If step 2 or 3 is unavailable, the filter also traps every open for
// writing, so the no-writes guarantee holds without the chroot.
//
// GPU workers (untrusted CUDA runs on the GPU) in two phases, because the
// CUDA driver starts threads and namespaces can only be entered before:
//   1. EnterGpuNamespaces, before CUDA is initialised: new network, mount,
//      PID, IPC and UTS namespaces (through a user namespace when not
//      root) on a fresh root holding the system libraries, the toolkit,
//      /sys read-only, the /dev/nvidia* nodes and the scratch directory,
//      the only writable place. The calling process stays outside as a
//      relay; the worker continues as PID 1 of its namespace, so nothing a
//      candidate starts outlives it. A probe in a throwaway child comes
//      first; without namespaces the worker carries on and says why.
//   2. EnterGpuSandbox, after the CUDA context exists: resource limits, no
//      capabilities, no_new_privs and a seccomp allowlist broad enough for
//      the runtime (ioctl, mmap, threads, NUMA calls); processes, exec,
//      non-AF_UNIX sockets, ptrace, mounts and anything unlisted trap. If
//      phase 1 did not hold, opens that create, truncate or append, unlink,
//      rename and mkdir trap too (existing files opened O_RDWR stay
//      writable: the driver opens its device nodes so, lazily).
//
// Not thread-safe: call from the worker's main thread before starting any.
#ifndef SKILLDB_VERIFY_WORKER_SANDBOX_H_
#define SKILLDB_VERIFY_WORKER_SANDBOX_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::verify::internal {

struct HostSandboxOptions {
  std::string scratch_dir;                  // REQUIRED; becomes "/"
  int64_t memory_bytes = int64_t{4} << 30;  // RLIMIT_AS. Default: 4 GiB.
  int64_t cpu_seconds = 3600;               // RLIMIT_CPU. Default: 1 h.
  int64_t file_size_bytes = int64_t{64}
                            << 20;  // RLIMIT_FSIZE. Default: 64 MiB.
  bool isolate_filesystem = true;   // namespaces + chroot. Default: true.
  int keep_fd = -1;                 // the IPC socket (stays open)
};

// Enters the host sandbox. Returns a short description of the layers that
// are active ("netns mntns chroot seccomp-allowlist"). FailedPrecondition
// if the seccomp filter cannot be installed (the caller must not run
// untrusted code then); a missing namespace or chroot only degrades (see
// above) and is named in the description.
Result<std::string> EnterHostSandbox(const HostSandboxOptions& options);

struct GpuSandboxOptions {
  std::string scratch_dir;                      // REQUIRED
  int64_t file_size_bytes = int64_t{64} << 20;  // RLIMIT_FSIZE
  // More paths visible read-only in the root (an interpreter's prefix, its
  // packages, a build cache); missing ones are skipped. Default: none.
  std::vector<std::string> extra_visible;
};

// Phase 1 (see above). Appends the layers that held (" netns mntns pidns")
// or why none did to *notes; FailedPrecondition only if the worker is
// inside the namespaces but cannot finish its root (it must not go on).
// Returns in the confined worker; the relay never returns.
Status EnterGpuNamespaces(const GpuSandboxOptions& options, std::string* notes);

// Phase 2, with the notes phase 1 produced. Returns the full description
// ("sandbox: netns mntns pidns no-caps seccomp-allowlist(after-cuda-init)").
Result<std::string> EnterGpuSandbox(const GpuSandboxOptions& options,
                                    const std::string& namespace_notes);

// The KernelBench runner's two stages (verify/kernelbench). The build
// stage, installed by the launcher before it execs the interpreter, may start
// processes (compilers) but traps what no build needs: ptrace, mounts,
// namespaces, module loading, keyrings, BPF, perf events, clock setting,
// other processes' memory, and sockets other than AF_UNIX. The run stage,
// installed by the runner after PyTorch and the device are up and before
// any answer code runs, is the GPU worker's allowlist (threads, no
// processes, no exec), with the same SIGSYS report. FailedPrecondition if
// a filter cannot be installed.
Status InstallRunnerBuildFilter();
Result<std::string> EnterRunnerRunSandbox(bool writes_ok);

// The name of x86-64 system call `nr` for messages ("socket", "clone"), or
// its number as text.
std::string SyscallName(int nr);

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_WORKER_SANDBOX_H_
