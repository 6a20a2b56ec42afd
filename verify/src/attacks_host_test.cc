// The attack candidates of verify/tasks/_attacks on the host backend, end to
// end through the verifier: each computes the right answer and meanwhile
// attacks the machine through raw system calls (no import for the static
// screen to see) or through the compiler. Every one must be contained.
#include <dirent.h>
#include <doctest/doctest.h>
#include <unistd.h>

#include <string>

#include "file_util.h"
#include "skilldb/verify/verify.h"
#include "test_util.h"

namespace skilldb::verify {
namespace {

using testing::ReadSource;
using testing::Request;
using testing::Source;
using testing::TestOptions;

// The task's reference, renamed, followed by the attack (as attack.sh does).
Artifact Attack(const std::string& file) {
  const std::string src = "#define launch skdb_ref_launch\n" +
                          ReadSource("tasks/softmax_rows_fp32/reference.cc") +
                          "\n#undef launch\n" +
                          ReadSource("tasks/_attacks/" + file);
  const bool is_attack =
      src.find("skdb_attack") != std::string::npos ||
      src.find("#include \"/etc/passwd\"") != std::string::npos ||
      src.find("B4") != std::string::npos;
  REQUIRE(is_attack);
  return Source(file, "cpp", src);
}

DetailedReport Run(const Artifact& a,
                   VerifierOptions o = TestOptions(Backend::kHost)) {
  auto v = MakeVerifier(o);
  REQUIRE(v.ok());
  auto r = (*v)->VerifyDetailed(Request("softmax_rows_fp32", a, 1));
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return *r;
}

std::string Everything(const DetailedReport& r) {
  std::string text = FormatReportText(r.report) + "\n" + r.report.compile_log;
  for (const Finding& f : r.findings) text += "\n" + f.message;
  return text;
}

bool ProcessNamed(const std::string& name) {
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return false;
  bool found = false;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    auto comm = internal::ReadFile(std::string("/proc/") + e->d_name + "/comm");
    if (comm.ok() && comm->rfind(name, 0) == 0) found = true;
  }
  ::closedir(d);
  return found;
}

TEST_CASE("attack: a static constructor writing outside scratch is contained") {
  internal::RemoveTree("/tmp/skilldb-attack-ctor");
  const DetailedReport r = Run(Attack("ctor_write.cc"));
  INFO(Everything(r));
  CHECK(r.report.compiled);
  CHECK(!internal::FileExists("/tmp/skilldb-attack-ctor"));
}

TEST_CASE(
    "attack: launch() writing outside scratch (absolute and climbing) is "
    "contained") {
  internal::RemoveTree("/tmp/skilldb-attack-launch");
  internal::RemoveTree("/tmp/skilldb-attack-climb");
  const DetailedReport r = Run(Attack("launch_write.cc"));
  INFO(Everything(r));
  CHECK(r.report.compiled);
  CHECK(!internal::FileExists("/tmp/skilldb-attack-launch"));
  CHECK(!internal::FileExists("/tmp/skilldb-attack-climb"));
}

TEST_CASE("attack: a static constructor cannot read /etc/passwd") {
  const DetailedReport r = Run(Attack("read_host_file.cc"));
  const std::string text = Everything(r);
  INFO(text);
  CHECK(r.report.compiled);
  // launch() returns 77 when the constructor could read the file; the
  // verdict words that as "launch() returned 77" (a bare "77" can be part of
  // a measured figure, such as a roofline bound of 177x).
  CHECK(!HasFinding(r.findings, FindingCode::kLaunchError));
  CHECK(text.find("returned 77") == std::string::npos);
  CHECK(text.find("root:") == std::string::npos);
}

TEST_CASE("attack: a forked child is stopped and nothing outlives the worker") {
  const DetailedReport r = Run(Attack("fork_survivor.cc"));
  INFO(Everything(r));
  CHECK(HasFinding(r.findings, FindingCode::kSandboxViolation));
  ::usleep(200 * 1000);
  CHECK(!ProcessNamed("skdb-attack-kid"));
}

TEST_CASE("attack: a socket is refused") {
  const DetailedReport r = Run(Attack("socket.cc"));
  INFO(Everything(r));
  CHECK(HasFinding(r.findings, FindingCode::kSandboxViolation));
  CHECK(!HasFinding(r.findings, FindingCode::kLaunchError));
}

TEST_CASE(
    "attack: an include of a host file reveals nothing through the compile "
    "log") {
  const DetailedReport r = Run(Attack("include_host_file.cc"));
  INFO(Everything(r));
  CHECK(!r.report.compiled);
  CHECK(r.report.compile_log.find("root:x:0") == std::string::npos);
  CHECK(r.report.compile_log.find("No such file or directory") !=
        std::string::npos);
  CHECK(HasFinding(r.findings, FindingCode::kCompileError));
  CHECK(r.report.isolation.compiler_confined);
}

TEST_CASE(
    "attack: endless preprocessing ends in a resource verdict within the "
    "limits") {
  VerifierOptions o = TestOptions(Backend::kHost);
  o.limits.compile_memory_bytes = int64_t{512} << 20;
  const DetailedReport r = Run(Attack("macro_bomb.cc"), o);
  INFO(Everything(r));
  CHECK(!r.report.compiled);
  CHECK(HasFinding(r.findings, FindingCode::kResourceLimit));
  CHECK(r.times.compile_ms < 30000);
}

}  // namespace
}  // namespace skilldb::verify
