// Attack on the compiler: 10^8 tokens of preprocessing, which would grow
// the compiler without bound if no memory limit held.
#define A0 x
#define A1 A0 A0
#define A2 A1 A1
#define A3 A2 A2
#define A4 A3 A3
#define A5 A4 A4
#define A6 A5 A5
#define A7 A6 A6
#define A8 A7 A7
#define A9 A8 A8
#define B0 A9 A9 A9 A9 A9 A9 A9 A9 A9 A9
#define B1 B0 B0 B0 B0 B0 B0 B0 B0 B0 B0
#define B2 B1 B1 B1 B1 B1 B1 B1 B1 B1 B1
#define B3 B2 B2 B2 B2 B2 B2 B2 B2 B2 B2
#define B4 B3 B3 B3 B3 B3 B3 B3 B3 B3 B3
static int x, y[] = {B4};
extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      skdb_stream_t s) {
  return skdb_ref_launch(in, n_in, out, n_out, s);
}
