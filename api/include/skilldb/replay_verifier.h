// A Verifier that replays a recorded verification report (for example one
// produced by the GPU verifier on another machine): useful to insert skills
// whose evidence was gathered elsewhere, and to re-run decisions on old
// evidence.
//
// A ReplayVerifier is immutable after construction and safe to use from
// several threads.
#ifndef SKILLDB_REPLAY_VERIFIER_H_
#define SKILLDB_REPLAY_VERIFIER_H_

#include <string>

#include "skilldb/verifier.h"

namespace skilldb {

class ReplayVerifier : public Verifier {
 public:
  explicit ReplayVerifier(VerificationReport report)
      : report_(std::move(report)) {}
  std::string_view Name() const override { return "replay"; }
  // Returns the recorded report. InvalidArgument if the request names a task
  // other than the report's.
  Result<VerificationReport> Verify(
      const VerificationRequest& request) override {
    if (!request.task.empty() && !report_.task.empty() &&
        request.task != report_.task) {
      return Status::InvalidArgument("the recorded report is for task '" +
                                     report_.task + "', not '" + request.task +
                                     "'");
    }
    return report_;
  }

 private:
  VerificationReport report_;
};

}  // namespace skilldb

#endif  // SKILLDB_REPLAY_VERIFIER_H_
