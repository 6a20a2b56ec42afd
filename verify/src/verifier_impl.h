// The TaskVerifier implementation behind MakeVerifier (verify.h): the
// verification pipeline. Split from verify.h so tests can reach the pieces.
#ifndef SKILLDB_VERIFY_VERIFIER_IMPL_H_
#define SKILLDB_VERIFY_VERIFIER_IMPL_H_

#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "oracle.h"
#include "skilldb/verify/compiler.h"
#include "skilldb/verify/verify.h"
#include "worker_client.h"

namespace skilldb::verify::internal {

// A task with its compiled references, loaded once per verifier.
struct LoadedTask {
  Task task;
  CompileOutput reference;  // for the verifier's backend
};

// What the verifier knows about one worker slot. Touched only by the
// holder of that slot's lease.
struct SlotState {
  bool described = false;
  DeviceDescription device;
  std::set<std::string> validated_tasks;  // references checked vs oracle
  int verifications = 0;
  int load_counter = 0;
};

// One verification in flight.
struct JobState {
  const VerificationRequest* request = nullptr;
  const LoadedTask* task = nullptr;
  WorkerProcess* worker = nullptr;
  SlotState* slot = nullptr;
  DetailedReport out;
  uint64_t seed = 0;
  std::mt19937_64 rng;
  CompileOutput candidate, baseline;
  std::vector<std::string> staged_files;  // worker copies, removed after
  bool replace_worker = false;

  // Adds a finding unless one with the same code is already there.
  void Add(FindingCode code, std::string message);
  bool failed() const { return !out.findings.empty(); }
};

class TaskVerifierImpl final : public TaskVerifier {
 public:
  static Result<std::unique_ptr<TaskVerifierImpl>> Make(
      const VerifierOptions& options);
  ~TaskVerifierImpl() override;

  std::string_view Name() const override {
    return BackendName(options_.backend);
  }
  Result<VerificationReport> Verify(const VerificationRequest& r) override;
  Result<DetailedReport> VerifyDetailed(
      const VerificationRequest& request) override;
  Result<DeviceDescription> Describe() override;
  const VerifierOptions& options() const override { return options_; }

 private:
  using Job = JobState;
  explicit TaskVerifierImpl(const VerifierOptions& options)
      : options_(options) {}

  Status Init();
  WorkerSpec SpecFor(int device, int slot) const;
  Result<const LoadedTask*> GetTask(const std::string& name);
  Status Validate(const VerificationRequest& r) const;
  Result<bool> CompileCandidate(Job* job);
  Status RunOnWorker(Job* job);
  Status DescribeSlot(Job* job);
  Result<bool> LoadSlot(Job* job, const std::string& slot,
                        const std::string& library);
  Result<bool> CheckCorrectness(Job* job);
  Result<bool> CheckShape(Job* job, const Dims& dims, int trial);
  Result<bool> CheckTimingShape(Job* job, int trial);
  Result<bool> ValidateReference(Job* job, const Dims& dims,
                                 const std::vector<HostTensor>& inputs,
                                 const std::vector<std::vector<double>>& want);
  Result<bool> RunRounds(Job* job, std::vector<RoundSamples>* samples);
  void Decide(Job* job, const std::vector<RoundSamples>& samples);
  Result<bool> CallWorker(Job* job, const nlohmann::json& header,
                          std::string_view blob, double timeout_s,
                          Message* reply);
  void Finish(Job* job);
  std::optional<double> RooflineFloorMs(const Job& job) const;

  VerifierOptions options_;
  std::string scratch_base_;
  std::unique_ptr<Compiler> compiler_;
  std::unique_ptr<OracleSet> oracles_;
  std::unique_ptr<WorkerPool> pool_;
  std::vector<SlotState> slots_;  // slot i used only under its lease
  std::mutex mu_;
  // Set by Init when CUDA did not start inside the worker's namespaces.
  bool gpu_namespaces_failed_ = false;
  std::string namespace_error_;
  std::map<std::string, std::unique_ptr<LoadedTask>> tasks_;  // GUARDED_BY(mu_)
};

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_VERIFIER_IMPL_H_
