// The KernelBench CPU problem set the KernelBench tests write (verify's
// host test, `kernelbench run` against the scripted server, the trainer's
// loop over KernelBench tasks): the Python that runs them, where their
// build cache lives, the scale-add problem in KernelBench's format (Model,
// get_inputs, get_init_inputs) and the answers' shared C++ extension
// through load_inline (cpp_sources only, CPU tensors). Every answer built
// on kScaleAddExtension has the same load_inline arguments, so it is
// compiled once per machine (the cache is KbTestCacheDir()).
//
// Test code only; header-only on the standard library. Pure functions:
// safe from any thread.
#ifndef SKILLDB_TESTS_KB_CPU_PROBLEMS_H_
#define SKILLDB_TESTS_KB_CPU_PROBLEMS_H_

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

namespace skilldb::kb_testing {

// The Python with torch: $SKILLDB_KB_PYTHON, else /usr/bin/python3, else
// python3 on PATH.
inline std::string KbPython() {
  const char* v = std::getenv("SKILLDB_KB_PYTHON");
  if (v != nullptr && v[0] != '\0') return v;
  return ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3"
                                                 : "python3";
}

// $TMPDIR, else /tmp.
inline std::string KbTmp() {
  const char* t = std::getenv("TMPDIR");
  return t != nullptr && t[0] != '\0' ? t : "/tmp";
}

// The answers' build cache every KernelBench test shares.
inline std::string KbTestCacheDir() {
  return KbTmp() + "/skilldb-kb-test-cache";
}

// How the problem's reference computes out = alpha * x + y.
enum class ScaleAddReference {
  kOnePass,     // return self.alpha * x + y
  kFourPasses,  // zeros, += alpha * x, += y: four passes over memory, so an
                // answer's fused loop is faster on any CPU
};

// The scale-add problem over float32 vectors of `n` elements.
inline std::string ScaleAddProblem(
    int64_t n, ScaleAddReference reference = ScaleAddReference::kOnePass) {
  const std::string forward = reference == ScaleAddReference::kOnePass
                                  ? "        return self.alpha * x + y\n"
                                  : "        out = torch.zeros_like(x)\n"
                                    "        out += self.alpha * x\n"
                                    "        out += y\n"
                                    "        return out\n";
  return R"PY(import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
)PY" + forward +
         "\nN = " + std::to_string(n) + R"PY(

def get_inputs():
    return [torch.randn(N), torch.randn(N)]

def get_init_inputs():
    return [2.0]
)PY";
}

// The answers' module up to ModelNew: imports and the extension
// (ext.scale_add(x, y, alpha), a C++ loop).
inline constexpr char kScaleAddExtension[] = R"PY(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_cpp = r'''
torch::Tensor scale_add(torch::Tensor x, torch::Tensor y, double a) {
  TORCH_CHECK(x.is_contiguous() && y.is_contiguous(), "contiguous inputs");
  auto out = torch::empty_like(x);
  const float* px = x.data_ptr<float>();
  const float* py = y.data_ptr<float>();
  float* po = out.data_ptr<float>();
  const float fa = static_cast<float>(a);
  for (int64_t i = 0, n = x.numel(); i < n; ++i) po[i] = fa * px[i] + py[i];
  return out;
}
'''
ext = load_inline(name="kbt_scale_add", cpp_sources=_cpp, functions=["scale_add"],
                  extra_cflags=["-O2"])
)PY";

// An answer: the extension, ModelNew's constructor (alpha), then `body`
// (its forward and anything else of the class, indented).
inline std::string ScaleAddAnswer(std::string_view body) {
  return std::string(kScaleAddExtension) +
         "\nclass ModelNew(nn.Module):\n"
         "    def __init__(self, alpha):\n"
         "        super().__init__()\n"
         "        self.alpha = alpha\n" +
         std::string(body);
}

// Writes `text` to `path`, creating its folders; false when it cannot.
inline bool WriteTestFile(const std::string& path, std::string_view text) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(),
                                      ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out.flush());
}

}  // namespace skilldb::kb_testing

#endif  // SKILLDB_TESTS_KB_CPU_PROBLEMS_H_
