// The worker's request loop: loads candidates, runs correctness checks and
// timing rounds on a Device, and answers the verifier over a socket.
//
// Requests (JSON header "op"): hello, ceilings, load, unload, reset, check,
// full, round, ping, shutdown. See worker_loop.cc for each one's fields;
// verifier_impl.cc is the only client. Single-threaded.
#ifndef SKILLDB_VERIFY_WORKER_WORKER_LOOP_H_
#define SKILLDB_VERIFY_WORKER_WORKER_LOOP_H_

#include "worker/device.h"

namespace skilldb::verify::internal {

// Exit codes the verifier interprets (never renumber).
constexpr int kWorkerExitSticky = 3;         // the device context is lost
constexpr int kWorkerExitSandboxSetup = 120; // sandbox could not be entered
constexpr int kWorkerExitSandboxViolation = 121;  // seccomp trapped a call

// Serves requests on `fd` until shutdown or EOF; returns the exit code.
int RunWorkerLoop(int fd, Device* device, const std::string& sandbox_notes);

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_WORKER_WORKER_LOOP_H_
