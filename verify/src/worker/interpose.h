// Launch interposition for the GPU worker.
//
// The worker executable defines the CUDA runtime's launch, copy, memset and
// allocation entry points itself and exports them (-Wl,--dynamic-list), so a
// candidate's calls (which nvcc emits against libcudart.so) bind to these
// wrappers first; each wrapper records what the candidate did and forwards
// to the real libcudart function (dlvsym RTLD_NEXT). This counts kernel
// launches (a decoy kernel that is never launched shows as zero), rejects
// streams other than the one launch() was given, refuses work enqueued from
// other host threads, and caps the candidate's device allocations.
//
// The monitor is process-global state, touched only from wrappers and from
// the worker's main thread; counters are atomics.
#ifndef SKILLDB_VERIFY_WORKER_INTERPOSE_H_
#define SKILLDB_VERIFY_WORKER_INTERPOSE_H_

#include <cstdint>
#include <string>

namespace skilldb::verify::internal {

struct MonitorStats {
  int kernels = 0;             // kernel launches by the candidate
  int foreign_stream_ops = 0;  // ops on a stream other than the given one
  std::string foreign_detail;  // the first one, in words
  bool alloc_denied = false;   // an allocation over the memory cap
};

// Call once from the main thread before any candidate is loaded.
void MonitorInit(int64_t candidate_memory_limit_bytes);
// Marks the start and end of one launch() call; `stream` is the one it got.
void MonitorBegin(void* stream);
MonitorStats MonitorEnd();
// Operations attempted from other threads (refused) since the last call.
int MonitorTakeLateOps();
// Device bytes the candidate currently holds through cudaMalloc*.
int64_t MonitorCandidateBytes();

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_WORKER_INTERPOSE_H_
