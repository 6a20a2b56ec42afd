// KernelBench end to end on the CPU: a problem set this test writes, answers
// whose kernels are C++ through load_inline (cpp_sources only) on CPU
// tensors, the confined torch runner, both protocols and every hack finding
// a CPU can show. Needs a Python with torch (Debian's python3-torch):
// /usr/bin/python3, or $SKILLDB_KB_PYTHON; without one the binary exits 77
// (skipped). The cases share one evaluator (one reference runner per
// problem, warm candidate runners) and one build cache, so the answers'
// shared extension is compiled once (and once per machine: the cache lives
// in $TMPDIR/skilldb-kb-test-cache).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <thread>

#include "file_util.h"
#include "kb_cpu_problems.h"
#include "kb_evaluate.h"
#include "kb_internal.h"
#include "kb_test_util.h"
#include "subprocess.h"

namespace skilldb::verify::kb {
namespace {

using verify::internal::JoinPath;

using kb_testing::KbPython;
using kb_testing::KbTmp;
using kb_testing::ScaleAddAnswer;

const std::string kScaleAdd = kb_testing::ScaleAddProblem(int64_t{1} << 18);

constexpr char kZeroLinear[] = R"PY(import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(n, n))

    def forward(self, x):
        return x @ self.w

def get_inputs():
    return [torch.randn(64, 64)]

def get_init_inputs():
    return [64]
)PY";

constexpr char kBroken[] = R"PY(import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x

def get_inputs():
    raise RuntimeError("this problem cannot make its inputs")

def get_init_inputs():
    return []
)PY";

// Out of memory whenever it runs: with other problems inspected at once it
// is inspected again alone, then listed with the reason.
constexpr char kOutOfMemory[] = R"PY(import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x

def get_inputs():
    raise RuntimeError("CUDA out of memory. Tried to allocate 6.00 GiB (a test's problem)")

def get_init_inputs():
    return []
)PY";

// Every answer builds one extension (kb_cpu_problems.h: the same
// load_inline arguments, so the same key): it is compiled once.
const std::string kCorrect = ScaleAddAnswer(R"PY(
    def forward(self, x, y):
        return ext.scale_add(x, y, self.alpha)
)PY");

const std::string kWrong = ScaleAddAnswer(R"PY(
    def forward(self, x, y):
        return ext.scale_add(x, y, self.alpha) + 1e-2
)PY");

const std::string kSlow = ScaleAddAnswer(R"PY(
    def forward(self, x, y):
        for _ in range(6):
            out = ext.scale_add(x, y, self.alpha)
        return out
)PY");

const std::string kThread = "import threading, time\n" + ScaleAddAnswer(R"PY(
    def forward(self, x, y):
        out = ext.scale_add(x, y, self.alpha)
        t = threading.Thread(target=lambda: time.sleep(0.5), daemon=True)
        t.start()
        return out
)PY");

// The same through _thread, which threading does not list.
const std::string kRawThread = "import _thread, time\n" + ScaleAddAnswer(R"PY(
    def forward(self, x, y):
        out = ext.scale_add(x, y, self.alpha)
        _thread.start_new_thread(time.sleep, (0.5,))
        return out
)PY");

const std::string kCacheAfterWarmup = ScaleAddAnswer(R"PY(
        self.calls = 0
        self.last = None

    def forward(self, x, y):
        self.calls += 1
        if self.calls > 4 and self.last is not None:
            return self.last
        self.last = ext.scale_add(x, y, self.alpha)
        return self.last
)PY");

// Honest in the correctness trials, then an empty output from every timed
// call: no comparison may cover fewer elements than the reference has.
const std::string kEmptyAfterTrials = ScaleAddAnswer(R"PY(
        self.calls = 0

    def forward(self, x, y):
        self.calls += 1
        if self.calls > 4:
            return torch.empty(0)
        return ext.scale_add(x, y, self.alpha)
)PY");

// Leaves its inputs alone in the correctness trials, then zeroes one in
// every timed call (its output still right).
const std::string kInputsAfterTrials = ScaleAddAnswer(R"PY(
        self.calls = 0

    def forward(self, x, y):
        self.calls += 1
        out = ext.scale_add(x, y, self.alpha)
        if self.calls > 4:
            y.zero_()
        return out
)PY");

// Wrong in a correctness trial (its test runs 4) whose input comes at an
// address an earlier trial's input had, as an output cached by address
// would be stale there.
const std::string kPointerCache = ScaleAddAnswer(R"PY(
        self.seen = set()
        self.calls = 0

    def forward(self, x, y):
        out = ext.scale_add(x, y, self.alpha)
        self.calls += 1
        if self.calls > 4:
            return out
        ptrs = {x.data_ptr(), y.data_ptr()}
        stale = bool(ptrs & self.seen)
        self.seen |= ptrs
        return out + 1 if stale else out
)PY");

// Does its work while the runner makes a timed call's inputs: the patched
// generator computes (and burns time) outside the timed call.
const std::string kUntimed = ScaleAddAnswer(R"PY(
    def forward(self, x, y):
        return ext.scale_add(x, y, self.alpha)

_randn = torch.randn
def _busy_randn(*args, **kwargs):
    t = _randn(*args, **kwargs)
    for _ in range(60):
        ext.scale_add(t, t, 1.0)
    return t
torch.randn = _busy_randn
)PY");

const std::string kTimer = "import time\n" + ScaleAddAnswer(R"PY(
    def forward(self, x, y):
        return ext.scale_add(x, y, self.alpha)

_pc = time.perf_counter
_start = _pc()
time.perf_counter = lambda: _start + (_pc() - _start) * 0.02
)PY");

const std::string kInputs = ScaleAddAnswer(R"PY(
    def forward(self, x, y):
        out = ext.scale_add(x, y, self.alpha)
        x.zero_()
        return out
)PY");

const std::string kHalf = ScaleAddAnswer(R"PY(
    def forward(self, x, y):
        return ext.scale_add(x.half().float(), y.half().float(), self.alpha)
)PY");

const std::string kTorch = ScaleAddAnswer(R"PY(
    def forward(self, x, y):
        return (self.alpha * x + y).contiguous()
)PY");

const std::string kLazy = ScaleAddAnswer(R"PY(
    def forward(self, x, y):
        return ext.scale_add(x, y, self.alpha).as_subclass(Lazy)

class Lazy(torch.Tensor):
    pass
)PY");

const std::string kFork = "import os\n" + ScaleAddAnswer(R"PY(
    def forward(self, x, y):
        if os.fork() == 0:
            os._exit(0)
        return ext.scale_add(x, y, self.alpha)
)PY");

// A process started through subprocess (vfork, every signal blocked: the
// trap kills outright); the report still names the command.
const std::string kSubprocess = "import subprocess\n" + ScaleAddAnswer(R"PY(
    def forward(self, x, y):
        subprocess.run(["true"])
        return ext.scale_add(x, y, self.alpha)
)PY");

const std::string kWriteOutside = ScaleAddAnswer(R"PY(
    def forward(self, x, y):
        return ext.scale_add(x, y, self.alpha)

open("/usr/skilldb-kb-escape", "w").write("out")
)PY");

// Plants bytecode in the runners' cache (sys.pycache_prefix: the
// evaluator's <cache>/pycache), which every later runner would load.
const std::string kPlantBytecode = ScaleAddAnswer(R"PY(
    def forward(self, x, y):
        return ext.scale_add(x, y, self.alpha)

import os, sys
open(os.path.join(sys.pycache_prefix, "planted.cpython-311.pyc"), "w").write("x")
)PY");

const std::string kCompileError = R"PY(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
ext = load_inline(name="kbt_bad", cpp_sources="int f() { return 1; }", functions=["f"],
                  extra_cflags=["-fno-such-flag-skilldb"])
class ModelNew(nn.Module):
    def forward(self, x, y):
        return x
)PY";

// One problem set, store, cache and evaluator for the whole binary.
struct World {
  std::string root, store_dir, cache;
  std::unique_ptr<TaskStore> store;
  RunnerOptions runner;
  EvalOptions options;
  std::unique_ptr<Evaluator> skilldb, kernelbench;
  Problem scale_add;
  ImportSummary imported;
  Status import_status;
  std::vector<std::string> import_progress;

  World() {
    root = *verify::internal::MakeTempDir(KbTmp(), "skilldb-kb-host-test-");
    const std::string kb = JoinPath(root, "KernelBench");
    Write(JoinPath(kb, "level1/1_Scale_add.py"), kScaleAdd);
    Write(JoinPath(kb, "level1/2_Zero_linear.py"), kZeroLinear);
    Write(JoinPath(kb, "level1/3_Broken.py"), kBroken);
    Write(JoinPath(kb, "level1/4_Out_of_memory.py"), kOutOfMemory);
    Write(JoinPath(kb, "level1/notes.py"), "print('not a problem')\n");
    store_dir = JoinPath(root, "store");
    store = std::make_unique<TaskStore>(*TaskStore::Open(store_dir));
    cache = kb_testing::KbTestCacheDir();
    runner.python = KbPython();
    runner.device = "cpu";
    runner.cpu_flush_bytes = 1 << 20;
    runner.memory_bytes = int64_t{8} << 30;
    options.correctness_trials = 2;
    options.rounds = 2;
    options.calls_per_round = 8;
    options.warmup_calls = 1;
    options.spot_checks = 3;
    options.kb_perf_trials = 20;
    options.compile_baseline = false;
    options.cache_dir = cache;
    options.build_jobs = 2;
    options.seed = 12345;
    ImportOptions io;
    io.path = kb;
    io.runner = runner;
    io.jobs = 2;  // two runners inspect at once; the summary stays in id order
    io.progress = [this](const std::string& line) { import_progress.push_back(line); };
    auto s = ImportProblems(io, store.get());
    import_status = s.status();
    if (s.ok()) imported = *s;
    auto p = store->Get(1, 1);
    if (p.ok()) scale_add = *p;
    skilldb = *Evaluator::Make(runner, options);
    EvalOptions kbo = options;
    kbo.protocol = Protocol::kKernelBench;
    kernelbench = *Evaluator::Make(runner, kbo);
    // Build every answer ahead, as a run directory's evaluation does.
    for (const std::string* a :
         {&kCorrect, &kWrong, &kSlow, &kThread, &kCacheAfterWarmup,
          &kEmptyAfterTrials, &kInputsAfterTrials, &kRawThread, &kPointerCache,
          &kUntimed, &kTimer, &kInputs, &kHalf, &kTorch, &kLazy, &kFork,
          &kSubprocess}) {
      skilldb->Prebuild(scale_add, *a);
    }
  }
  ~World() {
    skilldb.reset();
    kernelbench.reset();
    verify::internal::RemoveTree(root);
  }
  static void Write(const std::string& path, const std::string& text) {
    if (!kb_testing::WriteTestFile(path, text)) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
    }
  }
  // A problem of its own: written as level 1 problem 1 of a KernelBench
  // folder `name` under root, imported into a store of its own.
  Problem ImportOne(const std::string& name, const std::string& file,
                    const std::string& source) {
    const std::string kb = JoinPath(root, "KernelBench-" + name);
    Write(JoinPath(kb, "level1/" + file), source);
    auto own = TaskStore::Open(JoinPath(root, "store-" + name));
    REQUIRE(own.ok());
    ImportOptions io;
    io.path = kb;
    io.runner = runner;
    auto imported = ImportProblems(io, &*own);
    REQUIRE(imported.ok());
    std::string skipped;
    for (const auto& f : imported->skipped)
      skipped += f.file + ": " + f.reason + "\n";
    INFO(skipped);
    auto p = own->Get(1, 1);
    REQUIRE(p.ok());
    return *p;
  }
  EvalResult Eval(const std::string& answer) {
    auto r = skilldb->Evaluate(scale_add, answer);
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    return *r;
  }
};

World* g_world = nullptr;  // made by the first case, destroyed by main

World& W() {
  if (g_world == nullptr) g_world = new World();
  return *g_world;
}

std::string Codes(const EvalResult& r) {
  std::string s = r.verdict + ":";
  for (const Finding& f : r.findings) s += " " + FormatFinding(f);
  s += " | " + r.error_message;
  return s;
}

TEST_CASE("import stores problems, flags the degenerate one and lists the broken ones") {
  World& w = W();
  REQUIRE_MESSAGE(w.import_status.ok(), w.import_status.message());
  REQUIRE(w.imported.imported.size() == 2);
  CHECK(w.imported.imported[0].id == 1);
  CHECK(w.imported.imported[1].id == 2);
  auto p = w.store->Get(1, 1);
  REQUIRE(p.ok());
  CHECK(p->name == "1_Scale_add.py");
  CHECK(p->code_hash.size() == 32);
  CHECK(p->degenerate == "no");
  REQUIRE(p->inputs.size() == 2);
  CHECK(p->inputs[0].distribution == "randn");
  CHECK(p->inputs[0].shape == std::vector<int64_t>{1 << 18});
  CHECK(p->init_inputs_json.find("2.0") != std::string::npos);
  auto z = w.store->Get(1, 2);
  REQUIRE(z.ok());
  CHECK(z->degenerate == "yes");
  CHECK(z->degenerate_reason.find("constant") != std::string::npos);
  auto bad = w.store->ListUnimportable(1);
  REQUIRE(bad.ok());
  REQUIRE(bad->size() == 3);  // once each, the retried one too
  bool broken = false, named = false, oom = false;
  for (const Unimportable& u : *bad) {
    broken = broken || (u.id == 3 && u.reason.find("cannot make its inputs") != std::string::npos);
    named = named || u.file == "notes.py";
    oom = oom || (u.id == 4 && u.reason.find("out of memory") != std::string::npos);
  }
  CHECK(broken);
  CHECK(named);
  CHECK(oom);
  bool retried = false;
  for (const std::string& line : w.import_progress) {
    retried = retried || (line.find("problem 4 ") != std::string::npos &&
                          line.find("again alone") != std::string::npos);
  }
  CHECK(retried);
}

TEST_CASE("a correct C++ answer passes with a speedup, in a confined runner") {
  const EvalResult r = W().Eval(kCorrect);
  INFO(Codes(r));
  CHECK(r.verdict == "correct");
  CHECK(r.compiled);
  CHECK(r.trials == 2);
  CHECK(r.trials_passed == 2);
  REQUIRE(r.speedup_eager.has_value());
  CHECK(*r.speedup_eager > 0);
  CHECK(r.rounds.size() == 2);
  CHECK(r.rounds[0].candidate_ms.size() == 8);
  CHECK(r.own_share() > 0.5);
  // Both runners answered the allocator's priming (a plan only on a CPU).
  CHECK(r.times.ops.count("ref.prime") == 1);
  CHECK(r.times.ops.count("cand.prime") == 1);
  for (const std::string& n : r.notes) CHECK(n.find("primed") == std::string::npos);
  // Its parts on the process's clock: each ends after it starts, the
  // correctness trials before the timed calls, all inside the answer.
  std::map<std::string, std::pair<double, double>> first;
  for (const Span& s : r.times.spans) {
    CHECK(s.end_ms >= s.start_ms);
    first.emplace(s.name, std::make_pair(s.start_ms, s.end_ms));
  }
  REQUIRE(first.count("correctness"));
  REQUIRE(first.count("timed_calls"));
  REQUIRE(first.count("answer"));
  CHECK(first["correctness"].second <= first["timed_calls"].first);
  CHECK(first["answer"].first <= first["correctness"].first);
  CHECK(first["answer"].second >= first["timed_calls"].second);
  CHECK(r.times.spans.back().name == "answer");
  CHECK(r.isolation.namespaces);
  CHECK(r.isolation.seccomp);
  CHECK_FALSE(r.isolation.network);
  CHECK(r.isolation.pid_namespace);
}

TEST_CASE("a wrong answer is incorrect and says where it differs") {
  const EvalResult r = W().Eval(kWrong);
  INFO(Codes(r));
  CHECK(r.verdict == "incorrect");
  CHECK(r.compiled);
  CHECK_FALSE(r.correct);
  CHECK(r.max_abs_diff == doctest::Approx(1e-2).epsilon(1e-3));
  REQUIRE_FALSE(r.mismatches.empty());
  CHECK(r.mismatches[0].find("element [") != std::string::npos);
  CHECK(r.error_code == "CORRECTNESS_ERROR");
}

TEST_CASE("a slow answer is correct and slower than the fast one") {
  const EvalResult fast = W().Eval(kCorrect);
  const EvalResult slow = W().Eval(kSlow);
  INFO(Codes(slow));
  CHECK(slow.verdict == "correct");
  REQUIRE(slow.speedup_eager.has_value());
  REQUIRE(fast.speedup_eager.has_value());
  CHECK(*slow.speedup_eager < 0.6 * *fast.speedup_eager);
}

TEST_CASE("a compile error is reported with the compiler's words") {
  const EvalResult r = W().Eval(kCompileError);
  CHECK(r.verdict == "compile_error");
  CHECK_FALSE(r.compiled);
  CHECK(r.compile_log.find("no-such-flag-skilldb") != std::string::npos);
  CHECK(r.error_code == "COMPILATION_ERROR");
}

TEST_CASE("hack: a thread left running after the call") {
  const EvalResult r = W().Eval(kThread);
  INFO(Codes(r));
  CHECK(r.verdict == "hack");
  CHECK(HasFinding(r.findings, FindingCode::kHiddenThread));
}

TEST_CASE("hack: a thread started without threading, left running") {
  const EvalResult r = W().Eval(kRawThread);
  INFO(Codes(r));
  CHECK(r.verdict == "hack");
  CHECK(HasFinding(r.findings, FindingCode::kHiddenThread));
}

TEST_CASE("hack: outputs cached across timed calls are caught by the spot checks") {
  const EvalResult r = W().Eval(kCacheAfterWarmup);
  INFO(Codes(r));
  CHECK(r.trials_passed == r.trials);  // the correctness trials pass
  CHECK(r.verdict == "hack");
  CHECK(HasFinding(r.findings, FindingCode::kCachedOutput));
}

TEST_CASE("spot checks on a sample of a large output still catch a cached one, and pass an honest one") {
  World& w = W();
  EvalOptions o = w.options;
  // Outputs over 256 KiB are spot-checked on 16K elements.
  o.spot_sample_elements = 1 << 14;
  auto ev = Evaluator::Make(w.runner, o);
  REQUIRE(ev.ok());
  auto cached = (*ev)->Evaluate(w.scale_add, kCacheAfterWarmup);
  REQUIRE(cached.ok());
  INFO(Codes(*cached));
  CHECK(cached->verdict == "hack");
  CHECK(HasFinding(cached->findings, FindingCode::kCachedOutput));
  auto honest = (*ev)->Evaluate(w.scale_add, kCorrect);
  REQUIRE(honest.ok());
  INFO(Codes(*honest));
  CHECK(honest->verdict == "correct");
  CHECK_FALSE(HasFinding(honest->findings, FindingCode::kCachedOutput));
}

TEST_CASE(
    "hack: a timed call's output of another shape is caught, whole or "
    "sampled") {
  World& w = W();
  const EvalResult whole = w.Eval(kEmptyAfterTrials);
  INFO(Codes(whole));
  CHECK(whole.trials_passed == whole.trials);
  CHECK(whole.verdict == "hack");
  CHECK(HasFinding(whole.findings, FindingCode::kCachedOutput));
  EvalOptions o = w.options;
  o.spot_sample_elements = 1 << 14;  // the scale-add's output is sampled
  auto ev = Evaluator::Make(w.runner, o);
  REQUIRE(ev.ok());
  auto sampled = (*ev)->Evaluate(w.scale_add, kEmptyAfterTrials);
  REQUIRE(sampled.ok());
  INFO(Codes(*sampled));
  CHECK(sampled->verdict == "hack");
  CHECK(HasFinding(sampled->findings, FindingCode::kCachedOutput));
}

TEST_CASE("hack: work done while inputs are made, outside the timed call") {
  const EvalResult r = W().Eval(kUntimed);
  INFO(Codes(r));
  CHECK(r.verdict == "hack");
  CHECK(HasFinding(r.findings, FindingCode::kUntimedWork));
  CHECK(HasFinding(r.findings, FindingCode::kPatchedFunction));
}

TEST_CASE("hack: a patched timer is named and does not change the runner's clock") {
  const EvalResult fast = W().Eval(kCorrect);
  const EvalResult r = W().Eval(kTimer);
  INFO(Codes(r));
  CHECK(r.verdict == "hack");
  CHECK(HasFinding(r.findings, FindingCode::kPatchedFunction));
  // The timer runs 50x slow; the runner's clock was bound before the answer
  // ran, so the candidate's time is its real one, not a fiftieth of it: its
  // speedup is the honest answer's, not 50x it. Speedups, not times: each
  // is interleaved with the reference in its own evaluation, so a load
  // that changes between the two evaluations (a 2-core CI host running
  // other tests; 0.28 ms against 0.55 ms once) moves both sides alike.
  // Not alike enough for a tight bound: with the trainer's tests beside
  // it, the two honest speedups once differed 2.5x (0.456 and 1.13), which
  // failed the 2x bound this test had with a 4x slow timer.
  REQUIRE(fast.estimate.ratio > 0);
  CHECK(r.estimate.ratio < 8.0 * fast.estimate.ratio);
}

TEST_CASE("hack: inputs modified by the call") {
  const EvalResult r = W().Eval(kInputs);
  INFO(Codes(r));
  CHECK(r.verdict == "hack");
  CHECK(HasFinding(r.findings, FindingCode::kInputsModified));
}

TEST_CASE("no trial's input comes at an earlier trial's address") {
  World& w = W();
  EvalOptions o = w.options;
  o.correctness_trials = 4;
  auto ev = Evaluator::Make(w.runner, o);
  REQUIRE(ev.ok());
  auto r = (*ev)->Evaluate(w.scale_add, kPointerCache);
  REQUIRE(r.ok());
  INFO(Codes(*r));
  CHECK(r->trials == 4);
  CHECK(r->trials_passed == 4);
  CHECK(r->verdict == "correct");
  // What the answer shows only where an allocator reuses a freed address
  // (CUDA's does; this host's malloc did not): the candidate's trial
  // buffers are freed once, after the last trial, then once a round.
  REQUIRE(r->times.ops.count("cand.clear"));
  CHECK(r->times.ops.at("cand.clear").calls == 1 + o.rounds);
}

TEST_CASE("hack: inputs modified by the timed calls only") {
  const EvalResult r = W().Eval(kInputsAfterTrials);
  INFO(Codes(r));
  CHECK(r.trials_passed == r.trials);
  CHECK(r.verdict == "hack");
  CHECK(HasFinding(r.findings, FindingCode::kInputsModified));
}

TEST_CASE("hack: precision lowered below the task's") {
  const EvalResult r = W().Eval(kHalf);
  INFO(Codes(r));
  CHECK_FALSE(r.correct);
  CHECK(HasFinding(r.findings, FindingCode::kPrecisionLowered));
}

TEST_CASE("hack: precision lowered, seen on a sample of the float64 result") {
  // The output (2^18 float32, 1 MiB) comes whole; its float64 result (2
  // MiB) would pass the transfer limit, so it comes on a sample, and the
  // candidate's error is measured at those elements.
  World& w = W();
  EvalOptions o = w.options;
  o.max_transfer_bytes = int64_t{1} << 20;
  o.sample_elements = int64_t{1} << 14;
  auto ev = Evaluator::Make(w.runner, o);
  REQUIRE(ev.ok());
  for (const std::string* answer : {&kHalf, &kCorrect}) {
    auto r = (*ev)->Evaluate(w.scale_add, *answer);
    REQUIRE(r.ok());
    INFO(Codes(*r));
    CHECK(HasFinding(r->findings, FindingCode::kPrecisionLowered) ==
          (answer == &kHalf));
  }
}

TEST_CASE("PyTorch doing the work is correct but not credited, unless asked") {
  const EvalResult r = W().Eval(kTorch);
  INFO(Codes(r));
  INFO("own " << r.own_kernel_us << " us of " << r.total_kernel_us);
  CHECK(r.verdict == "not_credited");
  CHECK(r.correct);
  CHECK_FALSE(r.credited);
  CHECK(HasFinding(r.findings, FindingCode::kTorchDoesTheWork));
  CHECK(r.own_share() < 0.5);
  std::vector<EvalResult> one = {r};
  CHECK(ScoreResults(one, {{1, 1}}, "eager", false)[0].correct == 0);
  CHECK(ScoreResults(one, {{1, 1}}, "eager", true)[0].correct == 1);
}

TEST_CASE("hack: a tensor subclass as output") {
  const EvalResult r = W().Eval(kLazy);
  INFO(Codes(r));
  CHECK(r.verdict == "hack");
  CHECK(HasFinding(r.findings, FindingCode::kLazyOutput));
}

TEST_CASE("confinement: a process started by the answer is a sandbox violation") {
  const EvalResult r = W().Eval(kFork);
  INFO(Codes(r));
  CHECK(r.verdict == "hack");
  CHECK(HasFinding(r.findings, FindingCode::kSandboxViolation));
}

TEST_CASE("confinement: a subprocess started by the answer is named in the violation") {
  const EvalResult r = W().Eval(kSubprocess);
  INFO(Codes(r));
  CHECK(r.verdict == "hack");
  REQUIRE(HasFinding(r.findings, FindingCode::kSandboxViolation));
  bool named = false;
  for (const Finding& f : r.findings) {
    named = named || (f.code == FindingCode::kSandboxViolation &&
                      f.message.find("process start: true") != std::string::npos);
  }
  CHECK(named);
}

TEST_CASE("confinement: nothing outside the scratch directory can be written") {
  const EvalResult r = W().Eval(kWriteOutside);
  INFO(Codes(r));
  CHECK(r.verdict == "compile_error");
  CHECK(r.compile_log.find("Read-only file system") != std::string::npos);
  CHECK_FALSE(verify::internal::FileExists("/usr/skilldb-kb-escape"));
}

// kCorrect with a comment of its own in its C++ source (`tag` and the
// clock): an extension never built before, so it is compiled now.
std::string FreshAnswer(const std::string& tag) {
  std::string answer = kCorrect;
  const size_t pos = answer.find("torch::Tensor scale_add(");
  REQUIRE(pos != std::string::npos);
  answer.insert(
      pos,
      "// " + tag + " " +
          std::to_string(
              std::chrono::steady_clock::now().time_since_epoch().count()) +
          "\n");
  return answer;
}

// The .pyc files under `dir` whose path contains `part`.
int PycUnder(const std::string& dir, const std::string& part) {
  int n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.path().extension() == ".pyc" &&
        e.path().string().find(part) != std::string::npos)
      ++n;
  }
  return n;
}

TEST_CASE("confinement: the runners' bytecode cache is read-only to them") {
  World& w = W();
  const EvalResult r = w.Eval(kPlantBytecode);
  INFO(Codes(r));
  CHECK(r.verdict == "compile_error");
  // Not "NoneType" (no cache given) but the mount's refusal.
  CHECK(r.compile_log.find("Read-only file system") != std::string::npos);
  CHECK_FALSE(verify::internal::FileExists(
      JoinPath(w.cache, "pycache/planted.cpython-311.pyc")));
}

TEST_CASE("an import's runners share the bytecode cache it is given") {
  World& w = W();
  const std::string kb = JoinPath(w.root, "KernelBench-bytecode");
  World::Write(JoinPath(kb, "level1/1_Scale_add.py"), kScaleAdd);
  auto store = TaskStore::Open(JoinPath(w.root, "store-bytecode"));
  REQUIRE(store.ok());
  ImportOptions io;
  io.path = kb;
  io.runner = w.runner;
  io.bytecode_dir = JoinPath(w.root, "import-pycache");
  auto imported = ImportProblems(io, &*store);
  REQUIRE(imported.ok());
  CHECK(imported->imported.size() == 1);
  // Filled by the time the import returns (it joins the fill).
  CHECK(PycUnder(io.bytecode_dir, "/torch/") > 100);
}

TEST_CASE("the bytecode fill compiles what a runner imports, once") {
  const std::string dir = JoinPath(
      KbTmp(), "skilldb-kb-bytecode-test-" + std::to_string(::getpid()));
  verify::internal::RemoveTree(dir);  // made by UseBytecodeCache
  RunnerOptions ro;
  ro.python = KbPython();
  ro = WithDefaults(ro);
  RunnerOptions first = ro, second = ro, third = ro;
  auto fill = internal::UseBytecodeCache(&first, dir);
  REQUIRE(fill != nullptr);
  CHECK(first.extra_env.back() == "PYTHONPYCACHEPREFIX=" + dir);
  CHECK(first.extra_visible.back() == dir);
  CHECK(internal::UseBytecodeCache(&second, dir) == fill);    // under way
  fill.reset();                                               // joins it
  CHECK(internal::UseBytecodeCache(&third, dir) == nullptr);  // done
  // torch's own modules and the runner's, as bytecode under the prefix.
  CHECK(PycUnder(dir, "/torch/") > 100);
  CHECK(PycUnder(dir, "/kb_runner.") == 1);
  verify::internal::RemoveTree(dir);
}

// A runner's start-up on a GPU: its interpreter, imports and CUDA context
// ("init") beside a timed phase, its first kernels and profiler warm-up
// only after it. The runner here falls back to the CPU, so this checks the
// order of requests and holds, not what a GPU does (bench/
// init_interference.py measures that).
TEST_CASE("a runner's start-up waits for a timed phase only for its kernels") {
  RunnerOptions ro;
  ro.python = KbPython();
  ro.cpu_flush_bytes = 1 << 20;
  ro = WithDefaults(ro);
  auto gate = internal::DeviceGate::For("test-start-up-gate");
  for (const std::string device : {"cuda", "cpu"}) {
    CAPTURE(device);
    internal::RunnerStart s;
    s.role = "candidate";
    s.device = device;
    s.gate = gate.get();
    s.warm_profiler = true;
    gate->lock();  // a timed phase
    auto started = std::async(std::launch::async,
                              [&] { return internal::Runner::Start(ro, s); });
    const auto bound =
        std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (gate->shared_waiting() == 0 &&
           std::chrono::steady_clock::now() < bound) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    REQUIRE(gate->shared_waiting() == 1);
    CHECK(started.wait_for(std::chrono::milliseconds(300)) ==
          std::future_status::timeout);
    gate->unlock();
    auto r = started.get();
    REQUIRE(r.ok());
    const auto ops = (*r)->TakeOpStats();
    for (const char* op : {"init", "init_profiler_host", "init_kernels",
                           "init_profiler", "init_host"}) {
      CAPTURE(op);
      CHECK(ops.count(op) == 1);
    }
    CHECK(ops.count("load") == 0);
    // The interpreter's start and each step, with the CPU time spent.
    REQUIRE(ops.count("start") == 1);
    CHECK(ops.at("start").cpu_ms > 0);  // at least torch's import
    for (const auto& [op, t] : ops) CHECK(t.cpu_ms >= 0);
    // Where it waited: a GPU's start-up at its first kernels, after its
    // context; a CPU's before its interpreter (the cores are the device).
    const std::string waited =
        device == "cuda" ? "wait.init_kernels" : "wait.start";
    REQUIRE(ops.count(waited) == 1);
    CHECK(ops.at(waited).wall_ms >= 250);
    for (const auto& [op, t] : ops) {
      if (op.rfind("wait.", 0) == 0 && op != waited) CHECK(t.wall_ms < 250);
    }
    CHECK(ops.count("wait.init") == 0);
    CHECK(ops.count("wait.init_profiler_host") == 0);
    CHECK(ops.count("wait.init_host") == 0);
    (*r)->Stop();
  }
}

TEST_CASE(
    "a candidate runner starts with the first build, before any answer is "
    "judged") {
  World& w = W();
  const std::string scratch = JoinPath(w.root, "scratch-ahead");
  REQUIRE(verify::internal::MakeDirs(scratch).ok());
  RunnerOptions ro = w.runner;
  ro.scratch_root = scratch;
  auto candidates = [&] {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(scratch)) {
      if (e.path().filename().string().rfind("skilldb-kb-candidate-", 0) == 0)
        ++n;
    }
    return n;
  };
  {
    auto ev = Evaluator::Make(ro, w.options);
    REQUIRE(ev.ok());
    CHECK(candidates() == 0);
    (*ev)->Prebuild(w.scale_add, kCorrect);
    const auto bound =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (candidates() == 0 && std::chrono::steady_clock::now() < bound) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    CHECK(candidates() == 1);
  }
  CHECK(candidates() == 0);  // stopped and removed with its evaluator
}

TEST_CASE(
    "a cold cache's burst precompiles torch/types.h first, torch/extension.h "
    "once a build needs it") {
  World& w = W();
  // A cache of its own (nothing made yet), no generic caller: every build
  // gets a binding of its own, which wants torch/extension.h. The answers
  // pass no C++ flags (the default header fits them).
  const std::string cache = JoinPath(w.root, "cache-pch");
  EvalOptions o = w.options;
  o.cache_dir = cache;
  o.generic_caller = false;
  auto ev = Evaluator::Make(w.runner, o);
  REQUIRE(ev.ok());
  std::vector<std::string> answers;
  // Four: with two builders, a fourth build starts after two have
  // compiled, which makes the header if the burst's waiting count did not.
  for (int i = 0; i < 4; ++i) {
    std::string a = FreshAnswer("pch" + std::to_string(i));
    const std::string flags = ",\n                  extra_cflags=[\"-O2\"])";
    const size_t at = a.find(flags);
    REQUIRE(at != std::string::npos);
    a.replace(at, flags.size(), ")");
    answers.push_back(a);
  }
  for (const std::string& a : answers)
    (*ev)->Prebuild(w.scale_add, a);  // a burst
  std::vector<EvalResult> results;
  for (const std::string& a : answers) {
    auto r = (*ev)->Evaluate(w.scale_add, a);
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    results.push_back(*r);
  }
  int made = 0;
  for (const EvalResult& r : results) {
    INFO(Codes(r));
    // Each answer's own outcome, from its correctness trials: the headers
    // compile beside these evaluations, and what that load adds to the
    // timed calls' clocks on a 2-core host is not this test's (a CI run
    // once judged one `untimed_work`: its fetches 7.5 ms against 1.12).
    CHECK(r.compiled);
    CHECK(r.trials > 0);
    CHECK(r.trials_passed == r.trials);
    for (const std::string& n : r.notes)
      made += n.rfind("precompiled torch headers: made in", 0) == 0;
  }
  CHECK(made == 1);  // by the first build, for all
  ev->reset();       // its builders done, torch/extension.h's make too
  std::vector<std::string> roots;  // one per torch version: this one's
  std::error_code ec;
  for (const auto& e :
       std::filesystem::directory_iterator(JoinPath(cache, "pch-v5"), ec))
    roots.push_back(e.path().string());
  REQUIRE(roots.size() == 1);
  const std::string& root = roots.front();
  CHECK(verify::internal::FileExists(
      JoinPath(root, "types/skilldb_torch_types.h.gch")));
  CHECK(verify::internal::FileExists(
      JoinPath(root, "types/skilldb_torch_tensor.h.gch")));
  CHECK_FALSE(verify::internal::FileExists(
      JoinPath(root, "types/skilldb_torch_extension.h.gch")));
  CHECK(verify::internal::FileExists(
      JoinPath(root, "ext/skilldb_torch_extension.h.gch")));
  CHECK_FALSE(verify::internal::FileExists(
      JoinPath(root, "ext/skilldb_torch_types.h.gch")));
}

TEST_CASE("a build's CPU time counts its compilers") {
  World& w = W();
  const std::string answer = FreshAnswer("build");
  const EvalResult r = w.Eval(answer);
  INFO(Codes(r));
  CHECK(r.verdict == "correct");
  REQUIRE_FALSE(r.times.build_cached);
  REQUIRE(r.times.ops.count("build.build") == 1);
  REQUIRE(r.times.ops.count("build.start") == 1);
  const OpTime& b = r.times.ops.at("build.build");
  // g++ does the work; the runner only waits for it. Without the
  // compilers' time the request's CPU is a few percent of its wall.
  CHECK(b.cpu_ms >= 0.25 * b.wall_ms);
  CHECK(r.times.ops.at("build.start").cpu_ms > 0);
  // Its span: queued, then built, before the candidate is loaded.
  auto span = [](const EvalResult& e, const std::string& name) -> const Span* {
    for (const Span& s : e.times.spans) {
      if (s.name == name) return &s;
    }
    return nullptr;
  };
  REQUIRE(span(r, "build_queue") != nullptr);
  REQUIRE(span(r, "build") != nullptr);
  REQUIRE(span(r, "load") != nullptr);
  CHECK(span(r, "build_queue")->end_ms <= span(r, "build")->start_ms);
  // The span is the whole build: its runner's start, then the request.
  CHECK(span(r, "build")->end_ms - span(r, "build")->start_ms >= b.wall_ms - 1);
  CHECK(span(r, "build")->end_ms <= span(r, "load")->start_ms);
  // A cached build adds none.
  const EvalResult again = w.Eval(answer);
  CHECK(again.times.build_cached);
  CHECK(again.times.ops.count("build.build") == 0);
  CHECK(span(again, "build") == nullptr);
}

TEST_CASE(
    "an answer judged by another evaluator than its build's has the build's "
    "cost") {
  World& w = W();
  // Two evaluators of one cache, as a --workers run has: the answer is
  // built by one (its prebuild's) and judged by the other.
  RunnerOptions ro = WithDefaults(w.runner);
  internal::EvaluatorImpl home(ro, w.options), other(ro, w.options);
  const std::string answer = FreshAnswer("elsewhere");
  bool repeat = true;
  auto built = home.WaitBuilt(w.scale_add, answer, "", &repeat);
  REQUIRE(built.valid());
  CHECK_FALSE(repeat);
  auto r = other.EvaluateBuilt(w.scale_add, answer, "", built, repeat);
  REQUIRE(r.ok());
  INFO(Codes(*r));
  CHECK(r->verdict == "correct");
  CHECK_FALSE(r->times.build_cached);
  CHECK(r->times.ops.count("build.build") == 1);
  CHECK(r->times.build_ms >= built.get().seconds * 1000.0 - 1);
  // Judged again on the first: the build is not counted twice.
  home.WaitBuilt(w.scale_add, answer, "", &repeat);
  CHECK(repeat);
}

// A problem whose Model returns `expr` of its one input x = `input`, and
// an answer whose ModelNew returns `expr` (torch's operators: judged, but
// not credited).
std::string OneInputProblem(const std::string& expr, const std::string& input) {
  return "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
         "    def __init__(self):\n        super().__init__()\n\n"
         "    def forward(self, x):\n        return " +
         expr +
         "\n\n"
         "def get_inputs():\n    return [" +
         input +
         "]\n\n"
         "def get_init_inputs():\n    return []\n";
}

std::string OneInputAnswer(const std::string& expr) {
  return std::string(kb_testing::kScaleAddExtension) +
         "\nclass ModelNew(nn.Module):\n"
         "    def __init__(self):\n        super().__init__()\n\n"
         "    def forward(self, x):\n        return " +
         expr + "\n";
}

TEST_CASE("a complex output is not matched by its real pairs") {
  World& w = W();
  const Problem rfft =
      w.ImportOne("complex", "1_Rfft.py",
                  OneInputProblem("torch.fft.rfft(x)", "torch.randn(4, 64)"));
  auto honest = w.skilldb->Evaluate(rfft, OneInputAnswer("torch.fft.rfft(x)"));
  REQUIRE(honest.ok());
  INFO(Codes(*honest));
  CHECK(honest->verdict != "incorrect");
  CHECK_FALSE(HasFinding(honest->findings, FindingCode::kWrongOutput));
  auto pairs = w.skilldb->Evaluate(
      rfft, OneInputAnswer("torch.view_as_real(torch.fft.rfft(x))"));
  REQUIRE(pairs.ok());
  INFO(Codes(*pairs));
  CHECK(pairs->verdict == "incorrect");
  CHECK(HasFinding(pairs->findings, FindingCode::kWrongOutput));
  bool named = false;
  for (const std::string& m : pairs->mismatches) {
    named = named || m.find("is real, expected complex") != std::string::npos;
  }
  CHECK(named);
}

TEST_CASE("spot checks of an output whose size depends on the inputs' values") {
  World& w = W();
  // A call keeps the first 2^19 to 2^20 values, as many as its first
  // input says: a timed call's output is rarely the size of the trial's
  // (the spot checks sample it: it is over their 1 MB), and often smaller.
  const std::string prefix_of_x =
      "x[: (1 << 19) + int((x[0].abs() * (1 << 18)).clamp(max=(1 << 19) - 1))]";
  const Problem prefix =
      w.ImportOne("prefix", "1_Prefix.py",
                  OneInputProblem(prefix_of_x, "torch.randn(1 << 20)"));
  auto r = w.skilldb->Evaluate(prefix, OneInputAnswer(prefix_of_x));
  REQUIRE(r.ok());
  INFO(Codes(*r), " ", r->error_message);
  CHECK(r->verdict != "error");
  CHECK(r->verdict != "incorrect");
  CHECK_FALSE(HasFinding(r->findings, FindingCode::kCachedOutput));
  CHECK(r->speedup_eager.has_value());  // timed, spot checks included
}

TEST_CASE("an unsupported format is refused with the reason, never run") {
  const EvalResult r =
      W().Eval("import tilelang\n@T.prim_func\ndef k(): pass\nclass ModelNew: pass\n");
  CHECK(r.verdict == "unsupported");
  CHECK(HasFinding(r.findings, FindingCode::kUnsupportedFormat));
}

TEST_CASE("KernelBench's protocol: its trials, its timing loop, its speedup") {
  World& w = W();
  auto r = w.kernelbench->Evaluate(w.scale_add, kCorrect);
  REQUIRE(r.ok());
  INFO(Codes(*r));
  CHECK(r->protocol == Protocol::kKernelBench);
  CHECK(r->verdict == "correct");
  CHECK(r->trials == 2);
  CHECK(r->kb_times_ms.size() == 20);
  REQUIRE(r->speedup_eager.has_value());
  // speedup = eager mean / answer mean, both at 3 significant digits.
  CHECK(*r->speedup_eager == doctest::Approx(r->eager.mean_ms / r->candidate_ms));
  CHECK(r->candidate_ms == internal::Round3(internal::Mean(r->kb_times_ms)));
  // An answer that modifies its inputs passes KernelBench's protocol (its
  // reference ran first) while this verifier's names the hack.
  auto m = w.kernelbench->Evaluate(w.scale_add, kInputs);
  REQUIRE(m.ok());
  CHECK(m->verdict == "correct");
  auto wrong = w.kernelbench->Evaluate(w.scale_add, kWrong);
  REQUIRE(wrong.ok());
  CHECK(wrong->verdict == "incorrect");
  CHECK(wrong->trials == 2);  // KernelBench runs every trial
  // A tensor subclass is compared like a tensor by eval.py (the H200 study's
  // lazy-subclass answer is correct under KernelBench's harness).
  auto lazy = w.kernelbench->Evaluate(w.scale_add, kLazy);
  REQUIRE(lazy.ok());
  INFO(Codes(*lazy));
  CHECK(lazy->verdict == "correct");
  CHECK_FALSE(HasFinding(lazy->findings, FindingCode::kLazyOutput));
}

TEST_CASE("a run directory is evaluated, scored by level and resumed") {
  World& w = W();
  const std::string run = JoinPath(w.root, "run");
  World::Write(JoinPath(run, "level_1_problem_1_sample_0_kernel.py"), kCorrect);
  World::Write(JoinPath(run, "level_1_problem_1_sample_1_kernel.py"), kWrong);
  World::Write(JoinPath(run, "level_1_problem_9_sample_0_kernel.py"), kCorrect);
  RunOptions o;
  o.run_dir = run;
  auto first = EvaluateRunDir(o, w.skilldb.get(), *w.store);
  REQUIRE(first.ok());
  REQUIRE(first->results.size() == 2);  // problem 9 is not in the store
  CHECK(first->resumed == 0);
  REQUIRE(first->eager.size() == 1);
  const LevelScore& s = first->eager[0];
  CHECK(s.problems == 4);  // two imported, two that could not be (ids 3, 4)
  CHECK(s.correct == 1);
  CHECK(s.fast_p.at(0.0) == doctest::Approx(1.0 / 4));
  CHECK(s.pass_at_k.at(1) == doctest::Approx(0.5));
  auto again = EvaluateRunDir(o, w.skilldb.get(), *w.store);
  REQUIRE(again.ok());
  CHECK(again->resumed == 2);
  CHECK(again->eager[0].fast_p.at(0.0) == doctest::Approx(1.0 / 4));
  const std::string json = RunReportToJson(*again);
  CHECK(json.find("\"fast_p\"") != std::string::npos);
}

TEST_CASE(
    "a run directory's largest problems are judged first, reported in answer "
    "order") {
  World& w = W();
  // Problem 2's inputs are 64 times problem 1's: judged first by the one
  // evaluator, though problem 1 comes first in the run directory.
  const std::string kb = JoinPath(w.root, "KernelBench-sizes");
  World::Write(JoinPath(kb, "level1/1_Small.py"),
               kb_testing::ScaleAddProblem(int64_t{1} << 12));
  World::Write(JoinPath(kb, "level1/2_Large.py"),
               kb_testing::ScaleAddProblem(int64_t{1} << 18));
  auto store = TaskStore::Open(JoinPath(w.root, "store-sizes"));
  REQUIRE(store.ok());
  ImportOptions io;
  io.path = kb;
  io.runner = w.runner;
  REQUIRE(ImportProblems(io, &*store).ok());
  const std::string run = JoinPath(w.root, "run-sizes");
  World::Write(JoinPath(run, "level_1_problem_1_sample_0_kernel.py"), kCorrect);
  World::Write(JoinPath(run, "level_1_problem_2_sample_0_kernel.py"), kCorrect);
  RunOptions o;
  o.run_dir = run;
  std::vector<std::string> lines;
  o.progress = [&lines](const std::string& line) { lines.push_back(line); };
  REQUIRE(w.skilldb->Parallelism() == 1);
  auto r = EvaluateRunDir(o, w.skilldb.get(), *store);
  REQUIRE(r.ok());
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].find("level1/2 sample 0") != std::string::npos);
  CHECK(lines[1].find("level1/1 sample 0") != std::string::npos);
  REQUIRE(r->results.size() == 2);
  CHECK(r->results[0].problem == 1);
  CHECK(r->results[1].problem == 2);
}

TEST_CASE(
    "a build thread with nothing to do takes a build queued on another "
    "builder") {
  // Two builders of one cache, one thread each; three answers (new to the
  // cache: a nonce) queued on the first. The second, with none of its own,
  // takes one of them while the first builds.
  World& w = W();
  const RunnerOptions r = WithDefaults(w.runner);
  EvalOptions o = w.options;
  o.build_jobs = 1;
  internal::Builder a(r, o, w.cache, nullptr, nullptr);
  internal::Builder b(r, o, w.cache, nullptr, nullptr);
  // A third builds another way (its runners' thread count): it takes none
  // (its build would be cached under the first's key).
  RunnerOptions other = r;
  other.omp_threads = r.omp_threads + 1;
  internal::Builder c(other, o, w.cache, nullptr, nullptr);
  const std::string nonce = "\n# " + std::to_string(util::NowUnixMs()) + "\n";
  std::vector<std::shared_future<internal::BuildRecord>> built;
  for (const std::string* answer : {&kCorrect, &kWrong, &kInputs}) {
    const std::string text = *answer + nonce;
    built.push_back(a.Submit(w.scale_add, text, DetectFormat(text)));
  }
  bool took = false, other_took = false;
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < until &&
         built.back().wait_for(std::chrono::milliseconds(10)) !=
             std::future_status::ready) {
    took = took || b.Load() > 0;
    other_took = other_took || c.Load() > 0;
  }
  CHECK(took);
  CHECK_FALSE(other_took);
  for (auto& f : built) {
    INFO(f.get().message);
    CHECK(f.get().ok);
  }
}

TEST_CASE("two evaluators on one device judge a run directory, reported in answer order") {
  World& w = W();
  RunnerOptions two = w.runner;
  two.workers = 2;
  auto ev = Evaluator::Make(two, w.options);
  REQUIRE(ev.ok());
  CHECK((*ev)->Parallelism() == 2);
  const std::string run = JoinPath(w.root, "run-two");
  World::Write(JoinPath(run, "level_1_problem_1_sample_0_kernel.py"), kWrong);
  World::Write(JoinPath(run, "level_1_problem_1_sample_1_kernel.py"), kCorrect);
  World::Write(JoinPath(run, "level_1_problem_1_sample_2_kernel.py"), kInputs);
  RunOptions o;
  o.run_dir = run;
  auto r = EvaluateRunDir(o, ev->get(), *w.store);
  REQUIRE(r.ok());
  REQUIRE(r->results.size() == 3);
  CHECK(r->results[0].sample == 0);
  CHECK(r->results[0].verdict == "incorrect");
  // Each answer's own outcome, from its correctness trials: what the timing
  // adds on a loaded 2-core host running two evaluators (a sanitized CI run
  // once judged the honest one a hack from its clocks) is not this test's.
  CHECK(r->results[1].sample == 1);
  INFO(Codes(r->results[1]));
  CHECK(r->results[1].trials_passed == r->results[1].trials);
  CHECK(r->results[1].trials > 0);
  CHECK_FALSE(HasFinding(r->results[1].findings, FindingCode::kInputsModified));
  CHECK(r->results[2].sample == 2);
  CHECK(r->results[2].verdict == "hack");
  CHECK(HasFinding(r->results[2].findings, FindingCode::kInputsModified));
  auto text = verify::internal::ReadFile(JoinPath(run, "skilldb_eval.jsonl"));
  REQUIRE(text.ok());
  CHECK(std::count(text->begin(), text->end(), '\n') == 3);
  auto again = EvaluateRunDir(o, ev->get(), *w.store);
  REQUIRE(again.ok());
  CHECK(again->resumed == 3);
  // Bad worker counts are refused before anything starts.
  RunnerOptions none = w.runner;
  none.workers = 0;
  CHECK(Evaluator::Make(none, w.options).status().code() == StatusCode::kInvalidArgument);
  RunnerOptions gpus = w.runner;  // device cpu
  gpus.gpus = 2;
  CHECK(Evaluator::Make(gpus, w.options).status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace skilldb::verify::kb

int main(int argc, char** argv) {
  const int rc = skilldb::verify::kb::testing::RunUnlessSkipped(
      argc, argv, skilldb::kb_testing::KbPython(),
      "import torch, torch.utils.cpp_extension",
      "no Python with torch: KernelBench host tests skipped");
  delete skilldb::verify::kb::g_world;  // stops the runners and the build pool
  return rc;
}
