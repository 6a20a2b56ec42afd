#include "symbol_policy.h"

#include <doctest/doctest.h>

namespace skilldb::verify::internal {
namespace {

ElfDynamicInfo Info(std::vector<DynamicSymbol> symbols) {
  ElfDynamicInfo info;
  info.symbols = std::move(symbols);
  info.needed = {"libcudart.so.13", "libstdc++.so.6", "libc.so.6"};
  return info;
}

DynamicSymbol Import(const char* name) { return {name, false, false, true}; }
DynamicSymbol Export(const char* name) { return {name, true, false, true}; }

TEST_CASE("a plain CUDA candidate passes the static screen") {
  const auto f = ScreenSymbols(
      SourceLanguage::kCuda,
      Info({Export("launch"), Import("__cudaLaunchKernel"), Import("__cudaRegisterFatBinary"),
            Import("cudaGetLastError"), Import("cudaMallocAsync"), Import("expf"),
            Import("memcpy"), Import("_Znwm"), Import("__cxa_guard_acquire"),
            // Host stubs of non-inline __device__ functions call exit().
            Import("exit")}));
  CHECK(f.empty());
}

TEST_CASE("streams, events, threads, clocks and the loader are forbidden imports") {
  for (const char* name :
       {"cudaStreamCreateWithFlags", "cudaEventRecord", "cudaEventElapsedTime",
        "pthread_create", "_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE",
        "clock_settime", "settimeofday", "clock_gettime", "dlsym", "dlopen", "fork", "_exit",
        "execve", "socket", "fopen", "mprotect", "syscall", "cuLaunchKernel",
        "cudaDeviceReset", "cudaLaunchHostFunc"}) {
    CAPTURE(name);
    const auto f = ScreenSymbols(SourceLanguage::kCuda, Info({Export("launch"), Import(name)}));
    CHECK(HasFinding(f, FindingCode::kForbiddenImport));
  }
}

TEST_CASE("host candidates may not import the CUDA runtime") {
  CHECK(ImportAllowed(SourceLanguage::kCuda, "cudaMalloc"));
  CHECK(!ImportAllowed(SourceLanguage::kCpp, "cudaMalloc"));
  CHECK(ImportAllowed(SourceLanguage::kCpp, "sqrtf"));
  CHECK(ImportAllowed(SourceLanguage::kCpp, "__exp_finite"));
}

TEST_CASE("defining a timing or launch symbol is a forbidden export") {
  for (const char* name : {"cudaEventElapsedTime", "clock_gettime", "cuLaunchKernel",
                           "__cudaLaunchKernel", "dlsym", "gettimeofday"}) {
    CAPTURE(name);
    const auto f = ScreenSymbols(SourceLanguage::kCuda, Info({Export("launch"), Export(name)}));
    CHECK(HasFinding(f, FindingCode::kForbiddenExport));
  }
  CHECK(!ExportForbidden("my_helper"));
  CHECK(!ExportForbidden("_Z4geluf"));
}

TEST_CASE("a missing launch symbol and a foreign library are reported") {
  auto f = ScreenSymbols(SourceLanguage::kCuda, Info({Import("memcpy")}));
  CHECK(HasFinding(f, FindingCode::kLoadError));
  ElfDynamicInfo info = Info({Export("launch")});
  info.needed.push_back("libcublas.so.13");
  CHECK(HasFinding(ScreenSymbols(SourceLanguage::kCuda, info), FindingCode::kForbiddenImport));
}

}  // namespace
}  // namespace skilldb::verify::internal
