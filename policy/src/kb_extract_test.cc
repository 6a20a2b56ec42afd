#include <doctest/doctest.h>

#include "skilldb/policy/kernelbench_answer.h"

namespace skilldb::policy {
namespace kb_extract_test {

constexpr char kImports[] =
    "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension "
    "import load_inline\n";

constexpr char kCuda[] =
    "__global__ void add_kernel(const float* a, const float* b, float* o, int "
    "n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) o[i] = a[i] + b[i];\n"
    "}\n";

constexpr char kModelNew[] =
    "class ModelNew(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "\n"
    "    def forward(self, a, b):\n"
    "        return ext.add(a, b)\n";

std::string Whole() {
  return std::string(kImports) + "src = r'''\n" + kCuda +
         "'''\next = load_inline(name='add', cpp_sources='', cuda_sources=src, "
         "functions=['add'])\n\n" +
         kModelNew;
}

bool Has(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

bool Mentions(const std::vector<std::string>& items, std::string_view part) {
  for (const std::string& s : items) {
    if (Has(s, part)) return true;
  }
  return false;
}

TEST_CASE(
    "one python block among prose is the answer, the prose is reported "
    "unused") {
  const std::string text = "Here is my plan: fuse the add.\n\n```python\n" +
                           Whole() +
                           "```\n\nThis should be about 1.2x faster.\n";
  KernelBenchExtraction e = ExtractKernelBenchAnswer(text);
  REQUIRE(e.found);
  CHECK(e.source == Whole());
  CHECK(e.backend == "cuda");
  CHECK(e.blocks_used == std::vector<int>{1});
  CHECK(Mentions(e.unused, "prose"));
  CHECK_FALSE(e.unclosed_fence);
}

TEST_CASE(
    "of several ModelNew blocks the last wins and the earlier is reported "
    "superseded") {
  std::string v1 = Whole();
  std::string v2 = Whole();
  v2.replace(v2.find("return ext.add(a, b)"), 20, "return ext.add(b, a)");
  const std::string text = "First try:\n```python\n" + v1 +
                           "```\nOn reflection, a better one:\n```python\n" +
                           v2 +
                           "```\nRun it with:\n```bash\npython run.py\n```\n";
  KernelBenchExtraction e = ExtractKernelBenchAnswer(text);
  REQUIRE(e.found);
  CHECK(Has(e.source, "ext.add(b, a)"));
  CHECK_FALSE(Has(e.source, "ext.add(a, b)"));
  CHECK(e.blocks_used == std::vector<int>{2});
  CHECK(e.blocks == 3);
  CHECK(Mentions(e.unused, "block 1"));
  CHECK(Mentions(e.unused, "superseded"));
  CHECK(Mentions(e.unused, "block 3"));
}

TEST_CASE(
    "a ModelNew split over python blocks is joined with the blocks defining "
    "its names") {
  const std::string part1 = std::string(kImports);
  const std::string part2 =
      std::string("src = r'''\n") + kCuda +
      "'''\next = load_inline(name='add', cpp_sources='', "
      "cuda_sources=src, functions=['add'])\n";
  const std::string unrelated = "def benchmark():\n    print('timing')\n";
  const std::string text =
      "Imports:\n```python\n" + part1 + "```\nThe kernel:\n```python\n" +
      part2 + "```\nA helper you may like:\n```python\n" + unrelated +
      "```\nAnd the module:\n```python\n" + kModelNew + "```\n";
  KernelBenchExtraction e = ExtractKernelBenchAnswer(text);
  REQUIRE(e.found);
  CHECK(e.blocks_used == std::vector<int>{1, 2, 4});
  CHECK(e.source == part1 + part2 + kModelNew);
  CHECK(Mentions(e.unused, "block 3"));
}

TEST_CASE(
    "a kernel in its own cuda block is bound to the name load_inline takes") {
  const std::string py =
      std::string(kImports) +
      "ext = load_inline(name='add', cpp_sources='', cuda_sources=cuda_src, "
      "functions=['add'])\n\n" +
      kModelNew;
  const std::string text = "The kernel:\n```cuda\n" + std::string(kCuda) +
                           "```\nThe module:\n```python\n" + py + "```\n";
  KernelBenchExtraction e = ExtractKernelBenchAnswer(text);
  REQUIRE(e.found);
  CHECK(e.source.rfind("cuda_src = r'''" + std::string(kCuda) + "'''\n", 0) ==
        0);
  CHECK(Has(e.source, "class ModelNew"));
  CHECK(e.blocks_used == std::vector<int>{1, 2});
  CHECK(Has(e.note, "bound"));
}

TEST_CASE("an unclosed last fence runs to the end and is flagged") {
  const std::string text = "```python\n" + Whole();
  KernelBenchExtraction e = ExtractKernelBenchAnswer(text);
  REQUIRE(e.found);
  CHECK(e.source == Whole());
  CHECK(e.unclosed_fence);
  CHECK(Has(e.note, "not closed"));
}

TEST_CASE(
    "code without fences is taken from its first line to the prose after it") {
  const std::string text =
      "Sure! Below is the optimized version.\n\n" + Whole() +
      "\nThis version launches one kernel per call.\nHope it helps.\n";
  KernelBenchExtraction e = ExtractKernelBenchAnswer(text);
  REQUIRE(e.found);
  CHECK(e.source.rfind("import torch\n", 0) == 0);
  CHECK(Has(e.source, "return ext.add(a, b)"));
  CHECK_FALSE(Has(e.source, "Hope it helps"));
  CHECK_FALSE(Has(e.source, "Sure!"));
  CHECK(Mentions(e.unused, "prose before"));
  CHECK(Mentions(e.unused, "after the code"));
}

TEST_CASE(
    "no code at all, or code without ModelNew, finds nothing and says what was "
    "there") {
  KernelBenchExtraction none =
      ExtractKernelBenchAnswer("I cannot help with that.");
  CHECK_FALSE(none.found);
  CHECK(none.source.empty());
  CHECK(Has(none.note, "ModelNew"));

  KernelBenchExtraction empty = ExtractKernelBenchAnswer("  \n");
  CHECK_FALSE(empty.found);
  CHECK(Has(empty.note, "empty"));

  const std::string only_model =
      "```python\nclass Model(nn.Module):\n    pass\n```\n"
      "```cuda\n" +
      std::string(kCuda) + "```\n";
  KernelBenchExtraction e = ExtractKernelBenchAnswer(only_model);
  CHECK_FALSE(e.found);
  CHECK(e.blocks == 2);
  CHECK(Has(e.note, "none defines"));
  CHECK(e.unused.size() == 2);
}

TEST_CASE("reasoning before </think> is set aside, drafts in it are not used") {
  std::string draft = Whole();
  draft.replace(draft.find("return ext.add(a, b)"), 20,
                "return a + b  # draft");
  const std::string text = "<think>\nLet me draft:\n```python\n" + draft +
                           "```\nHmm, use the kernel.\n</think>\n```python\n" +
                           Whole() + "```\n";
  KernelBenchExtraction e = ExtractKernelBenchAnswer(text);
  REQUIRE(e.found);
  CHECK(e.source == Whole());
  CHECK(Mentions(e.unused, "</think>"));
}

TEST_CASE(
    "completions past the byte limit are cut before reading and the cut is "
    "reported") {
  KernelBenchExtractOptions o;
  o.max_completion_bytes = 64;
  const std::string text = "```python\n" + Whole() + "```\n";
  KernelBenchExtraction e = ExtractKernelBenchAnswer(text, o);
  CHECK_FALSE(e.found);
  CHECK(Mentions(e.unused, "past 64 bytes"));
}

TEST_CASE("a triton answer is detected as triton") {
  const std::string triton =
      "import torch\nimport torch.nn as nn\nimport triton\nimport "
      "triton.language as tl\n\n"
      "@triton.jit\ndef add_kernel(a, b, o, n, BLOCK: tl.constexpr):\n"
      "    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
      "    tl.store(o + i, tl.load(a + i, mask=i < n) + tl.load(b + i, mask=i "
      "< n), mask=i < n)\n\n"
      "class ModelNew(nn.Module):\n    def forward(self, a, b):\n"
      "        o = torch.empty_like(a)\n"
      "        add_kernel[(a.numel() + 1023) // 1024,](a, b, o, a.numel(), "
      "BLOCK=1024)\n"
      "        return o\n";
  KernelBenchExtraction e =
      ExtractKernelBenchAnswer("~~~python\n" + triton + "~~~\n");
  REQUIRE(e.found);
  CHECK(e.backend == "triton");
}

TEST_CASE("an info string's odd bytes are not quoted back in the notes") {
  const std::string text =
      std::string("```sh\xff\x1b[2J\nls\n```\n```python\n") + Whole() + "```\n";
  KernelBenchExtraction e = ExtractKernelBenchAnswer(text);
  REQUIRE(e.found);
  REQUIRE_FALSE(e.unused.empty());
  for (const std::string& u : e.unused) {
    for (unsigned char c : u) CHECK((c >= 0x20 && c < 0x7f));
  }
  CHECK(Mentions(e.unused, "block 1 (sh2j"));
}

TEST_CASE("random texts made of answer fragments never break the extractor") {
  // A fixed-seed mix of the pieces real answers are made of, in any order:
  // every outcome is a value, a found answer has a source, and every note
  // is printable (it is quoted back to the model and to terminals).
  const std::vector<std::string> pieces = {
      "```",
      "```python\n",
      "~~~\n",
      "```cuda\n",
      "```cpp\n",
      "class ModelNew(nn.Module):\n",
      "    def forward(self, x):\n        return x\n",
      "cuda_sources=src",
      "cpp_sources = [k]",
      "'''",
      "\"\"\"",
      "</think>",
      "<think>",
      "import torch\n",
      "src = r'''\n",
      "\n",
      "\r\n",
      "Here is the answer.\n",
      "__global__ void k() {}\n",
      "\xff\xfe",
      "\x1b[2J",
      "x = 1\n"};
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int found = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const int n = static_cast<int>(next() % 24);
    for (int i = 0; i < n; ++i) text += pieces[next() % pieces.size()];
    const KernelBenchExtraction e = ExtractKernelBenchAnswer(text);
    if (e.found) {
      ++found;
      REQUIRE_FALSE(e.source.empty());
    }
    for (const std::string& u : e.unused) {
      for (unsigned char c : u) REQUIRE((c >= 0x20 && c < 0x7f));
    }
    (void)FormatKernelBenchFeedback(e, nullptr);
  }
  CHECK(found > 0);  // the mix does reach the answer paths
}

TEST_CASE("answer format names parse and others are refused") {
  CHECK(*ParseKernelBenchFormat("cuda") == KernelBenchFormat::kCuda);
  CHECK(*ParseKernelBenchFormat("triton") == KernelBenchFormat::kTriton);
  CHECK(*ParseKernelBenchFormat("cpp") == KernelBenchFormat::kCpp);
  CHECK(ParseKernelBenchFormat("cute").status().code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace kb_extract_test
}  // namespace skilldb::policy
