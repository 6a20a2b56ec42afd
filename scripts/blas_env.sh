# Sourced by scripts/test.sh (and usable by anyone running libtorch work on
# the CPU): exports OPENBLAS_CORETYPE when Debian 12's OpenBLAS (0.3.21) does
# not know the CPU. It then falls back to its SSE3 "Prescott" kernels; on this
# project's build machines (a Xeon with AVX-512 that 0.3.21 predates) that
# made every libtorch matmul 2-3x slower (the MiniLM embedding test: 38 s,
# 17.6 s with SkylakeX kernels). Leaves a setting the user made alone.
if [[ -z "${OPENBLAS_CORETYPE:-}" ]]; then
  _skilldb_blas_core="$(/usr/bin/python3 -c '
import ctypes
try:
    lib = ctypes.CDLL("libopenblas.so.0")
    lib.openblas_get_corename.restype = ctypes.c_char_p
    print(lib.openblas_get_corename().decode())
except Exception:
    pass' 2>/dev/null || true)"
  if [[ "$_skilldb_blas_core" == Prescott ]]; then
    if grep -qw avx512f /proc/cpuinfo; then
      export OPENBLAS_CORETYPE=SkylakeX
    elif grep -qw avx2 /proc/cpuinfo; then
      export OPENBLAS_CORETYPE=Haswell
    fi
  fi
  unset _skilldb_blas_core
fi
