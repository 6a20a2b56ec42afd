// skilldb_verify_worker_host: runs untrusted host C++ candidates for the
// verifier, inside the host sandbox (worker/sandbox.h). Started by the
// verifier with the request socket on --fd; never run by hand.
#include <cstdlib>
#include <cstring>
#include <string>

#include "ipc.h"
#include "worker/device.h"
#include "worker/sandbox.h"
#include "worker/worker_loop.h"

namespace {

using skilldb::verify::internal::HostSandboxOptions;

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

// Answers every request with the setup error, so the verifier learns why.
int ServeFailure(int fd, const std::string& error) {
  while (true) {
    auto m = skilldb::verify::internal::ReceiveMessage(fd, -1);
    if (!m.ok()) return skilldb::verify::internal::kWorkerExitSandboxSetup;
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
  const char* flush = Arg(argc, argv, "--flush-bytes");
  auto device = skilldb::verify::internal::MakeHostDevice(
      flush != nullptr ? std::atoll(flush) : 0);
  if (!device.ok()) return ServeFailure(fd, device.status().message());
  std::string notes = "sandbox: off";
  if (!Flag(argc, argv, "--no-sandbox")) {
    HostSandboxOptions o;
    o.scratch_dir = scratch;
    o.keep_fd = fd;
    o.isolate_filesystem = !Flag(argc, argv, "--no-fs-isolation");
    if (const char* v = Arg(argc, argv, "--memory-bytes")) o.memory_bytes = std::atoll(v);
    if (const char* v = Arg(argc, argv, "--cpu-seconds")) o.cpu_seconds = std::atoll(v);
    if (const char* v = Arg(argc, argv, "--file-size-bytes")) o.file_size_bytes = std::atoll(v);
    auto entered = skilldb::verify::internal::EnterHostSandbox(o);
    if (!entered.ok()) return ServeFailure(fd, entered.status().message());
    notes = *entered;
  }
  return skilldb::verify::internal::RunWorkerLoop(fd, device->get(), notes);
}
