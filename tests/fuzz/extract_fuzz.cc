// The Policy Agent's readings of a completion on arbitrary bytes: the
// kernel extractor (fences, open fences, no fences), the KernelBench
// ModelNew extractor with the feedback made from what it found, and the
// template family's parameter reader (the trainer's completions). Never a
// crash, in time linear in the input (libFuzzer's -timeout catches a blow-up),
// and a found candidate has a source.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "build_paths.h"
#include "skilldb/policy/extract.h"
#include "skilldb/policy/kernelbench_answer.h"
#include "skilldb/trainer/param_task.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace skilldb;
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1,
                              size - 1);
  if (data[0] % 2 == 0) {
    policy::PolicyTask task;
    task.backend = data[0] % 4 == 0 ? verify::Backend::kHost
                                    : verify::Backend::kCuda;
    auto e = policy::CodeExtractor().Extract(task, text);
    if (!e.ok()) std::abort();  // nothing found is a value, not an error
    if (e->found && e->source.empty()) std::abort();
    (void)policy::DefinesEntryPoint(text);
    return 0;
  }
  if (data[0] % 4 == 1) {
    const policy::KernelBenchExtraction e =
        policy::ExtractKernelBenchAnswer(text);
    if (e.found && e.source.empty()) std::abort();
    (void)policy::FormatKernelBenchFeedback(e, nullptr);
    return 0;
  }
  static const trainer::TaskFamily* family = [] {
    auto f = trainer::LoadTaskFamily(std::string(SKILLDB_TRAINER_TASKS) +
                                     "/sum_dim1_fp32.host.json");
    if (!f.ok()) std::abort();
    return new trainer::TaskFamily(std::move(*f));
  }();
  auto p = trainer::ParseParams(*family, text, 4096);
  if (p.ok) (void)trainer::Render(*family, p.values);
  return 0;
}
