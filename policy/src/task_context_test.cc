#include "skilldb/policy/task_context.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "agents_test_util.h"

namespace skilldb::policy {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST_CASE("reference identifiers skip keywords, protocol names and comments") {
  const char* src =
      "// tile_hint in a comment\n"
      "extern \"C\" int launch(const Tensor* in, int n_in, Tensor* out, int "
      "n_out, void*) {\n"
      "  float acc = std::fmax(row_max, x); __shfl_down_sync(0, acc, 1);\n"
      "  return 0; }\n";
  std::vector<std::string> ids = ReferenceIdentifiers(src);
  CHECK(Has(ids, "fmax"));
  CHECK(Has(ids, "row_max"));
  CHECK(Has(ids, "__shfl_down_sync"));
  CHECK(Has(ids, "acc"));
  CHECK_FALSE(Has(ids, "tile_hint"));
  CHECK_FALSE(Has(ids, "launch"));
  CHECK_FALSE(Has(ids, "Tensor"));
  CHECK_FALSE(Has(ids, "float"));
  CHECK(ReferenceIdentifiers(src, 2).size() == 2);
}

TEST_CASE(
    "a task loads with its protocol and its query names family and reference") {
  PolicyTask t = testing::HostTask("softmax_rows_fp32");
  CHECK(t.task.family == "softmax");
  CHECK(t.protocol.find("extern \"C\" int launch") != std::string::npos);
  CHECK(CandidateLanguage(t) == "cpp");
  CHECK(ReferenceSource(t) == t.task.reference_cpp);
  const std::string q = RetrievalQuery(t);
  CHECK(q.find(t.task.description) == 0);
  CHECK(q.find(" softmax ") != std::string::npos);
  CHECK(q.find("exp") != std::string::npos);  // from the host reference
}

TEST_CASE("an unknown task and a missing protocol file are errors") {
  CHECK(LoadPolicyTask(testing::HostOptions(), "no_such_task")
            .status()
            .IsNotFound());
  CHECK(LoadPolicyTask(testing::HostOptions(), "softmax_rows_fp32",
                       "/nonexistent/PROTOCOL.md")
            .status()
            .IsNotFound());
}

}  // namespace
}  // namespace skilldb::policy
