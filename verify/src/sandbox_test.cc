// The host sandbox, end to end: untrusted candidates that reach for the
// network, the file system, processes or the verifier itself are stopped
// (with the static symbol screen off, so the runtime layer is what is
// tested), and resource limits hold.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <string>

#include "file_util.h"
#include "skilldb/verify/verify.h"
#include "test_util.h"
#include "build_paths.h"

namespace skilldb::verify {
namespace {

using testing::ReadSource;
using testing::Request;
using testing::Source;
using testing::TestOptions;

// The task's reference wrapped so that `prologue` runs first in launch():
// the candidate computes the right answer, so only the sandbox can stop it.
Artifact Probe(const std::string& includes, const std::string& prologue) {
  std::string src = includes + "\n#define launch skdb_ref_launch\n" +
                    ReadSource("tasks/softmax_rows_fp32/reference.cc") +
                    "\n#undef launch\n"
                    "extern \"C\" int launch(const Tensor* in, int n_in, Tensor* out, "
                    "int n_out, void* s) {\n" +
                    prologue + "\n  return skdb_ref_launch(in, n_in, out, n_out, s);\n}\n";
  return Source("probe.cc", "cpp", src);
}

DetailedReport VerifyProbe(const Artifact& a, bool screen = false,
                           VerifierOptions o = TestOptions(Backend::kHost)) {
  o.static_screen = screen;
  auto v = MakeVerifier(o);
  REQUIRE(v.ok());
  auto r = (*v)->VerifyDetailed(Request("softmax_rows_fp32", a, 1));
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return *r;
}

TEST_CASE("a candidate cannot open a network socket") {
  const Artifact a = Probe("#include <sys/socket.h>\n#include <netinet/in.h>",
                           "int fd = socket(AF_INET, SOCK_STREAM, 0); (void)fd;");
  const DetailedReport r = VerifyProbe(a);
  CHECK(HasFinding(r.findings, FindingCode::kSandboxViolation));
  CHECK(r.report.reasons.front().find("socket") != std::string::npos);
  // The static screen names the call before anything runs.
  CHECK(HasFinding(VerifyProbe(a, true).findings, FindingCode::kForbiddenImport));
}

TEST_CASE("a candidate cannot write outside its scratch directory") {
  const std::string target = "/tmp/skilldb-sandbox-probe-" + std::to_string(::getpid());
  internal::RemoveTree(target);
  const Artifact a = Probe(
      "#include <cstdio>",
      "const char* paths[] = {\"" + target + "\", \"../../../../.." + target + "\"};\n"
      "for (const char* p : paths) {\n"
      "  if (FILE* f = std::fopen(p, \"w\")) { std::fputs(\"escaped\", f); std::fclose(f); }\n"
      "}");
  VerifierOptions o = TestOptions(Backend::kHost);
  o.static_screen = false;
  auto v = MakeVerifier(o);
  REQUIRE(v.ok());
  auto device = (*v)->Describe();
  REQUIRE(device.ok());
  auto r = (*v)->VerifyDetailed(Request("softmax_rows_fp32", a, 1));
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  INFO(FormatReportText(r->report));
  INFO(device->notes);
  CHECK(!internal::FileExists(target));
  if (device->notes.find("chroot") != std::string::npos) {
    // The paths resolve inside the scratch directory: the open fails there
    // and nothing else goes wrong.
    CHECK(r->report.correctness.passed);
  } else {
    // Without namespaces every open for writing traps.
    CHECK(HasFinding(r->findings, FindingCode::kSandboxViolation));
  }
}

TEST_CASE("a candidate cannot start another process") {
  const DetailedReport r =
      VerifyProbe(Probe("#include <cstdlib>", "if (std::system(\"true\") == 0) return 9;"));
  CHECK(HasFinding(r.findings, FindingCode::kSandboxViolation));
}

TEST_CASE("a candidate cannot signal the verifier") {
  const DetailedReport r =
      VerifyProbe(Probe("#include <signal.h>\n#include <unistd.h>", "kill(getppid(), SIGKILL);"));
  CHECK(HasFinding(r.findings, FindingCode::kSandboxViolation));
  // This test process is the verifier: it is still here to check.
  CHECK(::getpid() > 0);
}

TEST_CASE("a candidate that floods its output is stopped at the size limit") {
  VerifierOptions o = TestOptions(Backend::kHost);
  o.limits.output_bytes = 1 << 20;
  const DetailedReport r = VerifyProbe(
      Probe("#include <cstdio>",
            "for (int i = 0; i < 4000000; ++i) std::fputs(\"flood flood flood\\n\", stdout);"),
      false, o);
  CHECK(HasFinding(r.findings, FindingCode::kResourceLimit));
}

TEST_CASE("a candidate cannot allocate beyond the memory limit") {
  VerifierOptions o = TestOptions(Backend::kHost);
  o.limits.host_memory_bytes = int64_t{2} << 30;
  const DetailedReport r = VerifyProbe(
      Probe("#include <cstdlib>\n#include <cstring>",
            "void* p = std::malloc(size_t{8} << 30);\n"
            "if (p == nullptr) return 12;\n"
            "std::memset(p, 1, size_t{8} << 30);"),
      false, o);
  CHECK(!r.report.passed);
  CHECK(HasFinding(r.findings, FindingCode::kLaunchError));  // malloc said no
}

TEST_CASE("a worker carrying the C++ runtime statically still loads C++ candidates") {
  // The worker binary is linked -static-libstdc++ -static-libgcc, so nothing
  // of the C++ runtime is loaded as a shared library unless the sandbox
  // loads it before the chroot; the probe throws and catches, which needs
  // libstdc++.so.6 (__cxa_throw) and libgcc_s.so.1 (the unwinder).
  VerifierOptions o = TestOptions(Backend::kHost);
  o.worker_path = SKILLDB_VERIFY_STATIC_RUNTIME_WORKER;
  o.static_screen = false;
  auto v = MakeVerifier(o);
  REQUIRE(v.ok());
  auto device = (*v)->Describe();
  REQUIRE(device.ok());
  INFO(device->notes);
  const DetailedReport r = VerifyProbe(
      Probe("#include <stdexcept>\n#include <string>",
            "try { throw std::runtime_error(std::string(48, 'x')); }\n"
            "catch (const std::exception& e) { if (std::string(e.what()).size() != 48) return 5; }"),
      false, o);
  INFO(FormatReportText(r.report));
  CHECK(r.report.correctness.passed);
  CHECK(!HasFinding(r.findings, FindingCode::kLoadError));
}

}  // namespace
}  // namespace skilldb::verify
