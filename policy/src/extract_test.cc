#include "skilldb/policy/extract.h"

#include <doctest/doctest.h>

namespace skilldb::policy {
namespace {

PolicyTask Host() {
  PolicyTask t;
  t.backend = verify::Backend::kHost;
  return t;
}

constexpr char kKernel[] =
    "extern \"C\" int launch(const Tensor* in, int n_in, Tensor* out, "
    "int n_out, void*) {\n  return 0;\n}\n";

Extraction Run(std::string_view completion) {
  auto e = CodeExtractor().Extract(Host(), completion);
  REQUIRE(e.ok());
  return *e;
}

TEST_CASE("a fenced block surrounded by prose is extracted without the prose") {
  Extraction e = Run(std::string("I will tile the loop.\n```cpp\n") + kKernel +
                     "```\nThis should be faster.");
  CHECK(e.found);
  CHECK(e.source == kKernel);
  CHECK(e.language == "cpp");
  CHECK(e.note.find("block 1 of 1") != std::string::npos);
}

TEST_CASE("of several blocks the last one defining the entry point wins") {
  const std::string helper = "```cpp\nstatic int helper() { return 1; }\n```\n";
  const std::string v1 = std::string("```cpp\n// v1\n") + kKernel + "```\n";
  const std::string v2 = std::string("```c++\n// v2\n") + kKernel + "```\n";
  Extraction e = Run("First:\n" + v1 + helper + "Revised:\n" + v2 +
                     "```\nnvcc -O3\n```\n");
  CHECK(e.found);
  CHECK(e.source.find("// v2") == 0);
  CHECK(e.note.find("block 3 of 4") != std::string::npos);
}

TEST_CASE("an unclosed fence runs to the end of the completion") {
  Extraction e = Run(std::string("```cuda\n") + kKernel);
  CHECK(e.found);
  CHECK(e.source == kKernel);
  CHECK(e.note.find("not closed") != std::string::npos);
}

TEST_CASE("code without any fence is found from its first code line") {
  Extraction e = Run(std::string("Sure. Here it is:\n#include <cmath>\n") +
                     kKernel + "Hope this helps!\n");
  CHECK(e.found);
  CHECK(e.note == "unfenced code");
  CHECK(e.source.find("#include <cmath>") == 0);
  CHECK(e.source.find("Hope") == std::string::npos);
  CHECK(e.source.find("Sure") == std::string::npos);
}

TEST_CASE(
    "a block without the entry point is still passed on for the verifier to "
    "judge") {
  Extraction e = Run("```cpp\nextern \"C\" int run(void) { return 0; }\n```");
  CHECK(e.found);
  CHECK(e.note.find("no entry point") != std::string::npos);
}

TEST_CASE("prose alone and an empty completion yield no candidate") {
  CHECK_FALSE(Run("I cannot help with that.").found);
  CHECK_FALSE(Run("").found);
  CHECK_FALSE(Run("```\n\n```").found);
}

TEST_CASE("the entry point is recognized in its declaration forms") {
  CHECK(DefinesEntryPoint("extern \"C\" int launch (const Tensor*) {}"));
  CHECK(DefinesEntryPoint("extern  \"C\"\nint\nlaunch(void*)"));
  CHECK(DefinesEntryPoint("extern \"C\" {\nint launch(void*);\n}"));
  CHECK_FALSE(DefinesEntryPoint("int launch(void*) { return 0; }"));
  CHECK_FALSE(DefinesEntryPoint("extern \"C\" int relaunch(void*)"));
  CHECK_FALSE(DefinesEntryPoint("extern \"C\" int f(); int launch(void*)"));
}

TEST_CASE("a huge hostile completion is read in bounded time and size") {
  std::string hostile;
  for (int i = 0; i < 200000; ++i) hostile += "launch( ";
  CodeExtractorOptions o;
  o.max_completion_bytes = 1 << 20;
  auto e = CodeExtractor(o).Extract(Host(), hostile + "```cpp\n" + kKernel);
  REQUIRE(e.ok());
  // The fence lies beyond the cut: nothing is found, and nothing hangs.
  CHECK_FALSE(e->found);
}

}  // namespace
}  // namespace skilldb::policy
