#include "worker/sandbox.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
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

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "confine.h"
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

// The CUDA worker's allowlist, installed after the CUDA context exists (the
// driver's initialisation makes calls no candidate needs: namespaces are
// entered before it, see EnterGpuNamespaces). Broader than the host's: the
// runtime keeps calling ioctl on the device nodes, maps and unmaps memory,
// starts threads, polls and uses NUMA calls on every launch or allocation.
// Opens are allowed (the driver and the loader open files lazily); where
// the mount namespace does not hold, `writes_ok` is false and every open
// that creates, truncates or appends, and every unlink, rename or mkdir,
// traps instead (an existing file opened O_RDWR stays writable then).
// Processes, exec, sockets other than AF_UNIX, ptrace, mounts, namespaces,
// clock setting, module loading and anything unlisted trap.
Program GpuFilter(bool writes_ok) {
  Program p;
  const uint32_t trap = SECCOMP_RET_TRAP;
  const uint32_t pid = static_cast<uint32_t>(::getpid());
  Prologue(&p, trap);
  for (long nr :
       {SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_pread64, SYS_pwrite64,
        SYS_close, SYS_fstat, SYS_stat, SYS_lstat, SYS_newfstatat, SYS_statx,
        SYS_lseek, SYS_mmap, SYS_munmap, SYS_mprotect, SYS_mremap, SYS_madvise,
        SYS_msync, SYS_mlock, SYS_munlock, SYS_mincore, SYS_brk, SYS_ioctl,
        SYS_rt_sigprocmask, SYS_rt_sigreturn, SYS_rt_sigtimedwait,
        SYS_sigaltstack, SYS_exit, SYS_exit_group, SYS_futex,
        SYS_set_robust_list, SYS_get_robust_list, SYS_getpid, SYS_gettid,
        SYS_getppid, SYS_getpgrp, SYS_clock_gettime, SYS_clock_getres,
        SYS_gettimeofday, SYS_time, SYS_nanosleep, SYS_clock_nanosleep,
        SYS_sched_yield, SYS_sched_getaffinity, SYS_sched_setaffinity,
        SYS_sched_getparam, SYS_sched_getscheduler, SYS_sched_get_priority_max,
        SYS_sched_get_priority_min, SYS_getpriority, SYS_setpriority,
        SYS_getcpu, SYS_getrandom, SYS_restart_syscall, SYS_getrusage,
        SYS_times, SYS_sysinfo, SYS_uname, SYS_rseq, SYS_membarrier,
        SYS_fcntl, SYS_dup, SYS_dup2, SYS_dup3, SYS_pipe, SYS_pipe2,
        SYS_eventfd, SYS_eventfd2, SYS_getcwd, SYS_chdir, SYS_access,
        SYS_faccessat, 439 /* faccessat2 */, SYS_readlink, SYS_readlinkat,
        SYS_getdents64, SYS_getuid, SYS_geteuid, SYS_getgid, SYS_getegid,
        SYS_getresuid, SYS_getresgid, SYS_getgroups, SYS_poll, SYS_ppoll,
        SYS_select, SYS_pselect6, SYS_epoll_create, SYS_epoll_create1,
        SYS_epoll_ctl, SYS_epoll_wait, SYS_epoll_pwait, 441 /* epoll_pwait2 */,
        SYS_sendto, SYS_recvfrom, SYS_sendmsg, SYS_recvmsg, SYS_shutdown,
        SYS_getsockopt, SYS_setsockopt, SYS_getsockname, SYS_getpeername,
        SYS_mbind, SYS_get_mempolicy, SYS_set_mempolicy, SYS_memfd_create,
        SYS_ftruncate, SYS_fallocate, SYS_fstatfs, SYS_statfs, SYS_fsync,
        SYS_fdatasync, SYS_flock, SYS_timerfd_create, SYS_timerfd_settime,
        SYS_timerfd_gettime, SYS_sched_getattr, SYS_prctl, SYS_capget,
        SYS_arch_prctl, SYS_set_tid_address,
        SYS_futex_waitv, SYS_tgkill, SYS_close_range, SYS_move_pages,
        SYS_timer_create, SYS_timer_settime, SYS_timer_gettime,
        SYS_timer_delete, SYS_getitimer, SYS_setitimer, SYS_alarm,
        SYS_fadvise64, SYS_mlock2, SYS_getxattr, SYS_lgetxattr,
        SYS_fgetxattr, SYS_wait4, SYS_waitid, SYS_sched_setattr,
        SYS_rt_sigsuspend, SYS_rt_sigpending, SYS_sched_setparam,
        SYS_sched_setscheduler, SYS_getsid, SYS_getpgid, SYS_fchdir,
        SYS_umask, SYS_pause, SYS_sendmmsg, SYS_recvmmsg}) {
    if (nr == SYS_tgkill) continue;
    p.OnNr(nr, SECCOMP_RET_ALLOW);
  }
  // Inside the mount namespace only the scratch is writable, so directory
  // changes (the driver's JIT cache) are harmless there; without it they
  // trap.
  for (long nr : {SYS_mkdir, SYS_mkdirat, SYS_rename, SYS_renameat,
                  SYS_renameat2, SYS_utimensat, SYS_fchmod, SYS_unlink,
                  SYS_unlinkat}) {
    p.OnNr(nr, writes_ok ? SECCOMP_RET_ALLOW : trap);
  }
  const uint32_t open_action = writes_ok ? SECCOMP_RET_ALLOW : trap;
  // The driver opens device nodes O_RDWR lazily (measured on the H200: a
  // task whose kernel sets its shared memory size), so without the mount
  // namespace only creating, truncating and appending opens trap.
  constexpr uint32_t kCreateFlags = O_CREAT | O_TRUNC | O_APPEND;
  p.IfNr(SYS_openat, FlagBlock(2, writes_ok ? 0 : kCreateFlags, open_action));
  p.IfNr(SYS_open, FlagBlock(1, writes_ok ? 0 : kCreateFlags, open_action));
  p.OnNr(SYS_creat, open_action);
  p.OnNr(SYS_openat2, SECCOMP_RET_ERRNO | ENOSYS);  // glibc falls back
  // Threads only: a clone without CLONE_THREAD is a new process.
  p.IfNr(SYS_clone, {Ld(ArgLo(0)), Jset(CLONE_THREAD, 0, 1),
                     RetK(SECCOMP_RET_ALLOW), RetK(trap)});
  p.OnNr(SYS_clone3, SECCOMP_RET_ERRNO | ENOSYS);  // glibc falls back to clone
  p.IfNr(SYS_socket, EqBlock(0, AF_UNIX, trap));
  p.IfNr(SYS_socketpair, EqBlock(0, AF_UNIX, trap));
  p.IfNr(SYS_connect, {RetK(SECCOMP_RET_ERRNO | EACCES)});
  p.IfNr(SYS_kill, EqBlock(0, pid, trap));
  p.IfNr(SYS_tgkill, EqBlock(0, pid, trap));
  p.IfNr(SYS_rt_sigaction, {Ld(ArgLo(0)), Jeq(SIGSYS, 0, 1), RetK(trap),
                            RetK(SECCOMP_RET_ALLOW)});
  p.IfNr(SYS_prlimit64, {Ld(ArgLo(2)), Jeq(0, 0, 3), Ld(ArgHi(2)),
                         Jeq(0, 0, 1), RetK(SECCOMP_RET_ALLOW), RetK(trap)});
  p.OnNr(SYS_getrlimit, SECCOMP_RET_ALLOW);
  p.Ret(trap);
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

void SetHardLimit(int resource, int64_t value) {
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
  SetHardLimit(RLIMIT_CORE, 0);
  SetHardLimit(RLIMIT_FSIZE, o.file_size_bytes);
  SetHardLimit(RLIMIT_CPU, o.cpu_seconds);
  bool confined = false;
  if (o.isolate_filesystem) {
    PreloadCandidateRuntimes(&notes);
    confined = ConfineToScratch(o.scratch_dir, &notes);
  }
  if (!confined && ::chdir(o.scratch_dir.c_str()) != 0) {
    return Status::FailedPrecondition("cannot enter the scratch directory");
  }
  SetHardLimit(RLIMIT_AS, o.memory_bytes);
  SetHardLimit(RLIMIT_NOFILE, 64);
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

namespace {

// What the CUDA worker's root holds: the system libraries (the driver's
// libcuda and its JIT libraries live under /usr), the toolkit, the
// directories of LD_LIBRARY_PATH, /sys read-only (the driver reads the PCI
// and NUMA topology there), the GPU device nodes, and the scratch.
RootSpec GpuRoot(const std::string& scratch,
                 const std::vector<std::string>& extra) {
  RootSpec r;
  r.visible = {"/usr", "/lib", "/lib64", "/lib32", "/etc/ld.so.cache",
               "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/sys"};
  for (const std::string& p : extra) {
    char real[PATH_MAX];
    if (!p.empty() && p[0] == '/' && ::realpath(p.c_str(), real) != nullptr) {
      r.visible.push_back(real);
      if (p != real) r.visible.push_back(p);  // the link's own path too
    }
  }
  char buf[PATH_MAX];
  if (::realpath("/usr/local/cuda", buf) != nullptr) r.visible.push_back(buf);
  if (const char* ld = std::getenv("LD_LIBRARY_PATH")) {
    std::string dirs = ld;
    size_t start = 0;
    while (start < dirs.size()) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      const std::string d = dirs.substr(start, end - start);
      if (!d.empty() && d[0] == '/' && ::realpath(d.c_str(), buf) != nullptr) {
        r.visible.push_back(buf);
      }
      start = end + 1;
    }
  }
  std::sort(r.visible.begin(), r.visible.end());
  r.visible.erase(std::unique(r.visible.begin(), r.visible.end()), r.visible.end());
  r.devices = {"/dev/zero", "/dev/urandom", "/dev/random", "/dev/full"};
  for (const char* dir : {"/dev", "/dev/nvidia-caps"}) {
    if (DIR* d = ::opendir(dir)) {
      while (dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.rfind("nvidia", 0) == 0) {
          const std::string path = std::string(dir) + "/" + name;
          struct stat st;
          if (::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode)) {
            r.devices.push_back(path);
          }
        }
      }
      ::closedir(d);
    }
  }
  r.writable_dir = scratch;
  r.mount_proc = true;
  return r;
}

constexpr int kNamespaceFlags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID |
                                CLONE_NEWIPC | CLONE_NEWUTS;

// In a process about to become the namespaces' first: unshare, maps, fork;
// the child builds the root. Returns the child's pid in the parent (0 in
// the child), or -1 with *step/*err set.
pid_t ForkIntoNamespaces(const Plan& plan, int* step, int* err) {
  if (::unshare(kNamespaceFlags | (plan.user_ns ? CLONE_NEWUSER : 0)) != 0) {
    *step = kStepUnshare;
    *err = errno;
    return -1;
  }
  if (!WriteIdMaps(plan)) {
    *step = kStepMaps;
    *err = errno;
    return -1;
  }
  const pid_t child = ::fork();
  if (child < 0) {
    *step = kStepFork;
    *err = errno;
    return -1;
  }
  return child;
}

int WaitFor(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

Status EnterGpuNamespaces(const GpuSandboxOptions& o, std::string* notes) {
  if (o.scratch_dir.empty()) {
    return Status::InvalidArgument("GpuSandboxOptions.scratch_dir is empty");
  }
  const Plan plan = MakePlan(GpuRoot(o.scratch_dir, o.extra_visible));
  // Probe in a throwaway child first (an environment may kill a process for
  // unshare instead of failing the call): the worker must survive that.
  int err_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    return Status::FailedPrecondition("pipe for the namespace probe");
  }
  const pid_t probe = ::fork();
  if (probe == 0) {
    ::close(err_pipe[0]);
    int step = 0, err = 0;
    const pid_t inner = ForkIntoNamespaces(plan, &step, &err);
    if (inner == 0) {
      if (!EnterRoot(plan, &step, &err)) {
        int msg[2] = {step, err};
        [[maybe_unused]] ssize_t n = ::write(err_pipe[1], msg, sizeof(msg));
        ::_exit(1);
      }
      ::_exit(0);
    }
    if (inner < 0) {
      int msg[2] = {step, err};
      [[maybe_unused]] ssize_t n = ::write(err_pipe[1], msg, sizeof(msg));
      ::_exit(1);
    }
    const int st = WaitFor(inner);
    ::_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 2);
  }
  ::close(err_pipe[1]);
  if (probe < 0) {
    ::close(err_pipe[0]);
    *notes += " (no namespaces: fork failed)";
    return Status::Ok();
  }
  const int st = WaitFor(probe);
  int msg[2] = {0, 0};
  const bool reported = ::read(err_pipe[0], msg, sizeof(msg)) == sizeof(msg);
  ::close(err_pipe[0]);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    *notes += reported ? " (no namespaces: " + StepName(&plan, msg[0]) + ": " +
                             std::strerror(msg[1]) + ")"
              : WIFSIGNALED(st)
                  ? " (no namespaces: the probe was killed by signal " +
                        std::to_string(WTERMSIG(st)) + ")"
                  : std::string(" (no namespaces)");
    return Status::Ok();
  }
  // The real thing. This process stays outside as a relay: it waits for the
  // confined worker and exits as it did, so the verifier's view (its child's
  // exit status, a kill of its process group) is unchanged.
  int step = 0, err = 0;
  const pid_t worker = ForkIntoNamespaces(plan, &step, &err);
  if (worker < 0) {
    *notes += " (no namespaces: " + StepName(&plan, step) + ": " +
              std::strerror(err) + ")";
    return Status::Ok();
  }
  if (worker > 0) {
    for (int fd = 3; fd < 1024; ++fd) ::close(fd);
    const int status = WaitFor(worker);
    if (WIFSIGNALED(status)) {
      struct sigaction dfl;
      std::memset(&dfl, 0, sizeof(dfl));
      dfl.sa_handler = SIG_DFL;
      ::sigaction(WTERMSIG(status), &dfl, nullptr);
      SetHardLimit(RLIMIT_CORE, 0);
      ::kill(::getpid(), WTERMSIG(status));
      ::_exit(128 + WTERMSIG(status));
    }
    ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : kWorkerExitSandboxSetup);
  }
  // The worker: PID 1 of its namespace, dies with the relay.
  const pid_t relay = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (::getppid() != relay) ::_exit(kWorkerExitSandboxSetup);
  if (!EnterRoot(plan, &step, &err)) {
    return Status::FailedPrecondition("entering the worker's root: " +
                                      StepName(&plan, step) + ": " +
                                      std::strerror(err));
  }
  if (::chdir(o.scratch_dir.c_str()) != 0) {
    return Status::FailedPrecondition("cannot enter the scratch directory");
  }
  *notes += std::string(plan.user_ns ? " userns" : "") + " netns mntns pidns";
  return Status::Ok();
}

Result<std::string> EnterGpuSandbox(const GpuSandboxOptions& o,
                                    const std::string& namespace_notes) {
#if !defined(__x86_64__)
  return Status::FailedPrecondition("the seccomp filter is x86-64 only");
#else
  std::string notes = "sandbox:" + namespace_notes;
  const bool confined = namespace_notes.find("mntns") != std::string::npos;
  SetHardLimit(RLIMIT_CORE, 0);
  SetHardLimit(RLIMIT_FSIZE, o.file_size_bytes);
  int step = 0, err = 0;
  if (DropPrivileges(&step, &err)) {
    notes += " no-caps";
  } else {
    notes += std::string(" (capabilities kept: ") + std::strerror(err) + ")";
  }
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = OnSigsys;
  sa.sa_flags = SA_SIGINFO;
  ::sigaction(SIGSYS, &sa, nullptr);
  Program p = GpuFilter(/*writes_ok=*/confined);
  SKILLDB_RETURN_IF_ERROR(Install(&p));
  notes += confined ? " seccomp-allowlist(after-cuda-init)"
                    : " seccomp-allowlist(after-cuda-init,no-writes)";
  return notes;
#endif
}

Status InstallRunnerBuildFilter() {
#if !defined(__x86_64__)
  return Status::FailedPrecondition("the seccomp filter is x86-64 only");
#else
  Program p;
  const uint32_t trap = SECCOMP_RET_TRAP;
  Prologue(&p, trap);
  for (long nr : {SYS_ptrace, SYS_mount, SYS_umount2, SYS_pivot_root,
                  SYS_chroot, SYS_setns, SYS_unshare, SYS_bpf,
                  SYS_perf_event_open, SYS_kexec_load, SYS_kexec_file_load,
                  SYS_init_module, SYS_finit_module, SYS_delete_module,
                  SYS_keyctl, SYS_add_key, SYS_request_key, SYS_userfaultfd,
                  SYS_process_vm_readv, SYS_process_vm_writev,
                  SYS_clock_settime, SYS_settimeofday, SYS_adjtimex,
                  SYS_clock_adjtime, SYS_reboot, SYS_swapon, SYS_swapoff,
                  SYS_acct, SYS_quotactl, SYS_name_to_handle_at,
                  SYS_open_by_handle_at, SYS_iopl, SYS_ioperm,
                  SYS_syslog, SYS_personality, SYS_fanotify_init,
                  SYS_lookup_dcookie, 425 /* io_uring_setup */,
                  428 /* open_tree */, 429 /* move_mount */, 430 /* fsopen */,
                  432 /* fsmount */}) {
    p.OnNr(nr, trap);
  }
  // Namespaces through clone: the CLONE_NEW* flags (0x7e020000).
  p.IfNr(SYS_clone, FlagBlock(0, 0x7e020000u, trap));
  p.OnNr(SYS_clone3, SECCOMP_RET_ERRNO | ENOSYS);  // glibc falls back to clone
  p.IfNr(SYS_socket, EqBlock(0, AF_UNIX, SECCOMP_RET_ERRNO | EACCES));
  p.Ret(SECCOMP_RET_ALLOW);
  return Install(&p);
#endif
}

Result<std::string> EnterRunnerRunSandbox(bool writes_ok) {
#if !defined(__x86_64__)
  return Status::FailedPrecondition("the seccomp filter is x86-64 only");
#else
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = OnSigsys;
  sa.sa_flags = SA_SIGINFO;
  ::sigaction(SIGSYS, &sa, nullptr);
  Program p = GpuFilter(writes_ok);
  SKILLDB_RETURN_IF_ERROR(Install(&p));
  return std::string(writes_ok ? "seccomp-allowlist(run)"
                               : "seccomp-allowlist(run,no-writes)");
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
