// Counting kernel executions with CUPTI's activity API.
//
// Interposition (interpose.h) sees launch *calls*; CUPTI sees kernels that
// actually ran on the device, on which stream, however they were launched.
// The GPU worker enables it around correctness calls (it adds per-kernel
// overhead, so timed calls run without it). Where CUPTI cannot be
// initialised (no permission, no library), the worker says so and falls
// back to interposition counts alone.
//
// Process-global; called from the worker's main thread.
#ifndef SKILLDB_VERIFY_WORKER_CUPTI_MONITOR_H_
#define SKILLDB_VERIFY_WORKER_CUPTI_MONITOR_H_

#include <cstdint>
#include <string>

namespace skilldb::verify::internal {

struct CuptiCounts {
  int kernels = 0;           // kernel executions in the window
  int other_stream_kernels = 0;  // of which not on the expected stream
};

// Registers the activity buffers; false (with *why) if CUPTI is unusable.
bool CuptiInit(std::string* why);
// CUPTI's id for `stream` (a cudaStream_t) in the current context.
uint32_t CuptiStreamId(void* stream);
// Starts a counting window.
void CuptiBegin();
// Ends the window (call after a device-wide synchronize) and returns what
// ran since CuptiBegin; kernels on neither stream id count as other.
CuptiCounts CuptiEnd(uint32_t expected_stream_id, uint32_t also_allowed_id);

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_WORKER_CUPTI_MONITOR_H_
