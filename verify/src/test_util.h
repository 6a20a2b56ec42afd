// Helpers shared by the verifier's end-to-end tests.
#ifndef SKILLDB_VERIFY_TEST_UTIL_H_
#define SKILLDB_VERIFY_TEST_UTIL_H_

#include <cstdlib>
#include <string>

#include "file_util.h"
#include "skilldb/verify/verify.h"
#include "build_paths.h"

namespace skilldb::verify::testing {

inline std::string SourceDir() {
  const char* env = std::getenv("SKILLDB_VERIFY_SOURCE_DIR");
  return env != nullptr ? env : SKILLDB_VERIFY_SOURCE_DIR;
}
inline std::string TaskDir() { return SourceDir() + "/tasks"; }

// Options for `backend` with a compile cache shared by all test processes
// (so each source compiles once per machine): $SKILLDB_VERIFY_CACHE if set,
// else $TMPDIR/skilldb-verify-test-cache.
inline VerifierOptions TestOptions(Backend backend) {
  VerifierOptions o = DefaultOptions(backend);
  if (std::getenv("SKILLDB_VERIFY_CACHE") == nullptr) {
    const char* tmp = std::getenv("TMPDIR");
    o.cache_dir = std::string(tmp ? tmp : "/tmp") + "/skilldb-verify-test-cache";
  }
  return o;
}

inline Artifact Source(const std::string& name, const std::string& language,
                       const std::string& source) {
  return Artifact{name, language, source};
}

// The text of a file under verify/.
inline std::string ReadSource(const std::string& relative) {
  auto text = internal::ReadFile(SourceDir() + "/" + relative);
  return text.ok() ? *text : std::string();
}

inline VerificationRequest Request(const std::string& task, Artifact candidate,
                                   int rounds = 3) {
  VerificationRequest r;
  r.task = task;
  r.candidate = std::move(candidate);
  r.rounds = rounds;
  return r;
}

}  // namespace skilldb::verify::testing

#endif  // SKILLDB_VERIFY_TEST_UTIL_H_
