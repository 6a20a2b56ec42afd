// The rollout pool: many (task, rollout) jobs run at once against one
// backbone and one verifier, the shape an RL step needs (a batch of tasks,
// G rollouts each, every rollout T turns of n samples).
//
// `concurrency` jobs run at a time, each on its own thread (generation and
// verification block, so a thread per rollout keeps the backbone's and the
// verifier's queues full; the verifier bounds how many candidates execute
// at once: one per GPU, or its host workers). Counters say what the pool
// did and how fast: turns, samples and verifications per minute, per
// verifier worker, and where the time went.
//
// A RolloutPool is used by one thread at a time (Run blocks); the agent it
// drives may be shared with other pools.
#ifndef SKILLDB_POLICY_ROLLOUT_POOL_H_
#define SKILLDB_POLICY_ROLLOUT_POOL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "skilldb/policy/policy_agent.h"
#include "skilldb/status.h"

namespace skilldb::policy {

// One rollout to run.
struct RolloutJob {
  const PolicyTask* task = nullptr;  // REQUIRES: outlives Run
  PolicyOptions options;
};

struct PoolOptions {
  int concurrency = 8;  // jobs in flight, >= 1. Default: 8.
  // Verifier workers the throughput is divided by (GPUs, or host
  // workers); 0 = 1. Default: 0.
  int workers = 0;
  // Called (from the job's thread) as each job ends. Default: none.
  std::function<void(size_t job, const Result<Trajectory>&)> on_done;
};

struct PoolCounters {
  uint64_t jobs = 0;
  uint64_t trajectories = 0;  // jobs that returned a trajectory
  uint64_t failed = 0;        // trajectories with status "failed"
  uint64_t errors = 0;        // jobs that returned an error
  uint64_t solved = 0;
  uint64_t turns = 0;
  uint64_t samples = 0;
  uint64_t verified = 0;       // samples the verifier judged
  uint64_t prompt_tokens = 0;  // backbone usage during the run
  uint64_t completion_tokens = 0;
  double wall_ms = 0;
  // Sums over all turns (TurnTimes), milliseconds.
  TurnTimes time;
  int workers = 1;
  double turns_per_minute = 0;
  double turns_per_minute_per_worker = 0;
  double samples_per_minute = 0;
  double verifications_per_minute = 0;
};

struct PoolResult {
  std::vector<Result<Trajectory>> results;  // one per job, in job order
  PoolCounters counters;
};

std::string ToJson(const PoolCounters& counters);

class RolloutPool {
 public:
  // REQUIRES: `agent` outlives the pool.
  RolloutPool(const PolicyAgent* agent, PoolOptions options)
      : agent_(agent), options_(std::move(options)) {}

  // Runs every job and returns their results. InvalidArgument for a job
  // without a task or a concurrency below 1; job errors are in `results`.
  Result<PoolResult> Run(const std::vector<RolloutJob>& jobs);

 private:
  const PolicyAgent* agent_;
  PoolOptions options_;
};

}  // namespace skilldb::policy

#endif  // SKILLDB_POLICY_ROLLOUT_POOL_H_
