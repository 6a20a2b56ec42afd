// The float64 oracle ABI: each task's oracle.cc computes the task's outputs
// in double precision from double inputs (exact copies of the values the
// candidate received). Oracles are team-written, trusted code: the verifier
// compiles them with the host compiler and runs them in its own process.
//
//   extern "C" int oracle(const OracleTensor* inputs, int n_inputs,
//                         OracleTensor* outputs, int n_outputs);
//
// Return 0 on success. Shapes are row-major; outputs are preallocated.
#ifndef SKILLDB_ORACLE_H_
#define SKILLDB_ORACLE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct OracleTensor {
  double* data;
  int32_t ndim;
  int64_t shape[8];
  int64_t numel;
} OracleTensor;

#ifdef __cplusplus
}
#endif

#endif  // SKILLDB_ORACLE_H_
