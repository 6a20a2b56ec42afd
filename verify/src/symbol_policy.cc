#include "symbol_policy.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>

namespace skilldb::verify::internal {
namespace {

// CUDA runtime entry points a candidate may call. Everything stream-ordered
// is further checked at run time (the worker interposes on these and
// rejects any stream but the one launch() was given).
constexpr std::string_view kCudaImports[] = {
    // Registration and launch plumbing that nvcc emits.
    "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd",
    "__cudaUnregisterFatBinary", "__cudaRegisterFunction",
    "__cudaRegisterVar", "__cudaPushCallConfiguration",
    "__cudaPopCallConfiguration", "__cudaGetKernel", "__cudaInitModule",
    // Stream-ordered work and allocations: every one of these is also
    // interposed by the GPU worker (worker/interpose.list), which checks
    // the stream and the calling thread at run time.
    "__cudaLaunchKernel", "__cudaLaunchKernel_ptsz", "cudaLaunchKernel",
    "cudaLaunchKernel_ptsz", "cudaLaunchKernelExC", "cudaLaunchKernelExC_ptsz",
    "cudaLaunchCooperativeKernel", "cudaMemsetAsync", "cudaMemsetAsync_ptsz",
    "cudaMemcpyAsync", "cudaMemcpyAsync_ptsz", "cudaMemset", "cudaMemcpy",
    "cudaMemcpyToSymbol", "cudaMemcpyToSymbolAsync", "cudaMalloc", "cudaFree",
    "cudaMallocAsync", "cudaFreeAsync",
    // Queries, attributes and synchronisation (harmless: the device-wide
    // synchronize after each call already waits for everything).
    "cudaGetLastError", "cudaPeekAtLastError", "cudaGetErrorString",
    "cudaGetErrorName", "cudaFuncSetAttribute", "cudaFuncGetAttributes",
    "cudaFuncSetCacheConfig", "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "cudaOccupancyAvailableDynamicSMemPerBlock", "cudaGetDevice",
    "cudaDeviceGetAttribute", "cudaGetDeviceProperties_v2",
    "cudaGetDeviceProperties", "cudaGetSymbolAddress",
    "cudaStreamSynchronize", "cudaDeviceSynchronize",
    "cudaPointerGetAttributes",
};

// libc / libstdc++ runtime pieces any C++ code may need.
constexpr std::string_view kRuntimeImports[] = {
    "malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc",
    "memcpy", "memmove", "memset", "memcmp", "memchr", "strlen", "strnlen",
    "strcmp", "strncmp", "strcpy", "strncpy", "strchr", "strrchr", "strstr",
    "printf", "fprintf", "vprintf", "vfprintf", "sprintf", "snprintf",
    "vsnprintf", "puts", "putchar", "fputs", "fputc", "fwrite", "fflush",
    "stdout", "stderr", "__printf_chk", "__fprintf_chk", "__sprintf_chk",
    "__snprintf_chk", "__vsnprintf_chk", "__vfprintf_chk", "__memcpy_chk",
    "__memset_chk", "__memmove_chk", "__stack_chk_fail", "__assert_fail",
    "abort", "qsort", "bsearch", "rand", "srand", "__errno_location",
    "__tls_get_addr", "__gxx_personality_v0", "_Unwind_Resume",
    "__gmon_start__", "_ITM_deregisterTMCloneTable",
    "_ITM_registerTMCloneTable", "__cxa_finalize", "__cxa_atexit",
    "__dso_handle", "strtol",
    // nvcc gives every non-inline __device__ function a host stub whose body
    // calls exit(); exiting the worker is no worse than crashing it.
    "exit",
};

constexpr std::string_view kRuntimePrefixes[] = {
    "__cxa_", "_Znw", "_Zna", "_Zdl", "_Zda", "_ZSt", "_ZNSt", "_ZNKSt",
    "_ZTISt", "_ZTVSt", "_ZTSSt", "_ZTVN10__cxxabiv", "_ZTIN10__cxxabiv",
};

// Substrings that disqualify an otherwise allowed C++ runtime import:
// threads, futures, files and clocks live in the std namespace too.
constexpr std::string_view kRuntimeDenySubstrings[] = {
    "thread", "future", "filesystem", "fstream", "filebuf", "chrono",
    "__cxa_thread_atexit",
};

constexpr std::string_view kMathNames[] = {
    "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "pow", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh",
    "cosh", "tanh", "erf", "erfc", "tgamma", "lgamma", "fabs", "floor",
    "ceil", "round", "lround", "rint", "lrint", "nearbyint", "trunc", "fmod",
    "fmax", "fmin", "fma", "frexp", "ldexp", "hypot",
};

// Exported names that would shadow what the verifier times or loads with.
constexpr std::string_view kProtectedExports[] = {
    "clock_gettime", "clock_getres", "gettimeofday", "time", "clock",
    "timespec_get", "clock_settime", "settimeofday", "nanosleep",
    "clock_nanosleep", "usleep", "sleep", "dlopen", "dlsym", "dlvsym",
    "dlclose", "pthread_create", "fork", "exit", "_exit", "sigaction",
    "signal", "rdtsc", "__rdtsc",
};

constexpr std::string_view kProtectedExportPrefixes[] = {
    "cuda", "__cuda", "cupti", "nvrtc", "_ZNSt6chrono", "__vdso", "_dl_",
    "__libc_",
};

bool IsMath(std::string_view name) {
  std::string_view base = name;
  if (base.ends_with("_finite")) {
    base.remove_suffix(7);
    if (base.starts_with("__")) base.remove_prefix(2);
  }
  for (std::string_view m : kMathNames) {
    if (base == m) return true;
    if (base.size() == m.size() + 1 && base.starts_with(m) &&
        (base.back() == 'f' || base.back() == 'l')) {
      return true;
    }
  }
  return base == "sincos" || base == "sincosf" || base == "copysign" ||
         base == "copysignf" || base == "nextafter" || base == "nextafterf";
}

bool IsDriverApi(std::string_view name) {
  return name.size() > 2 && name.starts_with("cu") &&
         std::isupper(static_cast<unsigned char>(name[2]));
}

template <size_t N>
bool Contains(const std::string_view (&set)[N], std::string_view name) {
  return std::find(std::begin(set), std::end(set), name) != std::end(set);
}

bool RuntimeAllowed(std::string_view name) {
  for (std::string_view bad : kRuntimeDenySubstrings) {
    if (name.find(bad) != std::string_view::npos) return false;
  }
  if (Contains(kRuntimeImports, name) || IsMath(name)) return true;
  for (std::string_view p : kRuntimePrefixes) {
    if (name.starts_with(p)) return true;
  }
  return false;
}

constexpr std::string_view kAllowedNeeded[] = {
    "libcudart.so.13", "libstdc++.so.6", "libgcc_s.so.1", "libc.so.6",
    "libm.so.6", "ld-linux-x86-64.so.2",
};

}  // namespace

bool ImportAllowed(SourceLanguage language, std::string_view name) {
  if (language == SourceLanguage::kCuda && Contains(kCudaImports, name)) {
    return true;
  }
  return RuntimeAllowed(name);
}

bool ExportForbidden(std::string_view name) {
  if (Contains(kProtectedExports, name) || IsDriverApi(name)) return true;
  for (std::string_view p : kProtectedExportPrefixes) {
    if (name.starts_with(p)) return true;
  }
  return false;
}

std::vector<Finding> ScreenSymbols(SourceLanguage language,
                                   const ElfDynamicInfo& info) {
  std::vector<Finding> findings;
  std::vector<std::string> bad_imports, bad_exports;
  bool has_launch = false;
  for (const DynamicSymbol& s : info.symbols) {
    if (s.defined) {
      if (s.name == "launch") has_launch = s.function;
      if (ExportForbidden(s.name)) bad_exports.push_back(s.name);
    } else if (!ImportAllowed(language, s.name)) {
      bad_imports.push_back(s.name);
    }
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (size_t i = 0; i < v.size() && i < 8; ++i) {
      if (i > 0) out += ", ";
      out += v[i];
    }
    if (v.size() > 8) out += ", ...";
    return out;
  };
  if (!bad_imports.empty()) {
    findings.push_back({FindingCode::kForbiddenImport,
                        "the candidate calls functions the protocol forbids "
                        "(streams, events, threads, clocks, files, processes "
                        "and the loader are off limits): " +
                            join(bad_imports)});
  }
  if (!bad_exports.empty()) {
    findings.push_back({FindingCode::kForbiddenExport,
                        "the candidate defines symbols that would shadow the "
                        "verifier's timing, launch or loader functions: " +
                            join(bad_exports)});
  }
  for (const std::string& lib : info.needed) {
    if (!Contains(kAllowedNeeded, lib)) {
      findings.push_back({FindingCode::kForbiddenImport,
                          "the candidate links library '" + lib +
                              "', which the protocol does not provide"});
    }
  }
  if (!has_launch) {
    findings.push_back({FindingCode::kLoadError,
                        "the candidate does not define extern \"C\" int "
                        "launch(const Tensor*, int, Tensor*, int, stream)"});
  }
  return findings;
}

}  // namespace skilldb::verify::internal
