// The multi-process tests' worker: one library client in a process of its
// own (exec'd by tests/process_util.h's StartProgram, never only forked).
//
//   library_worker usage PATH COUNT
//       opens PATH read-only and records `selected` COUNT times
//   library_worker propose PATH FIRST COUNT
//       COUNT times: opens PATH for writing (waiting up to a minute for the
//       lock), proposes Candidate(FIRST + i), verifies it with a passing
//       verifier and commits it; each must be accepted
//   library_worker read PATH OPENS FD [STOP_FILE]
//       OPENS times (then on until STOP_FILE exists, when given): opens PATH
//       read-only and checks ConsistentAt its head; on the first failure
//       writes why to FD
//
// The worker dies with the test that started it (PR_SET_PDEATHSIG): a test
// that fails or is killed mid-way never leaves a reader running on, holding
// ctest's output pipe open.
//
// Exits 0 when all went well, 2 on bad arguments, 10 when a library does not
// open, 11 when an operation fails, 12 when a proposal is not accepted. The
// failing status goes to stderr.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "process_fixtures.h"

namespace {

using namespace skilldb;

int Fail(int code, const std::string& what, const Status& status) {
  std::fprintf(stderr, "library_worker: %s: %s\n", what.c_str(),
               status.ToString().c_str());
  return code;
}

int Usage(const std::string& path, int count) {
  Options ro;
  ro.read_only = true;
  auto lib = Library::Open(ro, path);
  if (!lib.ok()) return Fail(10, "open " + path, lib.status());
  for (int i = 0; i < count; ++i) {
    Status s = (*lib)->RecordUsage("hot", UsageEvent::kSelected);
    if (!s.ok()) return Fail(11, "record usage", s);
  }
  return 0;
}

int Propose(const std::string& path, int first, int count) {
  testing::PassingVerifier verifier;
  for (int i = 0; i < count; ++i) {
    Options o;
    o.lock_timeout_ms = 60000;  // wait for the other processes' turns
    o.sync_commits = false;
    auto lib = Library::Open(o, path);
    if (!lib.ok()) return Fail(10, "open " + path, lib.status());
    auto p = (*lib)->Propose(testing::Candidate(first + i), {});
    if (!p.ok()) return Fail(11, "propose", p.status());
    auto verified = (*p)->Verify(verifier, {});
    if (!verified.ok()) return Fail(11, "verify", verified.status());
    auto outcome = (*p)->Commit();
    if (!outcome.ok()) return Fail(11, "commit", outcome.status());
    if (!outcome->accepted) {
      std::fprintf(stderr, "library_worker: candidate %d was not accepted\n",
                   first + i);
      return 12;
    }
  }
  return 0;
}

int Read(const std::string& path, int opens, int fd,
         const std::string& stop_file) {
  Options ro;
  ro.read_only = true;
  ro.lock_timeout_ms = 60000;
  std::string why;
  int done = 0;
  // With a stop file: at least `opens`, then on until the file exists (the
  // parent makes it once the overlap it wants has happened), at most 100000.
  const auto more = [&] {
    if (done < opens) return true;
    return !stop_file.empty() && done < 100000 &&
           ::access(stop_file.c_str(), F_OK) != 0;
  };
  for (; more(); ++done) {
    auto lib = Library::Open(ro, path);
    if (!lib.ok()) {
      why = "open: " + lib.status().ToString();
      break;
    }
    if (!testing::ConsistentAt(**lib, (*lib)->CurrentVersion(), &why)) break;
    why.clear();
  }
  if (why.empty()) return 0;
  why = "after " + std::to_string(done) + " opens: " + why;
  (void)!write(fd, why.data(), why.size());
  return 11;
}

}  // namespace

int main(int argc, char** argv) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) return 11;  // the test already ended before this line
  const std::string_view command = argc > 1 ? argv[1] : "";
  if (command == "usage" && argc == 4) return Usage(argv[2], std::atoi(argv[3]));
  if (command == "propose" && argc == 5) {
    return Propose(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  }
  if (command == "read" && (argc == 5 || argc == 6)) {
    return Read(argv[2], std::atoi(argv[3]), std::atoi(argv[4]),
                argc == 6 ? argv[5] : "");
  }
  std::fprintf(stderr, "library_worker: bad arguments (see its header)\n");
  return 2;
}
