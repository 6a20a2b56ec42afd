// Attack: launch() opens an AF_INET socket and connects out (1.1.1.1:53);
// it returns 78 if the socket opened, 79 if the connection succeeded.
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

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      skdb_stream_t s) {
  const long fd = skdb_attack_syscall(kSocket, 2 /*AF_INET*/, 1 /*SOCK_STREAM*/, 0);
  if (fd >= 0) {
    struct { unsigned short family, port; unsigned char addr[4]; char zero[8]; } sa =
        {2, 0x3500, {1, 1, 1, 1}, {0}};
    const long rc = skdb_attack_syscall(kConnect, fd, (long)&sa, sizeof(sa));
    skdb_attack_syscall(kClose, fd);
    return rc == 0 ? 79 : 78;
  }
  return skdb_ref_launch(in, n_in, out, n_out, s);
}
