// skilldb_verify_worker_cuda: runs untrusted CUDA candidates for the
// verifier on one GPU (--device), with launch interposition, CUPTI kernel
// counting and a seccomp denylist. Started by the verifier with the request
// socket on --fd; never run by hand.
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
    nlohmann::json reply = {{"ok", false}, {"kind", "unavailable"}, {"error", error}};
    if (!skilldb::verify::internal::SendMessage(fd, reply).ok()) return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* fd_arg = Arg(argc, argv, "--fd");
  const char* scratch = Arg(argc, argv, "--scratch");
  if (fd_arg == nullptr || scratch == nullptr) return 2;
  const int fd = std::atoi(fd_arg);
  const char* dev = Arg(argc, argv, "--device");
  const char* mem = Arg(argc, argv, "--gpu-memory-bytes");
  auto device = skilldb::verify::internal::MakeCudaDevice(
      dev ? std::atoi(dev) : 0, mem ? std::atoll(mem) : (int64_t{16} << 30),
      !Flag(argc, argv, "--no-cupti"));
  if (!device.ok()) return ServeFailure(fd, device.status().message());
  if (::chdir(scratch) != 0) return ServeFailure(fd, "cannot enter scratch");
  std::string notes = "sandbox: off";
  if (!Flag(argc, argv, "--no-sandbox")) {
    const char* fsize = Arg(argc, argv, "--file-size-bytes");
    auto entered = skilldb::verify::internal::EnterGpuSandbox(
        fsize ? std::atoll(fsize) : (int64_t{64} << 20));
    if (!entered.ok()) return ServeFailure(fd, entered.status().message());
    notes = *entered;
  }
  return skilldb::verify::internal::RunWorkerLoop(fd, device->get(), notes);
}
