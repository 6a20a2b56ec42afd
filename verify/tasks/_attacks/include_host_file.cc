// Attack on the compiler: its log is the policy's feedback, so an include of
// a host file would read the host through it.
#include "/etc/passwd"
extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      skdb_stream_t s) {
  return skdb_ref_launch(in, n_in, out, n_out, s);
}
