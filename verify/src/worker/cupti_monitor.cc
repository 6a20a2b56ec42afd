#include "worker/cupti_monitor.h"

#include <cuda.h>
#include <cupti.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace skilldb::verify::internal {
namespace {

constexpr size_t kBufferBytes = 1 << 20;

struct Window {
  std::mutex mu;
  std::vector<uint32_t> kernel_streams;  // GUARDED_BY(mu)
};

Window& W() {
  static Window* w = new Window();
  return *w;
}

void CUPTIAPI OnBufferRequested(uint8_t** buffer, size_t* size,
                                size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI OnBufferCompleted(CUcontext, uint32_t, uint8_t* buffer,
                                size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  std::lock_guard<std::mutex> lock(W().mu);
  while (cuptiActivityGetNextRecord(buffer, valid, &record) ==
         CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
        record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      W().kernel_streams.push_back(k->streamId);
    }
  }
  std::free(buffer);
}

}  // namespace

bool CuptiInit(std::string* why) {
  const CUptiResult r =
      cuptiActivityRegisterCallbacks(OnBufferRequested, OnBufferCompleted);
  if (r != CUPTI_SUCCESS) {
    const char* msg = nullptr;
    cuptiGetResultString(r, &msg);
    *why = std::string("CUPTI unavailable: ") + (msg ? msg : "?");
    return false;
  }
  // A trial window proves the activity kind can be enabled here.
  const CUptiResult e = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (e != CUPTI_SUCCESS) {
    const char* msg = nullptr;
    cuptiGetResultString(e, &msg);
    *why = std::string("CUPTI activity unavailable: ") + (msg ? msg : "?");
    return false;
  }
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  return true;
}

uint32_t CuptiStreamId(void* stream) {
  CUcontext ctx = nullptr;
  cuCtxGetCurrent(&ctx);
  uint32_t id = 0;
  cuptiGetStreamIdEx(ctx, static_cast<CUstream>(stream), 0, &id);
  return id;
}

void CuptiBegin() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  {
    std::lock_guard<std::mutex> lock(W().mu);
    W().kernel_streams.clear();
  }
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

CuptiCounts CuptiEnd(uint32_t expected, uint32_t also_allowed) {
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  CuptiCounts c;
  std::lock_guard<std::mutex> lock(W().mu);
  for (uint32_t s : W().kernel_streams) {
    ++c.kernels;
    if (s != expected && s != also_allowed) ++c.other_stream_kernels;
  }
  W().kernel_streams.clear();
  return c;
}

}  // namespace skilldb::verify::internal
