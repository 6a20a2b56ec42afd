// Float64 oracles: each task's oracle.cc, compiled with the host compiler
// (through the compile cache) and loaded into the verifier's own process.
// Oracles are team-written, trusted code; candidates never run here.
//
// OracleSet is thread-safe; loaded oracles stay loaded for its lifetime.
#ifndef SKILLDB_VERIFY_ORACLE_H_
#define SKILLDB_VERIFY_ORACLE_H_

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "skilldb/status.h"
#include "skilldb/verify/compiler.h"
#include "skilldb/verify/task.h"
#include "tensor_data.h"

namespace skilldb::verify::internal {

class OracleSet {
 public:
  explicit OracleSet(Compiler* compiler) : compiler_(compiler) {}
  ~OracleSet();

  // Computes `task`'s outputs in float64 for `inputs` at `dims`. Internal
  // if the oracle does not compile or fails (a task bug).
  Result<std::vector<std::vector<double>>> Run(
      const Task& task, const Dims& dims,
      const std::vector<HostTensor>& inputs);

 private:
  using OracleFn = int (*)(const void*, int, void*, int);
  Result<OracleFn> Get(const Task& task);

  Compiler* compiler_;
  std::mutex mu_;
  std::map<std::string, OracleFn> fns_;  // GUARDED_BY(mu_), by source key
  std::vector<void*> handles_;           // GUARDED_BY(mu_)
};

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_ORACLE_H_
