// Attack: launch() starts a child process (raw clone) that renames itself
// skdb-attack-kid and sleeps a minute, outliving the verification.
// Raw x86-64 system call: no libc symbol for the static screen to see.
static inline long skdb_attack_syscall(long n, long a = 0, long b = 0, long c = 0,
                                       long d = 0, long e = 0) {
  long ret;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                   : "rcx", "r11", "memory");
  return ret;
}
static const long kOpenat = 257, kWrite = 1, kRead = 0, kClose = 3, kClone = 56,
                  kSocket = 41, kConnect = 42, kNanosleep = 35, kExit = 60,
                  kPrctl = 157;
static const long kAtFdcwd = -100;

static int g_started = 0;
extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      skdb_stream_t s) {
  if (!g_started) {
    g_started = 1;
    const long pid = skdb_attack_syscall(kClone, 17 /*SIGCHLD*/, 0, 0, 0, 0);
    if (pid == 0) {
      skdb_attack_syscall(kPrctl, 15 /*PR_SET_NAME*/, (long)"skdb-attack-kid");
      struct { long s, ns; } t = {60, 0};
      skdb_attack_syscall(kNanosleep, (long)&t, 0);
      skdb_attack_syscall(kExit, 0);
    }
  }
  return skdb_ref_launch(in, n_in, out, n_out, s);
}
