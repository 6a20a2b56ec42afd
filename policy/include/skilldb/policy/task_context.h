// The Policy Agent's view of a verifier task: the task itself (description,
// op family, reference sources, shapes, dtypes, tolerances), the backend it
// is solved on, and the candidate protocol text (verify/PROTOCOL.md) every
// prompt carries; plus the retrieval query built from them.
//
// Plain values and pure functions (LoadPolicyTask reads files); safe from
// any thread.
#ifndef SKILLDB_POLICY_TASK_CONTEXT_H_
#define SKILLDB_POLICY_TASK_CONTEXT_H_

#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"
#include "skilldb/verify/task.h"
#include "skilldb/verify/verify.h"

namespace skilldb::policy {

struct PolicyTask {
  verify::Task task;
  verify::Backend backend = verify::Backend::kHost;
  std::string protocol;  // the candidate protocol, verbatim
};

// The reference source candidates are timed against on `backend` (the CUDA
// reference or the C++ one).
const std::string& ReferenceSource(const PolicyTask& task);
// The Artifact language of candidates for the backend: "cuda" | "cpp".
std::string CandidateLanguage(const PolicyTask& task);

// Loads task `name` from options.task_dir and the protocol text from
// `protocol_path` ("" = PROTOCOL.md beside the task directory, i.e.
// verify/PROTOCOL.md). Errors: LoadTask's (NotFound for an unknown task,
// InvalidArgument for a malformed one); NotFound naming the protocol file
// when it cannot be read.
Result<PolicyTask> LoadPolicyTask(const verify::VerifierOptions& options,
                                  std::string_view name,
                                  std::string_view protocol_path = "");

// Identifiers of `source` worth searching for: C/C++ identifiers of at
// least three characters, minus language keywords, common types and the
// protocol's own boilerplate (Tensor, launch, numel, ...), in order of
// first appearance, at most `limit`.
std::vector<std::string> ReferenceIdentifiers(std::string_view source,
                                              size_t limit = 24);

// The BM25 query for a task: its description, its op family and the
// identifiers of the reference it must beat, joined by spaces.
std::string RetrievalQuery(const PolicyTask& task);

}  // namespace skilldb::policy

#endif  // SKILLDB_POLICY_TASK_CONTEXT_H_
