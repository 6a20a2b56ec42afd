// Attack: launch() writes files outside the scratch directory, by absolute
// path and by climbing out of it.
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

static void Write(const char* path) {
  const long fd = skdb_attack_syscall(kOpenat, kAtFdcwd, (long)path, 0101 /*O_WRONLY|O_CREAT*/, 0644);
  if (fd >= 0) {
    skdb_attack_syscall(kWrite, fd, (long)"escaped\n", 8);
    skdb_attack_syscall(kClose, fd);
  }
}
extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      skdb_stream_t s) {
  Write("/tmp/skilldb-attack-launch");
  Write("../../../../../../../../tmp/skilldb-attack-climb");
  return skdb_ref_launch(in, n_in, out, n_out, s);
}
