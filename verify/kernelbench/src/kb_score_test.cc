// KernelBench scoring, formats and comparison: no Python needed.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kb_internal.h"

namespace skilldb::verify::kb {
namespace {

ScoredProblem Correct(double speedup) { return {true, speedup * 2.0, 2.0}; }
ScoredProblem Wrong() { return {false, 1.0, 1.0}; }

TEST_CASE("fast_p counts strictly faster correct answers over all problems of the level") {
  // The figures score.py gives for these (checked with numpy on score.py).
  const std::vector<ScoredProblem> p = {Correct(1.0), Correct(2.0), Correct(0.25), Wrong()};
  CHECK(FastP(p, 4, 0.0) == doctest::Approx(0.75));
  CHECK(FastP(p, 4, 0.25) == doctest::Approx(0.5));
  CHECK(FastP(p, 4, 1.0) == doctest::Approx(0.25));  // 1.0 itself is not > 1
  CHECK(FastP(p, 4, 2.0) == doctest::Approx(0.0));   // nor 2.0 > 2
  // A problem without an answer still counts in n.
  CHECK(FastP(p, 8, 0.0) == doctest::Approx(0.375));
  CHECK(FastP(p, 0, 0.0) == 0.0);
}

TEST_CASE("geometric means follow score.py, NaN when a correct answer has no time") {
  const std::vector<ScoredProblem> p = {Correct(1.0), Correct(2.0), Correct(0.25), Wrong()};
  CHECK(GeomeanCorrect(p) == doctest::Approx(0.7937).epsilon(1e-3));
  CHECK(GeomeanCorrectAndFaster(p) == doctest::Approx(2.0));
  std::vector<ScoredProblem> q = p;
  q.push_back({true, 1.0, -1.0});  // eval.py's runtime -1
  CHECK(std::isnan(GeomeanCorrect(q)));
  CHECK(GeomeanCorrect({Wrong()}) == 0.0);
}

TEST_CASE("pass@k is the unbiased estimator of eval_from_generations") {
  CHECK(PassAtK(5, 2, 1) == doctest::Approx(0.4));
  CHECK(PassAtK(5, 0, 1) == doctest::Approx(0.0));
  CHECK(PassAtK(5, 4, 2) == doctest::Approx(1.0));  // n - c < k
  // 1 - C(n - c, k) / C(n, k) = 1 - C(7, 5) / C(10, 5) = 1 - 21 / 252.
  CHECK(PassAtK(10, 3, 5) == doctest::Approx(1.0 - 21.0 / 252.0));
}

EvalResult MakeResult(int level, int problem, int sample, const std::string& verdict,
                  std::optional<double> speedup) {
  EvalResult r;
  r.level = level;
  r.problem = problem;
  r.sample = sample;
  r.verdict = verdict;
  r.compiled = verdict != "compile_error";
  r.correct = verdict == "correct" || verdict == "not_credited";
  r.candidate_ms = 0.5;
  r.speedup_eager = speedup;
  return r;
}

TEST_CASE("level scores count sample 0, missing problems as incorrect, and credit on request") {
  const std::vector<EvalResult> results = {
      MakeResult(1, 1, 0, "correct", 1.5), MakeResult(1, 1, 1, "incorrect", std::nullopt),
      MakeResult(1, 2, 0, "not_credited", 3.0), MakeResult(1, 3, 0, "hack", std::nullopt),
      MakeResult(2, 1, 0, "correct", 0.9)};
  const std::map<int, int> n = {{1, 5}, {2, 2}};
  const auto plain = ScoreResults(results, n, "eager", false);
  REQUIRE(plain.size() == 2);
  CHECK(plain[0].problems == 5);
  CHECK(plain[0].evaluated == 3);
  CHECK(plain[0].correct == 1);
  CHECK(plain[0].not_credited == 1);
  CHECK(plain[0].fast_p.at(1.0) == doctest::Approx(0.2));
  CHECK(plain[0].fast_p.at(2.0) == doctest::Approx(0.0));
  CHECK(plain[0].pass_at_k.at(1) == doctest::Approx((0.5 + 0.0 + 0.0) / 3));
  CHECK(plain[1].fast_p.at(0.8) == doctest::Approx(0.5));
  CHECK(plain[1].fast_p.at(1.0) == doctest::Approx(0.0));
  const auto credited = ScoreResults(results, n, "eager", true);
  CHECK(credited[0].correct == 2);
  CHECK(credited[0].fast_p.at(2.0) == doctest::Approx(0.2));
}

TEST_CASE("answer formats are detected and unsupported ones say why") {
  CHECK(DetectFormat("from torch.utils.cpp_extension import load_inline\nclass ModelNew:").format ==
        AnswerFormat::kCuda);
  CHECK(DetectFormat("import triton\n@triton.jit\ndef k(x): pass\nclass ModelNew:").backend ==
        "triton");
  const FormatInfo tl = DetectFormat("import tilelang\n@T.prim_func\nclass ModelNew:");
  CHECK(tl.format == AnswerFormat::kTileLang);
  CHECK_FALSE(tl.supported);
  CHECK_FALSE(tl.reason.empty());
  CHECK(DetectFormat("import cutlass.cute as cute\nclass ModelNew:").format == AnswerFormat::kCute);
  CHECK(DetectFormat("kittens::st_bf<64,64> t; class ModelNew:").format ==
        AnswerFormat::kThunderKittens);
  CHECK(DetectFormat("os.environ['CXX']='hipcc'\nclass ModelNew:").format == AnswerFormat::kHip);
  CHECK(DetectFormat("extern \"C\" int launch(const Tensor* in)").format == AnswerFormat::kCAbi);
  CHECK_FALSE(DetectFormat("class Model: pass").supported);
  CHECK(DetectFormat("class ModelNew(nn.Module): pass").format == AnswerFormat::kTorchOnly);
  // The caller's declaration wins over detection (KernelBench has none).
  CHECK(DetectFormat("class ModelNew: pass", "triton").format == AnswerFormat::kTriton);
  CHECK_FALSE(DetectFormat("class ModelNew: pass", "cute").supported);
  CHECK_FALSE(DetectFormat("class ModelNew: pass", "opencl").supported);
}

TEST_CASE("own kernel names come from __global__ functions and Triton kernels") {
  const char* src =
      "template <typename T>\n__global__ void __launch_bounds__(256) relu_kernel(T* x) {}\n"
      "__global__ static void add(float* a) {}\n"
      "@triton.autotune(configs=[], key=['n'])\n@triton.jit\ndef softmax_k(x_ptr, n):\n  pass\n";
  CHECK(OwnKernelNames(src) == std::vector<std::string>{"add", "relu_kernel", "softmax_k"});
  CHECK(internal::KernelFunctionName("void ns::relu_kernel<float>(float*)") == "relu_kernel");
  CHECK(internal::KernelFunctionName(
            "void at::native::vectorized_elementwise_kernel<4, at::native::Foo>(int, F)") ==
        "vectorized_elementwise_kernel");
  CHECK(internal::KernelFunctionName("softmax_k") == "softmax_k");
}

TEST_CASE("allclose is torch's: relative to the candidate, NaN never close, equal infinities close") {
  using internal::AllClose;
  // |want - got| <= atol + rtol * |got|: the tolerance scales with the
  // candidate's value (eval.py calls torch.allclose(output, output_new)).
  CHECK(AllClose({1.0}, {1.0 + 1.5e-4}, 1e-4, 1e-4, {1}).ok());
  CHECK_FALSE(AllClose({1.0}, {1.0 + 2.5e-4}, 1e-4, 1e-4, {1}).ok());
  CHECK(AllClose({100.0}, {100.008}, 1e-4, 1e-4, {1}).ok());   // 0.008 <= 0.0101
  CHECK_FALSE(AllClose({100.0}, {100.015}, 1e-4, 1e-4, {1}).ok());
  CHECK_FALSE(AllClose({NAN}, {NAN}, 1e-4, 1e-4, {1}).ok());
  CHECK(AllClose({INFINITY}, {INFINITY}, 1e-4, 1e-4, {1}).ok());
  CHECK_FALSE(AllClose({INFINITY}, {-INFINITY}, 1e-4, 1e-4, {1}).ok());
  const auto c = AllClose({0, 0, 0, 0}, {0, 0, 0, 1}, 1e-4, 1e-4, {2, 2});
  CHECK(c.mismatches == 1);
  REQUIRE(c.examples.size() == 1);
  CHECK(c.examples[0].find("[1, 1]") != std::string::npos);
}

TEST_CASE("tensors decode from their raw bytes and malformed ones are refused") {
  using internal::DecodeTensor;
  using internal::json;
  // float16 1.5 = 0x3e00, bfloat16 -2 = 0xc000.
  std::string blob = {'\x00', '\x3e', '\x00', '\xc0'};
  auto h = DecodeTensor(json{{"dtype", "float16"}, {"shape", {1}}, {"offset", 0}, {"nbytes", 2}},
                        blob);
  REQUIRE(h.ok());
  CHECK(h->at(0) == 1.5);
  auto b = DecodeTensor(json{{"dtype", "bfloat16"}, {"shape", {1}}, {"offset", 2}, {"nbytes", 2}},
                        blob);
  REQUIRE(b.ok());
  CHECK(b->at(0) == -2.0);
  CHECK(DecodeTensor(json{{"dtype", "float32"}, {"shape", {2}}, {"offset", 0}, {"nbytes", 8}},
                     blob).status().code() == StatusCode::kCorruption);
  CHECK(DecodeTensor(json{{"dtype", "complex64"}, {"shape", {1}}, {"offset", 0}, {"nbytes", 2}},
                     blob).status().code() == StatusCode::kCorruption);
  CHECK(DecodeTensor(json{{"dtype", "float16"}, {"shape", {3}}, {"offset", 0}, {"nbytes", 4}},
                     blob).status().code() == StatusCode::kCorruption);
}

TEST_CASE(
    "tensors on the wire are compared in their own bytes, across pieces") {
  using internal::DecodeTensor;
  using internal::json;
  // 10,000 float32 elements (more than one piece of 4,096), one of them off
  // at flat index 9,000 of shape [100, 100]; the reference's in float16.
  const int n = 10000;
  std::string want_bytes(n * 2, '\0'), got_bytes(n * 4, '\0');
  for (int i = 0; i < n; ++i) {
    const uint16_t one = 0x3c00;  // float16 1.0
    std::memcpy(&want_bytes[2 * i], &one, 2);
    const float g = i == 9000 ? 1.5f : 1.0f;
    std::memcpy(&got_bytes[4 * i], &g, 4);
  }
  auto w = DecodeTensor(json{{"dtype", "float16"},
                             {"shape", {100, 100}},
                             {"offset", 0},
                             {"nbytes", 2 * n}},
                        want_bytes);
  auto g = DecodeTensor(json{{"dtype", "float32"},
                             {"shape", {100, 100}},
                             {"offset", 0},
                             {"nbytes", 4 * n}},
                        std::move(got_bytes));
  REQUIRE(w.ok());
  REQUIRE(g.ok());
  CHECK(w->numel() == n);
  CHECK(g->at(9000) == 1.5);
  CHECK(std::isnan(g->at(n)));  // outside: never read
  const auto c = internal::AllClose(*w, *g, 1e-2, 1e-2, {100, 100});
  CHECK(c.elements == n);
  CHECK(c.mismatches == 1);
  CHECK(c.max_abs == 0.5);
  REQUIRE(c.examples.size() == 1);
  CHECK(c.examples[0].find("[90, 0]") != std::string::npos);
  // The same rule as over doubles.
  std::vector<double> wd(n, 1.0), gd(n, 1.0);
  gd[9000] = 1.5;
  CHECK(internal::AllClose(wd, gd, 1e-2, 1e-2, {100, 100}).examples ==
        c.examples);
  CHECK(internal::RelativeRmsError(*g, *w) ==
        doctest::Approx(internal::RelativeRmsError(gd, wd)));
  CHECK(internal::RelativeRmsError(*g, *w) ==
        doctest::Approx(0.5 / std::sqrt(double(n))));
}

TEST_CASE("relative RMS error and sample indices") {
  CHECK(internal::RelativeRmsError({1.0, 2.0}, {1.0, 2.0}) == 0.0);
  {
    // Over a sample: elements 1 and 3 of `got` against their exact values.
    std::string got(4 * 8, '\0'), exact(2 * 8, '\0');
    const double g[4] = {9.0, 1.1, 9.0, 2.0}, e[2] = {1.0, 2.0};
    std::memcpy(got.data(), g, sizeof(g));
    std::memcpy(exact.data(), e, sizeof(e));
    auto gt = internal::DecodeTensor(internal::json{{"dtype", "float64"},
                                                    {"shape", {4}},
                                                    {"offset", 0},
                                                    {"nbytes", 32}},
                                     got);
    auto et = internal::DecodeTensor(internal::json{{"dtype", "float64"},
                                                    {"shape", {2}},
                                                    {"offset", 0},
                                                    {"nbytes", 16}},
                                     exact);
    REQUIRE(gt.ok());
    REQUIRE(et.ok());
    CHECK(internal::RelativeRmsError(*gt, *et, {1, 3}) ==
          doctest::Approx(std::sqrt(0.01 / 5.0)));
  }
  CHECK(internal::RelativeRmsError({1.1, 2.0}, {1.0, 2.0}) ==
        doctest::Approx(std::sqrt(0.01 / 5.0)));
  std::mt19937_64 rng(7);
  const auto idx = internal::SampleIndices(100000, 50, 16, &rng);
  CHECK(idx.front() == 0);
  CHECK(idx.back() == 99999);
  CHECK(std::is_sorted(idx.begin(), idx.end()));
  CHECK(idx.size() >= 32);
  CHECK(idx.size() <= 82);
}

TEST_CASE("a result survives JSON and back") {
  EvalResult r = MakeResult(2, 17, 3, "hack", std::nullopt);
  r.answer_hash = "abc";
  r.protocol = Protocol::kKernelBench;
  r.findings.push_back({FindingCode::kCachedOutput, "timed call r0c3"});
  r.mismatches = {"element [0]: got 1, want 2"};
  r.eager.kind = "eager";
  r.eager.mean_ms = 1.25;
  r.speedup_compile = 0.75;
  r.own_kernel_us = 10;
  r.total_kernel_us = 40;
  r.times.ops["cand.call"] = {105, 420.5, 96.25, 80.5};
  r.times.spans = {{"build", 10.04, 4020.5}, {"correctness", 4100, 4700.25}};
  r.times.spans_dropped = 2;
  auto back = ResultFromJson(ResultToJson(r));
  REQUIRE(back.ok());
  CHECK(back->level == 2);
  CHECK(back->problem == 17);
  CHECK(back->sample == 3);
  CHECK(back->verdict == "hack");
  CHECK(back->protocol == Protocol::kKernelBench);
  REQUIRE(back->findings.size() == 1);
  CHECK(back->findings[0].code == FindingCode::kCachedOutput);
  CHECK(back->eager.mean_ms == 1.25);
  CHECK(back->speedup_compile.value_or(0) == 0.75);
  CHECK_FALSE(back->speedup_eager.has_value());
  CHECK(back->own_share() == doctest::Approx(0.25));
  REQUIRE(back->times.ops.count("cand.call") == 1);
  CHECK(back->times.ops["cand.call"].calls == 105);
  CHECK(back->times.ops["cand.call"].wall_ms == 420.5);
  CHECK(back->times.ops["cand.call"].runner_ms == 96.25);
  CHECK(back->times.ops["cand.call"].cpu_ms == 80.5);
  // Spans to 0.1 ms.
  REQUIRE(back->times.spans.size() == 2);
  CHECK(back->times.spans[0].name == "build");
  CHECK(back->times.spans[0].start_ms == doctest::Approx(10.0));
  CHECK(back->times.spans[0].end_ms == doctest::Approx(4020.5));
  CHECK(back->times.spans[1].end_ms == doctest::Approx(4700.3));
  CHECK(back->times.spans_dropped == 2);
  // A line from before the CPU time: [calls, wall, runner].
  internal::json old_line = internal::json::parse(ResultToJson(r));
  old_line["times_ms"]["ops"]["cand.call"] = {105, 420.5, 96.25};
  auto older = ResultFromJson(old_line.dump());
  REQUIRE(older.ok());
  CHECK(older->times.ops["cand.call"].calls == 105);
  CHECK(older->times.ops["cand.call"].cpu_ms == 0);
  CHECK(ResultFromJson("{\"level\": 1}").status().code() == StatusCode::kInvalidArgument);
  CHECK_FALSE(ResultFromJson("not json").ok());
}

TEST_CASE("KernelBench's tolerances by precision") {
  CHECK(ToleranceFor("fp32").value_or(0) == 1e-4);
  CHECK(ToleranceFor("bf16").value_or(0) == 1e-2);
  CHECK(ToleranceFor("fp16").value_or(0) == 1e-2);
  CHECK(ToleranceFor("fp8").status().code() == StatusCode::kInvalidArgument);
}

bool HasCodeIn(const VerificationReport& rep, std::string_view code) {
  return std::find(rep.findings.begin(), rep.findings.end(), code) !=
         rep.findings.end();
}

TEST_CASE("a KernelBench report carries its findings and failure class as codes") {
  VerificationRequest q;
  q.task = "kernelbench/level1/1";
  EvalResult r;
  r.compiled = true;
  r.verdict = "incorrect";
  r.trials = 2;
  r.trials_passed = 1;
  // precision_lowered on a wrong answer: a reason, not a (hack) code.
  r.findings.push_back({FindingCode::kPrecisionLowered, "far off"});
  VerificationReport rep = ToVerificationReport(q, r, {});
  CHECK(rep.findings == std::vector<std::string>{"wrong_output"});
  CHECK_FALSE(rep.passed);
  CHECK(rep.reasons.size() == 2);

  r.verdict = "hack";
  rep = ToVerificationReport(q, r, {});
  CHECK(rep.findings == std::vector<std::string>{"precision_lowered"});

  EvalResult slow;
  slow.compiled = slow.correct = true;
  slow.verdict = "not_credited";
  slow.trials = slow.trials_passed = 2;
  rep = ToVerificationReport(q, slow, {});
  CHECK(HasCodeIn(rep, "torch_does_the_work"));
  CHECK_FALSE(rep.passed);

  EvalResult broken;
  broken.verdict = "compile_error";
  broken.times.build_ms = 12;
  rep = ToVerificationReport(q, broken, {});
  CHECK(rep.findings == std::vector<std::string>{"compile_error"});
  CHECK(rep.times.compile_ms == 12);
  for (const char* v : {"runtime_error", "timeout", "error"}) {
    broken.compiled = true;
    broken.verdict = v;
    CAPTURE(v);
    CHECK(ToVerificationReport(q, broken, {}).findings.size() == 1);
  }
}

TEST_CASE("a correct KernelBench answer passes only with a speedup above 1 in every round") {
  VerificationRequest q;
  EvalResult r;
  r.compiled = r.correct = r.credited = true;
  r.verdict = "correct";
  r.trials = r.trials_passed = 2;
  RoundTiming t;
  t.speedup_ratio = 2.0;
  r.rounds = {t, t};
  r.estimate = {2.0, 1.8, 2.2, 0.95};
  CHECK(ToVerificationReport(q, r, {}).passed);
  CHECK(ToVerificationReport(q, r, {}).findings.empty());
  r.estimate.ci_low = 0.9;
  CHECK_FALSE(ToVerificationReport(q, r, {}).passed);
}

}  // namespace
}  // namespace skilldb::verify::kb
