// Data-parallel training through torch.distributed's c10d process groups:
// gloo on CPUs, NCCL on GPUs (when this build has it), launched the usual
// way: one process per device with RANK, WORLD_SIZE, MASTER_ADDR and
// MASTER_PORT set; rank 0 hosts the TCPStore the ranks rendezvous through.
// The learner averages gradients across ranks every step (learner.h);
// rank 0 alone writes the library and the run directory (the loop's rule).
// No torch in this header.
#ifndef SKILLDB_TRAINER_DISTRIBUTED_H_
#define SKILLDB_TRAINER_DISTRIBUTED_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::trainer {

struct DistEnv {
  int rank = 0;
  int world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string backend = "gloo";  // "gloo" | "nccl"
  int timeout_s = 120;           // the rendezvous: every rank joined within it
  // How long a gloo collective waits for the other ranks. It is the
  // longest a rank may fall behind the others between two steps' gradient
  // all-reduces: rank 0 alone distills skills and evaluates the held-out
  // split, on KernelBench minutes of verification. c10d's gloo default.
  // NCCL keeps c10d's NCCL default (10 minutes in torch 2.x): not set here,
  // since this machine cannot compile the NCCL build.
  int collective_timeout_s = 1800;
};

// From RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (absent: one process) and
// SKILLDB_DIST_TIMEOUT_S (collective_timeout_s, 1 to 86400). InvalidArgument
// naming the variable that does not parse or is out of range.
Result<DistEnv> DistEnvFromEnvironment(const std::string& backend = "gloo");

class ProcessGroupHandle;

// Connects to the group (blocks until every rank joined or the timeout).
// Errors: Unavailable (the backend is not in this build, or the rendezvous
// failed, message kept), InvalidArgument for a bad environment.
Result<std::shared_ptr<ProcessGroupHandle>> InitProcessGroup(
    const DistEnv& env);
int Rank(const ProcessGroupHandle& group);
int WorldSize(const ProcessGroupHandle& group);
// Sums `values` over the ranks in place (step statistics).
Status AllReduceSum(ProcessGroupHandle& group, std::vector<double>& values);
Status Barrier(ProcessGroupHandle& group);

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_DISTRIBUTED_H_
