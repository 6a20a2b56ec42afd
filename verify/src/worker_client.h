// Worker processes as the verifier sees them: start, talk, detect death.
//
// A WorkerProcess is a child running a worker executable in its own session
// (so the whole process group can be killed), with its stdout/stderr going
// to a capped log file in its scratch directory. Call() sends one request
// and waits for the reply, accepting progress frames as heartbeats; a
// worker that dies, hangs past the call timeout, or answers garbage is
// killed and reported as a WorkerFailure (an expected outcome: the
// candidate's fault), never as a verifier error.
//
// WorkerPool keeps one worker per slot (one per GPU, or N host workers),
// hands them out one at a time and replaces dead ones on the next lease.
// WorkerPool is thread-safe; a WorkerProcess is used by one lease holder.
#ifndef SKILLDB_VERIFY_WORKER_CLIENT_H_
#define SKILLDB_VERIFY_WORKER_CLIENT_H_

#include <sys/types.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ipc.h"
#include "skilldb/status.h"
#include "skilldb/verify/finding.h"

namespace skilldb::verify::internal {

struct WorkerSpec {
  std::string executable;
  std::vector<std::string> args;  // besides --fd and --scratch
  std::string scratch_dir;        // created if missing; holds worker.log
};

struct WorkerFailure {
  FindingCode code = FindingCode::kCrashed;
  std::string message;
};

// One request's outcome: a reply, or the worker's death.
struct CallOutcome {
  bool ok = false;
  Message reply;          // when ok
  WorkerFailure failure;  // when !ok
};

// What a failure message quotes from a dead worker's log: from the last
// "Fatal Python error" (faulthandler's stacks, without its list of extension
// modules; at most 2,000 bytes) when there is one, else its last 300 bytes.
std::string CrashExcerpt(const std::string& log);

class WorkerProcess {
 public:
  // Starts the worker. IOError if it cannot be spawned.
  static Result<std::unique_ptr<WorkerProcess>> Start(const WorkerSpec& spec);
  ~WorkerProcess();  // kills the process group if still running

  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends `header` (+ `blob`) and waits for the final reply. Each frame
  // (progress or final) must arrive within `timeout_s` of the previous one.
  // On death or timeout the process is killed and reaped, and the outcome
  // explains why (code kTimeout, kCrashed, kSandboxViolation,
  // kResourceLimit or kStickyCudaError). `reuse`: storage for the reply's
  // blob (ReceiveMessage's).
  CallOutcome Call(const nlohmann::json& header, std::string_view blob,
                   double timeout_s, std::string* reuse = nullptr);
  // Waits for the next final frame without sending one (a greeting the
  // worker sends by itself when it is ready); same outcomes as Call.
  CallOutcome Receive(double timeout_s, std::string* reuse = nullptr);

  bool alive() const { return alive_; }
  const std::string& scratch_dir() const { return scratch_; }
  // The last `max_bytes` of the worker's log (candidate output included).
  std::string LogTail(size_t max_bytes) const;
  // Empties the log (between verifications, so the size cap is per job).
  void TruncateLog();
  // Kills the worker (SIGKILL to its group) and reaps it.
  void Kill();
  // Sends the SIGKILL of Kill without waiting for the process to end (its
  // teardown: a CUDA context, device memory); Kill reaps it later.
  void Signal();

 private:
  WorkerProcess() = default;
  WorkerFailure Reap(bool timed_out, double timeout_s);

  pid_t pid_ = -1;
  int fd_ = -1;
  bool alive_ = false;
  std::string scratch_;
  std::string log_path_;
};

class WorkerPool {
 public:
  explicit WorkerPool(std::vector<WorkerSpec> slots);
  ~WorkerPool();

  // A worker held exclusively until the lease is destroyed.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    // The worker, started (or restarted) if needed. IOError if it cannot
    // be started.
    Result<WorkerProcess*> worker();
    int slot() const { return slot_; }
    // Drops the worker so the next lease starts a fresh one.
    void Replace();

   private:
    friend class WorkerPool;
    Lease(WorkerPool* pool, int slot) : pool_(pool), slot_(slot) {}
    WorkerPool* pool_;
    int slot_;
  };

  // Blocks until a slot is free.
  Lease Acquire();
  int size() const { return static_cast<int>(slots_.size()); }

 private:
  void Release(int slot);

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<WorkerSpec> specs_;
  std::vector<std::unique_ptr<WorkerProcess>> slots_;  // GUARDED_BY(mu_) for membership
  std::vector<bool> busy_;                             // GUARDED_BY(mu_)
};

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_WORKER_CLIENT_H_
