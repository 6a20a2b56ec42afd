// skilldb_verify_worker_cuda: runs untrusted CUDA candidates for the
// verifier on one GPU (--device), with launch interposition, CUPTI kernel
// counting, in namespaces and a seccomp allowlist (worker/sandbox.h). Started
// by the verifier with the request socket on --fd; never run by hand.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "ipc.h"
#include "worker/device.h"
#include "worker/sandbox.h"
#include "worker/worker_loop.h"

namespace {

const char* Arg(int argc, char** argv, const char* name) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  }
  return nullptr;
}

bool Flag(int argc, char** argv, const char* name) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return true;
  }
  return false;
}

int ServeFailure(int fd, const std::string& error) {
  while (true) {
    auto m = skilldb::verify::internal::ReceiveMessage(fd, -1);
    if (!m.ok()) return 1;
    nlohmann::json reply = {
        {"ok", false}, {"kind", "unavailable"}, {"error", error}};
    if (!skilldb::verify::internal::SendMessage(fd, reply).ok()) return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* fd_arg = Arg(argc, argv, "--fd");
  const char* scratch = Arg(argc, argv, "--scratch");
  if (fd_arg == nullptr || scratch == nullptr) return 2;
  const int fd = std::atoi(fd_arg);
  const bool sandbox = !Flag(argc, argv, "--no-sandbox");
  skilldb::verify::internal::GpuSandboxOptions so;
  so.scratch_dir = scratch;
  if (const char* v = Arg(argc, argv, "--file-size-bytes"))
    so.file_size_bytes = std::atoll(v);
  // No JIT cache in $HOME: candidates must not leave files for later ones,
  // and without the mount namespace its writes would trap.
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  // Namespaces first: CUDA starts threads, after which they cannot be
  // entered. This process becomes a relay; the worker continues below.
  std::string namespaces;
  if (sandbox && !Flag(argc, argv, "--no-fs-isolation") &&
      !Flag(argc, argv, "--namespaces-failed")) {
    skilldb::Status st =
        skilldb::verify::internal::EnterGpuNamespaces(so, &namespaces);
    if (!st.ok()) return ServeFailure(fd, st.message());
  } else if (sandbox) {
    const char* why = Arg(argc, argv, "--namespaces-failed");
    namespaces =
        why != nullptr
            ? std::string(" (no namespaces: CUDA did not start inside them: ") +
                  why + ")"
            : std::string(" (no namespaces: off)");
  }
  const char* dev = Arg(argc, argv, "--device");
  const char* mem = Arg(argc, argv, "--gpu-memory-bytes");
  auto device = skilldb::verify::internal::MakeCudaDevice(
      dev ? std::atoi(dev) : 0, mem ? std::atoll(mem) : (int64_t{16} << 30),
      !Flag(argc, argv, "--no-cupti"));
  if (!device.ok()) return ServeFailure(fd, device.status().message());
  if (::chdir(scratch) != 0) return ServeFailure(fd, "cannot enter scratch");
  std::string notes = "sandbox: off";
  if (sandbox) {
    auto entered = skilldb::verify::internal::EnterGpuSandbox(so, namespaces);
    if (!entered.ok()) return ServeFailure(fd, entered.status().message());
    notes = *entered;
  }
  return skilldb::verify::internal::RunWorkerLoop(fd, device->get(), notes);
}
