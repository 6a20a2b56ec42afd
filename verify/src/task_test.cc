#include "skilldb/verify/task.h"

#include <doctest/doctest.h>

#include <set>

#include "file_util.h"
#include "build_paths.h"

namespace skilldb::verify {
namespace {

const std::string kTaskDir = std::string(SKILLDB_VERIFY_SOURCE_DIR) + "/tasks";

// A scratch task root with one task whose task.json is `json`.
struct TempTaskRoot {
  explicit TempTaskRoot(const std::string& json) {
    root = *internal::MakeTempDir("/tmp", "skilldb-task-test-");
    const std::string dir = root + "/t1";
    REQUIRE(internal::MakeDirs(dir).ok());
    REQUIRE(internal::WriteFileAtomic(dir + "/task.json", json).ok());
    for (const char* f : {"reference.cu", "reference.cc", "oracle.cc"}) {
      REQUIRE(internal::WriteFileAtomic(dir + "/" + f, "// empty\n").ok());
    }
  }
  ~TempTaskRoot() { internal::RemoveTree(root); }
  std::string root;
};

const char* kMinimal = R"({
  "name": "t1", "family": "elementwise", "description": "d",
  "dims": {"N": 8}, "host_dims": {"N": 4}, "check_dims": [{"N": 3}],
  "inputs": [{"name": "x", "shape": ["N"]}],
  "outputs": [{"name": "y", "shape": ["N"]}],
  "flops": "N"
})";

TEST_CASE("the shipped task library has at least 16 tasks and all of them load") {
  auto names = ListTasks(kTaskDir);
  REQUIRE(names.ok());
  CHECK(names->size() >= 16);
  std::set<std::string> families;
  for (const std::string& name : *names) {
    auto t = LoadTask(kTaskDir, name);
    REQUIRE_MESSAGE(t.ok(), name << ": " << t.status().ToString());
    families.insert(t->family);
    CHECK(!t->reference_cuda.empty());
    CHECK(!t->reference_cpp.empty());
    CHECK(!t->oracle_cpp.empty());
    CHECK(*TaskBytes(*t, t->dims) > 0);
    bool has_fast = false, has_wrong = false;
    for (const CandidateSpec& c : t->candidates) {
      if (c.language != SourceLanguage::kCuda) continue;
      has_fast |= c.expect_pass;
      has_wrong |= !c.expect_pass;
    }
    CHECK_MESSAGE(has_fast, name << " ships no faster CUDA candidate");
    CHECK_MESSAGE(has_wrong, name << " ships no wrong CUDA candidate");
  }
  for (const char* f : {"elementwise", "reduction", "softmax", "normalization",
                        "matmul", "transpose", "conv", "attention", "scan"}) {
    CHECK_MESSAGE(families.count(f) == 1, "no task of family " << f);
  }
}

TEST_CASE("every task instantiates the hack templates for both languages") {
  auto t = LoadTask(kTaskDir, "softmax_rows_fp32");
  REQUIRE(t.ok());
  for (SourceLanguage lang : {SourceLanguage::kCuda, SourceLanguage::kCpp}) {
    auto cands = LoadCandidates(kTaskDir, *t, lang);
    REQUIRE(cands.ok());
    int hacks = 0;
    for (const Candidate& c : *cands) {
      CHECK(c.spec.language == lang);
      if (!c.spec.generated) continue;
      ++hacks;
      CHECK(!c.spec.expect_pass);
      CHECK(!c.spec.expect_any.empty());
      for (const char* placeholder : {"{{REFERENCE}}", "{{HOST_REFERENCE}}", "{{FIXED_SHAPES}}"}) {
        CHECK(c.source.find(placeholder) == std::string::npos);
      }
      const bool wraps = c.source.find("skdb_honest_launch") != std::string::npos ||
                         c.source.find("skdb_host_launch") != std::string::npos;
      CHECK(wraps);
    }
    CHECK(hacks >= (lang == SourceLanguage::kCuda ? 14 : 12));
  }
}

TEST_CASE("the hard-coded-shape hack bakes in the timing shape") {
  auto t = LoadTask(kTaskDir, "matmul_fp32");
  REQUIRE(t.ok());
  auto cands = LoadCandidates(kTaskDir, *t, SourceLanguage::kCuda);
  REQUIRE(cands.ok());
  bool found = false;
  for (const Candidate& c : *cands) {
    if (c.spec.name != "hack_hardcoded_shape") continue;
    found = true;
    CHECK(c.source.find("{2048,2048,}") != std::string::npos);
  }
  CHECK(found);
}

TEST_CASE("an unknown task is NotFound and a bad name is InvalidArgument") {
  CHECK(LoadTask(kTaskDir, "no_such_task").status().code() == StatusCode::kNotFound);
  CHECK(LoadTask(kTaskDir, "../etc").status().code() == StatusCode::kInvalidArgument);
  CHECK(LoadTask(kTaskDir, "_hacks").status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("a minimal task.json loads with defaults") {
  TempTaskRoot root(kMinimal);
  auto t = LoadTask(root.root, "t1");
  REQUIRE(t.ok());
  CHECK(t->inputs[0].dtype == Dtype::kFloat32);
  REQUIRE(t->inputs[0].distributions.size() == 1);
  CHECK(t->inputs[0].distributions[0] == Distribution::kNormal);
  CHECK(*TaskBytes(*t, t->dims) == 64.0);
  CHECK(*TaskFlops(*t, t->dims) == 8.0);
  CHECK(ToleranceFor(*t, Dtype::kBFloat16).atol == doctest::Approx(1e-2));
  CHECK(&TimingDims(*t, Backend::kHost) == &t->host_dims);
}

TEST_CASE("a malformed task.json is InvalidArgument naming the field") {
  std::string bad = kMinimal;
  bad.replace(bad.find("\"flops\": \"N\""), 12, "\"flops\": \"N*Q\"");
  TempTaskRoot root(bad);
  auto t = LoadTask(root.root, "t1");
  REQUIRE(!t.ok());
  CHECK(t.status().code() == StatusCode::kInvalidArgument);
  CHECK(t.status().message().find("flops") != std::string::npos);
}

TEST_CASE("a shape that does not resolve at a check shape is rejected") {
  std::string bad = kMinimal;
  bad.replace(bad.find("[{\"N\": 3}]"), 10, "[{\"M\": 3}]");
  TempTaskRoot root(bad);
  CHECK(LoadTask(root.root, "t1").status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("dtype, distribution and backend names round-trip") {
  for (Dtype d : {Dtype::kFloat32, Dtype::kBFloat16, Dtype::kFloat16, Dtype::kInt32,
                  Dtype::kInt64}) {
    CHECK(*ParseDtype(DtypeName(d)) == d);
  }
  for (Distribution d : {Distribution::kNormal, Distribution::kUniform,
                         Distribution::kLarge, Distribution::kSpecial}) {
    CHECK(*ParseDistribution(DistributionName(d)) == d);
  }
  CHECK(*ParseBackend("cuda") == Backend::kCuda);
  CHECK(!ParseBackend("tpu").ok());
  CHECK(!ParseDtype("float8").ok());
}

}  // namespace
}  // namespace skilldb::verify
