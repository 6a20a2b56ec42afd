#include "worker/sandbox.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "worker/worker_loop.h"

namespace skilldb::verify::internal {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#endif

// A tiny classic-BPF assembler. Every conditional block ends in a return on
// all of its paths, so the accumulator holds the syscall number again at
// the start of the next block.
class Program {
 public:
  void Stmt(uint16_t code, uint32_t k) { p_.push_back(BPF_STMT(code, k)); }
  void Jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) {
    p_.push_back(BPF_JUMP(code, k, jt, jf));
  }
  void LoadNr() { Stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)); }
  void Ret(uint32_t action) { Stmt(BPF_RET | BPF_K, action); }

  // if (nr == `nr`) { block } — `block` must return on every path.
  void IfNr(long nr, const std::vector<sock_filter>& block) {
    Jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0,
         static_cast<uint8_t>(block.size()));
    p_.insert(p_.end(), block.begin(), block.end());
  }
  void OnNr(long nr, uint32_t action) { IfNr(nr, {BPF_STMT(BPF_RET | BPF_K, action)}); }

  std::vector<sock_filter>& code() { return p_; }

 private:
  std::vector<sock_filter> p_;
};

uint32_t ArgLo(int i) {
  return static_cast<uint32_t>(offsetof(seccomp_data, args) + 8 * i);
}
uint32_t ArgHi(int i) { return ArgLo(i) + 4; }

sock_filter Ld(uint32_t off) {
  return BPF_STMT(BPF_LD | BPF_W | BPF_ABS, off);
}
sock_filter RetK(uint32_t action) { return BPF_STMT(BPF_RET | BPF_K, action); }
sock_filter Jeq(uint32_t k, uint8_t jt, uint8_t jf) {
  return BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, jt, jf);
}
sock_filter Jset(uint32_t k, uint8_t jt, uint8_t jf) {
  return BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, k, jt, jf);
}

// action if (arg `i` has any of `bits`) else allow.
std::vector<sock_filter> FlagBlock(int i, uint32_t bits, uint32_t action) {
  return {Ld(ArgLo(i)), Jset(bits, 0, 1), RetK(action),
          RetK(SECCOMP_RET_ALLOW)};
}

// allow if (arg `i` == value) else action.
std::vector<sock_filter> EqBlock(int i, uint32_t value, uint32_t action) {
  return {Ld(ArgLo(i)), Jeq(value, 0, 1), RetK(SECCOMP_RET_ALLOW),
          RetK(action)};
}

void Prologue(Program* p, uint32_t x32_action) {
  p->Stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
  p->Jump(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0);
  p->Ret(SECCOMP_RET_KILL_PROCESS);
  p->LoadNr();
  p->Jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1);  // x32 ABI
  p->Ret(x32_action);
}

Status Install(Program* p) {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return Status::FailedPrecondition(std::string("no_new_privs: ") +
                                      std::strerror(errno));
  }
  sock_fprog prog{static_cast<unsigned short>(p->code().size()),
                  p->code().data()};
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
    return Status::FailedPrecondition(std::string("seccomp: ") +
                                      std::strerror(errno));
  }
  return Status::Ok();
}

constexpr uint32_t kWriteFlags = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC |
                                 O_APPEND;

// The host allowlist; `writes_ok` when the chroot confines all paths.
Program HostFilter(bool writes_ok) {
  Program p;
  const uint32_t trap = SECCOMP_RET_TRAP;
  const uint32_t write_action = writes_ok ? SECCOMP_RET_ALLOW : trap;
  const uint32_t pid = static_cast<uint32_t>(::getpid());
  Prologue(&p, trap);
  for (long nr : {SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_pread64,
                  SYS_close, SYS_fstat, SYS_newfstatat, SYS_statx, SYS_lseek,
                  SYS_mmap, SYS_munmap, SYS_mprotect, SYS_mremap, SYS_madvise,
                  SYS_brk, SYS_rt_sigprocmask, SYS_rt_sigreturn,
                  SYS_sigaltstack, SYS_exit, SYS_exit_group, SYS_futex,
                  SYS_getpid, SYS_gettid, SYS_getppid, SYS_clock_gettime,
                  SYS_clock_getres, SYS_gettimeofday, SYS_nanosleep,
                  SYS_clock_nanosleep, SYS_sched_yield, SYS_getrandom,
                  SYS_restart_syscall, SYS_getrusage, SYS_times, SYS_uname,
                  SYS_sched_getaffinity, SYS_rseq, SYS_membarrier, SYS_fcntl,
                  SYS_getcwd, SYS_access, SYS_faccessat, SYS_readlink,
                  SYS_getuid, SYS_geteuid, SYS_getgid, SYS_getegid, SYS_poll,
                  SYS_ppoll, SYS_sendto, SYS_recvfrom, SYS_sendmsg,
                  SYS_recvmsg, SYS_set_robust_list, SYS_getdents64}) {
    p.OnNr(nr, SECCOMP_RET_ALLOW);
  }
  p.IfNr(SYS_openat, FlagBlock(2, kWriteFlags, write_action));
  p.IfNr(SYS_open, FlagBlock(1, kWriteFlags, write_action));
  p.OnNr(SYS_creat, write_action);
  p.IfNr(SYS_kill, EqBlock(0, pid, trap));
  p.IfNr(SYS_tgkill, EqBlock(0, pid, trap));
  p.IfNr(SYS_rt_sigaction, {Ld(ArgLo(0)), Jeq(SIGSYS, 0, 1), RetK(trap),
                            RetK(SECCOMP_RET_ALLOW)});
  // prlimit64 may read limits (new_limit == NULL) but never change them.
  p.IfNr(SYS_prlimit64, {Ld(ArgLo(2)), Jeq(0, 0, 3), Ld(ArgHi(2)),
                         Jeq(0, 0, 1), RetK(SECCOMP_RET_ALLOW), RetK(trap)});
  p.OnNr(SYS_ioctl, SECCOMP_RET_ERRNO | ENOTTY);
  // glibc tries clone3 first and falls back to clone, which then traps
  // with a clear name.
  p.OnNr(SYS_clone3, SECCOMP_RET_ERRNO | ENOSYS);
  p.Ret(trap);
  return p;
}

Program GpuFilter() {
  Program p;
  const uint32_t deny = SECCOMP_RET_ERRNO | EPERM;
  const uint32_t pid = static_cast<uint32_t>(::getpid());
  Prologue(&p, deny);
  p.IfNr(SYS_socket, EqBlock(0, AF_UNIX, deny));
  p.IfNr(SYS_clone, {Ld(ArgLo(0)), Jset(CLONE_THREAD, 0, 1),
                     RetK(SECCOMP_RET_ALLOW), RetK(deny)});
  p.OnNr(SYS_clone3, SECCOMP_RET_ERRNO | ENOSYS);
  p.IfNr(SYS_kill, EqBlock(0, pid, deny));
  p.IfNr(SYS_tgkill, EqBlock(0, pid, deny));
  for (long nr : {SYS_execve, SYS_execveat, SYS_fork, SYS_vfork, SYS_ptrace,
                  SYS_process_vm_readv, SYS_process_vm_writev,
                  SYS_clock_settime, SYS_settimeofday, SYS_adjtimex,
                  SYS_clock_adjtime, SYS_mount, SYS_umount2, SYS_chroot,
                  SYS_pivot_root, SYS_setns, SYS_unshare, SYS_kexec_load,
                  SYS_init_module, SYS_finit_module, SYS_reboot}) {
    p.OnNr(nr, deny);
  }
  p.Ret(SECCOMP_RET_ALLOW);
  return p;
}

// Async-signal-safe report of a trapped system call, then exit.
void OnSigsys(int, siginfo_t* info, void*) {
  char buf[96];
  const char prefix[] = "\nskilldb-sandbox: forbidden system call ";
  size_t n = 0;
  for (char c : prefix) {
    if (c != '\0') buf[n++] = c;
  }
  int nr = info->si_syscall;
  char digits[12];
  int d = 0;
  do {
    digits[d++] = static_cast<char>('0' + nr % 10);
    nr /= 10;
  } while (nr > 0 && d < 11);
  while (d > 0) buf[n++] = digits[--d];
  buf[n++] = '\n';
  [[maybe_unused]] ssize_t w = ::write(2, buf, n);
  ::_exit(kWorkerExitSandboxViolation);
}

void SetLimit(int resource, int64_t value) {
  rlimit rl{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  ::setrlimit(resource, &rl);
}

void CloseOtherFds(int keep) {
  for (int fd = 3; fd < 1024; ++fd) {
    if (fd != keep) ::close(fd);
  }
}

bool WriteProcFile(const char* path, const std::string& text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) ==
                  static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

// New net + mount namespaces (through a user namespace when not root),
// then a chroot into `scratch`. Returns false with errno set on the first
// step that fails. Only system calls: safe in a forked child.
bool Confine(bool user_ns, const char* scratch, const std::string& uid_map,
             const std::string& gid_map) {
  const int flags = CLONE_NEWNET | CLONE_NEWNS | (user_ns ? CLONE_NEWUSER : 0);
  if (::unshare(flags) != 0) return false;
  if (user_ns) {
    WriteProcFile("/proc/self/setgroups", "deny");
    if (!WriteProcFile("/proc/self/uid_map", uid_map) ||
        !WriteProcFile("/proc/self/gid_map", gid_map)) {
      return false;
    }
  }
  ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr);
  return ::chroot(scratch) == 0 && ::chdir("/") == 0;
}

// After the chroot the scratch directory is the whole filesystem, so a
// candidate's shared-library dependencies can only bind to libraries the
// worker already has loaded (the loader matches them by soname). The worker
// itself may carry the C++ runtime statically (a toolchain that links
// libstdc++ statically, as on the GPU machine), so the runtimes a C++
// candidate needs are loaded here, before the chroot. A library that cannot
// be found is named in the notes; candidates needing it then fail to load
// with the loader's message.
void PreloadCandidateRuntimes(std::string* notes) {
  for (const char* lib : {"libstdc++.so.6", "libgcc_s.so.1", "libm.so.6"}) {
    if (::dlopen(lib, RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      *notes += std::string(" (") + lib + " not preloaded)";
    }
  }
}

// Tries Confine in a throwaway child first: an environment may kill a
// process for unshare or chroot (a container's own seccomp policy) instead
// of failing the call, and the worker must survive that. Exit status 0:
// confined; otherwise the errno of the failing step.
bool ConfineToScratch(const std::string& scratch, std::string* notes) {
  const std::string uid_map = "0 " + std::to_string(::geteuid()) + " 1";
  const std::string gid_map = "0 " + std::to_string(::getegid()) + " 1";
  for (bool user_ns : {false, true}) {
    const pid_t pid = ::fork();
    if (pid < 0) break;
    if (pid == 0) {
      ::_exit(Confine(user_ns, scratch.c_str(), uid_map, gid_map)
                  ? 0
                  : (errno == 0 ? 255 : errno & 0xff));
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      if (!Confine(user_ns, scratch.c_str(), uid_map, gid_map)) break;
      *notes += user_ns ? " userns netns mntns chroot" : " netns mntns chroot";
      return true;
    }
    if (user_ns) {
      *notes += WIFEXITED(status)
                    ? " (no namespaces: " +
                          std::string(std::strerror(WEXITSTATUS(status))) + ")"
                    : " (no namespaces: the probe was killed by signal " +
                          std::to_string(WTERMSIG(status)) + ")";
      return false;
    }
  }
  *notes += " (no namespaces)";
  return false;
}

}  // namespace

Result<std::string> EnterHostSandbox(const HostSandboxOptions& o) {
#if !defined(__x86_64__)
  return Status::FailedPrecondition("the seccomp filter is x86-64 only");
#else
  if (o.scratch_dir.empty()) {
    return Status::InvalidArgument("HostSandboxOptions.scratch_dir is empty");
  }
  std::string notes = "sandbox:";
  CloseOtherFds(o.keep_fd);
  SetLimit(RLIMIT_CORE, 0);
  SetLimit(RLIMIT_FSIZE, o.file_size_bytes);
  SetLimit(RLIMIT_CPU, o.cpu_seconds);
  bool confined = false;
  if (o.isolate_filesystem) {
    PreloadCandidateRuntimes(&notes);
    confined = ConfineToScratch(o.scratch_dir, &notes);
  }
  if (!confined && ::chdir(o.scratch_dir.c_str()) != 0) {
    return Status::FailedPrecondition("cannot enter the scratch directory");
  }
  SetLimit(RLIMIT_AS, o.memory_bytes);
  SetLimit(RLIMIT_NOFILE, 64);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = OnSigsys;
  sa.sa_flags = SA_SIGINFO;
  ::sigaction(SIGSYS, &sa, nullptr);
  Program p = HostFilter(/*writes_ok=*/confined);
  SKILLDB_RETURN_IF_ERROR(Install(&p));
  notes += confined ? " seccomp-allowlist" : " seccomp-allowlist(no-writes)";
  return notes;
#endif
}

Result<std::string> EnterGpuSandbox(int64_t file_size_bytes) {
#if !defined(__x86_64__)
  return Status::FailedPrecondition("the seccomp filter is x86-64 only");
#else
  SetLimit(RLIMIT_CORE, 0);
  SetLimit(RLIMIT_FSIZE, file_size_bytes);
  Program p = GpuFilter();
  SKILLDB_RETURN_IF_ERROR(Install(&p));
  return std::string("sandbox: seccomp-denylist");
#endif
}

std::string SyscallName(int nr) {
  struct Entry {
    long nr;
    const char* name;
  };
  static const Entry kNames[] = {
      {SYS_socket, "socket"},       {SYS_connect, "connect"},
      {SYS_clone, "clone (thread or process creation)"},
      {SYS_fork, "fork"},           {SYS_vfork, "vfork"},
      {SYS_execve, "execve"},       {SYS_kill, "kill"},
      {SYS_tgkill, "tgkill"},       {SYS_ptrace, "ptrace"},
      {SYS_openat, "openat (for writing)"},
      {SYS_open, "open (for writing)"},
      {SYS_creat, "creat"},         {SYS_clock_settime, "clock_settime"},
      {SYS_settimeofday, "settimeofday"}, {SYS_adjtimex, "adjtimex"},
      {SYS_mkdir, "mkdir"},         {SYS_unlink, "unlink"},
      {SYS_rename, "rename"},       {SYS_rt_sigaction, "rt_sigaction(SIGSYS)"},
      {SYS_prlimit64, "prlimit64 (set)"}, {SYS_setrlimit, "setrlimit"},
      {SYS_mount, "mount"},         {SYS_chroot, "chroot"},
      {SYS_bind, "bind"},           {SYS_listen, "listen"},
      {SYS_process_vm_writev, "process_vm_writev"},
  };
  for (const Entry& e : kNames) {
    if (e.nr == nr) return e.name;
  }
  return "#" + std::to_string(nr);
}

}  // namespace skilldb::verify::internal
