#include "subprocess.h"

#include <doctest/doctest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "file_util.h"

namespace skilldb::verify::internal {
namespace {

TEST_CASE("a child's output and exit status come back") {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3"};
  auto r = Run(o);
  REQUIRE(r.ok());
  CHECK(r->exit_code == 3);
  CHECK(!r->ok());
  CHECK(r->output.find("out") != std::string::npos);
  CHECK(r->output.find("err") != std::string::npos);
}

TEST_CASE("a child past its deadline is killed, its children too") {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "sleep 30 & sleep 30; echo never"};
  o.timeout_s = 0.3;
  auto r = Run(o);
  REQUIRE(r.ok());
  CHECK(r->timed_out);
  CHECK(r->wall_ms < 5000);
  CHECK(r->output.find("never") == std::string::npos);
}

TEST_CASE("output beyond the limit is truncated and says so") {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "yes | head -c 100000"};
  o.max_output_bytes = 1000;
  auto r = Run(o);
  REQUIRE(r.ok());
  CHECK(r->output.size() == 1000);
  CHECK(r->output_truncated);
}

TEST_CASE("a missing program exits with 127 and says why") {
  RunOptions o;
  o.argv = {"/nonexistent/program"};
  auto r = Run(o);
  REQUIRE(r.ok());
  CHECK(r->exit_code == 127);
  CHECK(r->exec_errno == ENOENT);
}

TEST_CASE("a child that writes without pause still meets its deadline") {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "yes"};
  o.timeout_s = 0.5;
  o.max_output_bytes = 4096;
  auto r = Run(o);
  REQUIRE(r.ok());
  CHECK(r->timed_out);
  CHECK(r->output_truncated);
  CHECK(r->output.size() == 4096);
  CHECK(r->wall_ms < 5000);
}

TEST_CASE("an address space limit stops a child that keeps allocating") {
  RunOptions o;
  // sh holds the whole string: 256 MiB of it cannot fit in 64 MiB.
  o.argv = {"/bin/sh", "-c",
            "x=$(head -c 268435456 /dev/zero | tr '\\0' a); echo fits"};
  o.address_space_bytes = int64_t{64} << 20;
  o.timeout_s = 20;
  auto r = Run(o);
  REQUIRE(r.ok());
  CHECK(!r->timed_out);
  CHECK(r->output.find("fits") == std::string::npos);
}

// A scratch directory for confined runs.
struct Scratch {
  Scratch() { dir = *MakeTempDir("/tmp", "skilldb-confine-test-"); }
  ~Scratch() { RemoveTree(dir); }
  std::string dir;
};

// A machine that refuses namespaces: the run says which step failed, and
// the confined assertions cannot apply.
bool NoNamespaces(const RunResult& r) {
  if (r.confine_error.empty()) return false;
  WARN_MESSAGE(false, "no namespaces here: " << r.confine_error);
  CHECK(r.confine_error.find("unshare") != std::string::npos);
  CHECK(r.exit_code == 125);
  return true;
}

RunOptions Confined(const Scratch& s, const std::string& script) {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", script};
  o.cwd = s.dir;
  o.timeout_s = 20;
  o.confine = {true,
               {"/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc/ld.so.cache"},
               s.dir,
               /*mount_proc=*/true};
  return o;
}

TEST_CASE(
    "a confined child sees the toolchain read-only, its scratch writable, "
    "nothing else") {
  Scratch s;
  auto r = Run(
      Confined(s,
               "cat /etc/passwd; ls /root /home; echo x > /usr/skilldb-probe; "
               "echo kept > out.txt; echo done"));
  REQUIRE(r.ok());
  INFO(r->output);
  if (NoNamespaces(*r)) return;
  CHECK(r->output.find("done") != std::string::npos);
  CHECK(r->output.find("/etc/passwd: No such file or directory") !=
        std::string::npos);
  CHECK(r->output.find("root:x:0") == std::string::npos);
  CHECK(r->output.find("Read-only file system") != std::string::npos);
  CHECK(!FileExists("/usr/skilldb-probe"));
  CHECK(FileExists(s.dir + "/out.txt"));
}

TEST_CASE("a confined child has no network and no capabilities") {
  Scratch s;
  auto r = Run(Confined(s, "cat /proc/net/dev; grep CapEff /proc/self/status"));
  REQUIRE(r.ok());
  INFO(r->output);
  if (NoNamespaces(*r)) return;
  CHECK(r->output.find("lo:") != std::string::npos);
  // Only the loopback interface: one "name:" line after the two headers.
  size_t interfaces = 0;
  for (size_t at = r->output.find(':'); at != std::string::npos;
       at = r->output.find(':', at + 1)) {
    const size_t line = r->output.rfind('\n', at);
    const std::string head = r->output.substr(line + 1, at - line - 1);
    if (head.find('|') == std::string::npos &&
        head.find("Cap") == std::string::npos) {
      ++interfaces;
    }
  }
  CHECK(interfaces == 1);
  CHECK(r->output.find("CapEff:\t0000000000000000") != std::string::npos);
}

TEST_CASE("nothing a confined child starts outlives it") {
  Scratch s;
  // Unconfined, the background sleep would keep the output pipe open until
  // the deadline; confined, it dies with the namespace's init.
  RunOptions o = Confined(s, "sleep 30 & echo started");
  o.timeout_s = 10;
  auto r = Run(o);
  REQUIRE(r.ok());
  if (NoNamespaces(*r)) return;
  CHECK(!r->timed_out);
  CHECK(r->output.find("started") != std::string::npos);
  CHECK(r->wall_ms < 5000);
}

// Waits for a forked check: exit 0 passes, 77 means no mount namespaces
// here (false: the caller stops), anything else names the failed check.
bool ExpectChildPassed(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) {
    WARN_MESSAGE(false, "no mount namespaces here");
    return false;
  }
  CHECK(WEXITSTATUS(status) == 0);
  return true;
}

// The H200 machine mounts its driver at /usr/local/nvidia (a mount inside
// /usr) and lists /usr/local/nvidia/lib64 in LD_LIBRARY_PATH: the root must
// show a visible directory's submounts (read-only) and accept a visible
// path inside one. Reproduced with a tmpfs mounted in a private mount
// namespace of a forked child (root only).
TEST_CASE("a visible directory's submounts are visible, read-only") {
  Scratch top, work;
  const std::string sub = top.dir + "/driver";
  REQUIRE(::mkdir(sub.c_str(), 0755) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("tmpfs", sub.c_str(), "tmpfs", 0, "size=1m") != 0) {
      ::_exit(77);  // no mount namespaces here
    }
    if (::mkdir((sub + "/lib64").c_str(), 0755) != 0 ||
        !WriteFileAtomic(sub + "/lib64/libprobe.so", "driver library").ok()) {
      ::_exit(10);
    }
    RunOptions o = Confined(
        work, "cat " + sub + "/lib64/libprobe.so; echo x > " + sub +
                  "/lib64/new; echo x > " + top.dir + "/new; echo done");
    o.confine.visible.push_back(top.dir);
    o.confine.visible.push_back(sub + "/lib64");  // inside the submount
    auto r = Run(o);
    if (!r.ok()) ::_exit(11);
    if (!r->confine_error.empty()) ::_exit(12);
    if (r->output.find("driver library") == std::string::npos) ::_exit(13);
    if (r->output.find("done") == std::string::npos) ::_exit(14);
    if (FileExists(sub + "/lib64/new") || FileExists(top.dir + "/new"))
      ::_exit(15);
    size_t ro = 0;
    for (size_t at = r->output.find("Read-only"); at != std::string::npos;
         at = r->output.find("Read-only", at + 1)) {
      ++ro;
    }
    ::_exit(ro == 2 ? 0 : 16);
  }
  ExpectChildPassed(pid);
}

// In a chroot "/" is no mount point: making it private fails (EINVAL) and
// pivot_root cannot be used (found by a fresh Debian 12 chroot, where every
// confined compile ran unconfined). Reproduced in a forked child (root
// only): a private mount namespace, a jail on a tmpfs that is not its own
// mount point, the toolchain and /etc bound into it, then chroot. With the
// jail's mount private the root is built there and holds; with it shared
// (mounts below would reach the peers) confinement is refused, and no mount
// is left behind. Exit codes name the failing check.
int ConfineInChroot(const std::string& top, bool shared) {
  if (::unshare(CLONE_NEWNS) != 0 ||
      ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("tmpfs", top.c_str(), "tmpfs", 0, "size=4m") != 0) {
    return 77;  // no mount namespaces here
  }
  if (shared && ::mount(nullptr, top.c_str(), nullptr, MS_SHARED, nullptr) != 0)
    return 20;
  const std::string jail = top + "/jail";
  if (::mkdir(jail.c_str(), 0755) != 0) return 21;
  for (const char* d : {"/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc"}) {
    struct stat st;
    if (::lstat(d, &st) != 0) continue;
    const std::string at = jail + d;
    if (S_ISLNK(st.st_mode)) {
      char buf[256];
      const ssize_t n = ::readlink(d, buf, sizeof(buf) - 1);
      if (n <= 0 || ::symlink(std::string(buf, n).c_str(), at.c_str()) != 0)
        return 22;
    } else if (::mkdir(at.c_str(), 0755) != 0 ||
               ::mount(d, at.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      return 23;
    }
  }
  for (const char* d : {"/tmp", "/dev", "/proc"}) {
    if (::mkdir((jail + d).c_str(), 01777) != 0) return 24;
  }
  if (!WriteFileAtomic(jail + "/dev/null", "").ok() ||
      ::mount("/dev/null", (jail + "/dev/null").c_str(), nullptr, MS_BIND,
              nullptr) != 0 ||
      ::mount("proc", (jail + "/proc").c_str(), "proc", 0, nullptr) != 0) {
    return 25;
  }
  if (::chdir(jail.c_str()) != 0 || ::chroot(".") != 0 || ::chdir("/") != 0)
    return 26;
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 ||
      errno != EINVAL) {
    return 27;  // "/" should be no mount point here
  }
  Scratch s;
  auto r = Run(Confined(
      s, "cat /etc/passwd; echo x > /usr/skilldb-probe; echo kept > out.txt; "
         "echo done"));
  if (!r.ok()) return 28;
  if (shared) {
    if (r->confine_error.find("private mounts") == std::string::npos) return 29;
    struct stat root, scratch;
    // Nothing mounted where the refused root was to be.
    if (::stat((s.dir + "/.confined-root").c_str(), &root) == 0 &&
        ::stat(s.dir.c_str(), &scratch) == 0 && root.st_dev != scratch.st_dev)
      return 30;
    return 0;
  }
  if (!r->confine_error.empty()) return 31;
  if (r->output.find("done") == std::string::npos) return 32;
  if (r->output.find("root:x:0") != std::string::npos) return 33;
  if (r->output.find("Read-only file system") == std::string::npos) return 34;
  if (!FileExists(s.dir + "/out.txt")) return 35;
  return 0;
}

TEST_CASE("a confined child in a chroot is confined the same, or refused") {
  for (bool shared : {false, true}) {
    CAPTURE(shared);
    Scratch top;
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) ::_exit(ConfineInChroot(top.dir, shared));
    if (!ExpectChildPassed(pid)) return;
  }
}

}  // namespace
}  // namespace skilldb::verify::internal
