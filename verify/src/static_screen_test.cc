// The static screen against real nvcc output: every shipped CUDA reference
// and team candidate must pass it, and the hacks that reach for forbidden
// functions must not. (A screen tested only on hand-written symbol lists
// once refused nvcc's own host stubs, which call exit().) Skips when nvcc is
// not installed.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "elf_symbols.h"
#include "skilldb/verify/compiler.h"
#include "symbol_policy.h"
#include "test_util.h"

namespace skilldb::verify {
namespace {

using testing::TaskDir;
using testing::TestOptions;

struct Job {
  std::string label;
  std::string source;
  std::vector<Finding> findings;
  bool compiled = false;
  std::string log;
};

// Compiles and screens `jobs` on two threads; false if nvcc is missing.
bool CompileAndScreen(std::vector<Job>* jobs) {
  const VerifierOptions vo = TestOptions(Backend::kCuda);
  CompilerOptions co;
  co.cache_dir = vo.cache_dir;
  co.protocol_dir = vo.protocol_dir;
  co.nvcc_path = vo.nvcc_path;
  auto compiler = Compiler::Make(co);
  REQUIRE(compiler.ok());
  std::atomic<size_t> next{0};
  std::atomic<bool> unavailable{false};
  auto work = [&] {
    for (size_t i = next++; i < jobs->size(); i = next++) {
      Job& j = (*jobs)[i];
      auto out = (*compiler)->Compile(j.source, SourceLanguage::kCuda);
      if (!out.ok()) {
        unavailable = true;
        return;
      }
      j.compiled = out->ok;
      j.log = out->log;
      if (!out->ok) continue;
      auto info = internal::ReadElfDynamicInfo(out->library_path);
      if (info.ok()) j.findings = internal::ScreenSymbols(SourceLanguage::kCuda, *info);
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  return !unavailable;
}

TEST_CASE("every shipped CUDA reference and team candidate passes the static screen") {
  std::vector<Job> jobs;
  auto names = ListTasks(TaskDir());
  REQUIRE(names.ok());
  for (const std::string& name : *names) {
    auto task = LoadTask(TaskDir(), name);
    REQUIRE(task.ok());
    jobs.push_back({name + "/reference.cu", task->reference_cuda, {}, false, ""});
    auto cands = LoadCandidates(TaskDir(), *task, SourceLanguage::kCuda);
    REQUIRE(cands.ok());
    for (const Candidate& c : *cands) {
      if (c.spec.expect_pass) jobs.push_back({name + "/" + c.spec.name, c.source, {}, false, ""});
    }
  }
  if (!CompileAndScreen(&jobs)) {
    MESSAGE("nvcc not available: skipped");
    return;
  }
  for (const Job& j : jobs) {
    CHECK_MESSAGE(j.compiled, j.label << ":\n" << j.log);
    std::string why;
    for (const Finding& f : j.findings) why += FormatFinding(f) + "\n";
    CHECK_MESSAGE(j.findings.empty(), j.label << ": " << why);
  }
}

TEST_CASE("hacks that call forbidden functions are caught by the screen") {
  auto task = LoadTask(TaskDir(), "softmax_rows_fp32");
  REQUIRE(task.ok());
  auto cands = LoadCandidates(TaskDir(), *task, SourceLanguage::kCuda);
  REQUIRE(cands.ok());
  std::vector<Job> jobs;
  std::vector<std::vector<FindingCode>> want;
  for (const Candidate& c : *cands) {
    bool screened = false;
    for (FindingCode code : c.spec.expect_any) {
      screened |= code == FindingCode::kForbiddenImport || code == FindingCode::kForbiddenExport;
    }
    if (!c.spec.generated || !screened) continue;
    jobs.push_back({c.spec.name, c.source, {}, false, ""});
    want.push_back(c.spec.expect_any);
  }
  REQUIRE(jobs.size() >= 4);
  if (!CompileAndScreen(&jobs)) {
    MESSAGE("nvcc not available: skipped");
    return;
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    bool hit = false;
    for (FindingCode code : want[i]) hit |= HasFinding(jobs[i].findings, code);
    CHECK_MESSAGE(hit, jobs[i].label);
  }
}

}  // namespace
}  // namespace skilldb::verify
