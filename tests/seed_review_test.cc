// The facts an expert review of the seed library corrected (issue 21), each
// checked where the seed's own text and code allow it, so a later edit that
// brings an error back fails here:
// - a setmaxnreg split fits the CTA's launch allocation, computed from the
//   launch configuration the skill's code states (not the 65536-register
//   file);
// - Triton row-per-program patterns form row offsets in int64;
// - Triton patterns that feed tl.dot zero-fill every masked load;
// - wgmma MN-major descriptors set LBO and SBO as the PTX ISA's canonical
//   layouts define them (the review's open question about the MN-major
//   skill: they were right; the check replays them against TMA's layout);
// - the retracted claims (persistence removes the wave tail, TMA below sm_90
//   is dropped silently, ...) do not come back, and the corrected ones stay.
//
// Compiler-side facts (ptxas's register count, the sm_80 error for TMA) are
// checked by scripts/check_seed_code.py (ctest seed_cuda_code_compiles); the
// device-side ones (online softmax's NaN semantics, the >2^31 cross-entropy)
// by scripts/seed_evidence_gpu.sh on the GPU machine.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "seed_data.h"
#include "seed_test_util.h"
#include "build_paths.h"

#ifndef SKILLDB_SEED_DIR
#error "SKILLDB_SEED_DIR must name the seed directory (data/seed)"
#endif

namespace skilldb {
namespace {

using Json = nlohmann::json;

const Skill* FindSkill(const std::vector<Skill>& skills,
                       const std::string& id) {
  for (const Skill& s : skills) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

// ---- A small integer-expression evaluator for launch bounds ----------------

// Evaluates `text` (integers, names bound in `names`, + - * / and
// parentheses). nullopt if anything else appears.
class IntExpr {
 public:
  IntExpr(std::string text, const std::map<std::string, long>& names)
      : text_(std::move(text)), names_(names) {}

  std::optional<long> Value() {
    auto v = Sum();
    Skip();
    if (!v || pos_ != text_.size()) return std::nullopt;
    return v;
  }

 private:
  void Skip() {
    while (pos_ < text_.size() && std::isspace(Uchar(text_[pos_]))) ++pos_;
  }
  static unsigned char Uchar(char c) { return static_cast<unsigned char>(c); }
  bool Eat(char c) {
    Skip();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  std::optional<long> Sum() {
    auto v = Product();
    while (v) {
      if (Eat('+')) {
        auto r = Product();
        v = r ? std::optional<long>(*v + *r) : std::nullopt;
      } else if (Eat('-')) {
        auto r = Product();
        v = r ? std::optional<long>(*v - *r) : std::nullopt;
      } else {
        break;
      }
    }
    return v;
  }
  std::optional<long> Product() {
    auto v = Atom();
    while (v) {
      if (Eat('*')) {
        auto r = Atom();
        v = r ? std::optional<long>(*v * *r) : std::nullopt;
      } else if (Eat('/')) {
        auto r = Atom();
        v = r && *r != 0 ? std::optional<long>(*v / *r) : std::nullopt;
      } else {
        break;
      }
    }
    return v;
  }
  std::optional<long> Atom() {
    Skip();
    if (Eat('(')) {
      auto v = Sum();
      return Eat(')') ? v : std::nullopt;
    }
    size_t end = pos_;
    while (end < text_.size() &&
           (std::isalnum(Uchar(text_[end])) || text_[end] == '_')) {
      ++end;
    }
    if (end == pos_) return std::nullopt;
    const std::string token = text_.substr(pos_, end - pos_);
    pos_ = end;
    if (std::isdigit(Uchar(token[0]))) {
      return std::all_of(token.begin(), token.end(),
                         [](char c) { return std::isdigit(Uchar(c)); })
                 ? std::optional<long>(std::stol(token))
                 : std::nullopt;
    }
    auto it = names_.find(token);
    return it == names_.end() ? std::nullopt : std::optional<long>(it->second);
  }

  std::string text_;
  const std::map<std::string, long>& names_;
  size_t pos_ = 0;
};

// `constexpr int NAME = expr, NAME2 = expr2;` bindings of `code` (static
// class members included), in order, starting from `names` (e.g. a template
// parameter's value). A binding whose expression cannot be evaluated is
// skipped.
std::map<std::string, long> IntConstants(
    const std::string& code, std::map<std::string, long> names = {}) {
  static const std::regex kConst(
      R"(constexpr\s+(?:int|unsigned|uint32_t|int32_t)\s+([^;]+);)");
  static const std::regex kBinding(R"(^\s*(\w+)\s*=\s*(.+)$)");
  for (std::sregex_iterator it(code.begin(), code.end(), kConst), end;
       it != end; ++it) {
    const std::string list = (*it)[1];
    for (size_t start = 0; start <= list.size();) {
      size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      const std::string part = list.substr(start, comma - start);
      std::smatch m;
      if (std::regex_match(part, m, kBinding)) {
        if (auto v = IntExpr(m[2], names).Value()) names[m[1]] = *v;
      }
      start = comma + 1;
    }
  }
  return names;
}

// Registers per thread of a kernel with __launch_bounds__(threads,
// min_blocks) that uses setmaxnreg: ptxas gives it the whole cap, 65536 /
// (threads x min_blocks) rounded down to the allocation granularity of 8,
// at most 255 (scripts/check_seed_code.py checks ptxas agrees).
long LaunchRegisters(long threads, long min_blocks) {
  return std::min(255L, 65536 / (threads * min_blocks) / 8 * 8);
}

struct LaunchBounds {
  long threads = 0;
  long min_blocks = 1;
};

std::vector<LaunchBounds> LaunchBoundsOf(const std::string& code) {
  static const std::regex kBounds(
      R"(__launch_bounds__\(([^,)]+)(?:,([^)]+))?\))");
  const std::map<std::string, long> names = IntConstants(code);
  std::vector<LaunchBounds> out;
  for (std::sregex_iterator it(code.begin(), code.end(), kBounds), end;
       it != end; ++it) {
    auto threads = IntExpr((*it)[1], names).Value();
    REQUIRE_MESSAGE(threads.has_value(),
                    "cannot evaluate __launch_bounds__(" << (*it)[1] << ")");
    LaunchBounds b{*threads, 1};
    if ((*it)[2].matched) {
      auto blocks = IntExpr((*it)[2], names).Value();
      REQUIRE(blocks.has_value());
      b.min_blocks = *blocks;
    }
    out.push_back(b);
  }
  return out;
}

// The register counts the code passes to setmaxnreg, however it spells it
// (raw PTX, a reg_alloc<N>/reg_dealloc<N> helper, cuda::ptx's
// setmaxnreg_inc/dec<N>).
std::set<long> SetmaxnregValues(const std::string& code) {
  static const std::regex kValue(
      R"((?:setmaxnreg\.(?:inc|dec)\.sync\.aligned\.u32\s+|reg_(?:de)?alloc<|setmaxnreg_(?:inc|dec)<)(\d+))");
  std::set<long> values;
  for (std::sregex_iterator it(code.begin(), code.end(), kValue), end;
       it != end; ++it) {
    values.insert(std::stol((*it)[1]));
  }
  return values;
}

TEST_CASE(
    "every setmaxnreg split fits the CTA's launch allocation computed from "
    "the launch configuration the skill states") {
  int checked = 0;
  for (const Skill& s : testing::SeedSkillsOrFail()) {
    if (s.code.find("setmaxnreg") == std::string::npos) continue;
    CAPTURE(s.id);
    const Json extra = testing::ExtraJson(s);
    REQUIRE_MESSAGE(extra.contains("register_budget"),
                    "setmaxnreg without extra.register_budget");
    const Json& b = extra["register_budget"];
    const long threads = b.at("threads").get<long>();
    const long min_blocks = b.value("min_blocks_per_sm", 1L);
    const std::vector<long> split =
        b.at("warpgroup_registers").get<std::vector<long>>();
    // The stated configuration is the code's.
    const std::vector<LaunchBounds> bounds = LaunchBoundsOf(s.code);
    REQUIRE_MESSAGE(!bounds.empty(), "no __launch_bounds__ to compute from");
    bool found = false;
    for (const LaunchBounds& lb : bounds) {
      found |= lb.threads == threads && lb.min_blocks == min_blocks;
    }
    CHECK_MESSAGE(
        found, "no __launch_bounds__(" << threads << ", " << min_blocks << ")");
    CHECK(static_cast<long>(split.size()) * 128 == threads);
    const long regs = LaunchRegisters(threads, min_blocks);
    const long allocation = threads * regs;
    const long need = 128 * std::accumulate(split.begin(), split.end(), 0L);
    CHECK_MESSAGE(need <= allocation, "the split needs " << need
                                                         << " registers; the "
                                                            "CTA owns "
                                                         << allocation);
    for (long v : SetmaxnregValues(s.code)) {
      CHECK_MESSAGE(std::count(split.begin(), split.end(), v) > 0,
                    "setmaxnreg " << v << " is not in the stated split");
      CHECK(v % 8 == 0);
      CHECK(v >= 24);
      CHECK(v <= 256);
    }
    // The prose states the same bound, not the register file.
    const std::string text = s.body + "\n" + s.code;
    const std::string product = std::to_string(threads) + " x " +
                                std::to_string(regs) + " = " +
                                std::to_string(allocation);
    const std::string product_code = std::to_string(threads) + " * " +
                                     std::to_string(regs) + " = " +
                                     std::to_string(allocation);
    CHECK_MESSAGE((text.find(product) != std::string::npos ||
                   text.find(product_code) != std::string::npos),
                  "the text does not state the launch allocation " << product);
    CHECK_MESSAGE(text.find("<= 65536") == std::string::npos,
                  "budget compared against the register file");
    ++checked;
  }
  CHECK(checked >= 1);
}

TEST_CASE("the setmaxnreg bound follows the launch configuration") {
  // 384 threads, one CTA per SM: 168 each (the tc-setmaxnreg skill's case).
  CHECK(LaunchRegisters(384, 1) == 168);
  // Two CTAs per SM halve the cap: a 40/232 split no longer fits.
  CHECK(LaunchRegisters(384, 2) == 80);
  CHECK(128 * (40 + 232 + 232) > 384 * LaunchRegisters(384, 2));
  CHECK(LaunchRegisters(128, 1) == 255);
  const std::map<std::string, long> names = IntConstants(
      "constexpr int WG = 128;\nconstexpr int kThreads = (2 + 1) * WG;");
  CHECK(names.at("kThreads") == 384);
  // Declarator lists, and a template parameter bound by the caller.
  const std::map<std::string, long> list = IntConstants(
      "constexpr int A = 2, B = A * 3;\nstatic constexpr int C = B * kW;",
      {{"kW", 4}});
  CHECK(list.at("B") == 6);
  CHECK(list.at("C") == 24);
  const std::vector<LaunchBounds> lb =
      LaunchBoundsOf("constexpr int WG = 128;\n__launch_bounds__(3 * WG, 1)");
  REQUIRE(lb.size() == 1);
  CHECK(lb[0].threads == 384);
}

// ---- wgmma MN-major descriptors: LBO and SBO against the PTX ISA -----------

// Byte offset (before swizzling) at which wgmma reads element (mn, k) of a
// 16-bit MN-major operand whose descriptor has `lbo` and `sbo` and a
// `swizzle_bytes`-wide swizzle. PTX ISA, wgmma "Shared Memory Matrix Layout"
// and "Strides": canonical MN-major layout, in elements, T = 8,
//   ((T, W/16, m), (8, k)) : ((1, T, LBO), (W/16 * T, SBO)),
// i.e. LBO steps between W-byte groups along MN, SBO between 8-row groups
// along K (CUTLASS make_gmma_desc<Major::MN> sets them the same way).
long CanonicalMnMajorOffset(long mn, long k, long swizzle_bytes, long lbo,
                            long sbo) {
  const long t = 8, groups = swizzle_bytes / 16;
  const long mn0 = mn % t, mn1 = (mn / t) % groups, mn2 = mn / (t * groups);
  return 2 * (mn0 + t * mn1 + groups * t * (k % 8)) + mn2 * lbo + (k / 8) * sbo;
}

// Where 2D TMA loads put element (mn, k) of a K x MN tile stored as slabs of
// swizzle_bytes / 2 columns (one box each, slab j at j * slab_bytes, rows of
// swizzle_bytes). Both sides swizzle the same address bits (slab bases are
// aligned to the swizzle repeat), so comparing unswizzled offsets suffices.
long TmaSlabOffset(long mn, long k, long swizzle_bytes, long slab_bytes) {
  const long cols = swizzle_bytes / 2;
  return (mn / cols) * slab_bytes + k * swizzle_bytes + (mn % cols) * 2;
}

// Elements of an mn_extent x k_extent operand, read as k16 slices starting
// k16_step bytes apart, that the descriptor reads from another place than
// TMA wrote them to.
long MnMajorMismatches(long swizzle_bytes, long slab_bytes, long lbo, long sbo,
                       long k16_step, long mn_extent, long k_extent) {
  long bad = 0;
  for (long kk = 0; kk < k_extent / 16; ++kk) {
    for (long mn = 0; mn < mn_extent; ++mn) {
      for (long k = 0; k < 16; ++k) {
        bad += kk * k16_step +
                   CanonicalMnMajorOffset(mn, k, swizzle_bytes, lbo, sbo) !=
               TmaSlabOffset(mn, 16 * kk + k, swizzle_bytes, slab_bytes);
      }
    }
  }
  return bad;
}

TEST_CASE("the MN-major layout model tells LBO from SBO") {
  // 64B swizzle, 64 k-rows per slab: LBO = 4096, SBO = 512.
  CHECK(MnMajorMismatches(64, 4096, 4096, 512, 1024, 128, 64) == 0);
  CHECK(MnMajorMismatches(64, 4096, 512, 4096, 1024, 128, 64) > 0);
  CHECK(MnMajorMismatches(64, 4096, 4096, 512, 512, 128, 64) > 0);
  // One slab (MN extent = W / 2): LBO is never used, SBO still is.
  CHECK(MnMajorMismatches(128, 8192, 0, 1024, 2048, 64, 64) == 0);
  CHECK(MnMajorMismatches(128, 8192, 0, 2048, 2048, 64, 64) > 0);
}

TEST_CASE(
    "wgmma MN-major descriptors in the seed read the bytes TMA wrote: LBO "
    "steps between swizzle-wide slabs along N, SBO between 8-row groups "
    "along K") {
  const std::vector<Skill> skills = testing::SeedSkillsOrFail();
  // B [K, N] row-major fed as MN-major, in 64B and 32B swizzles.
  const Skill* mn = FindSkill(skills, "tc-wgmma-mn-major-b-swizzle-modes");
  REQUIRE(mn != nullptr);
  for (const char* use :
       {"(uint64_t(L::LBO >> 4) << 16)", "(uint64_t(L::SBO >> 4) << 32)",
        "K16_STEP * kk", "j * MnMajorB<kSwB>::SLAB_BYTES"}) {
    CHECK_MESSAGE(mn->code.find(use) != std::string::npos,
                  "the descriptor no longer uses " << use);
  }
  for (long swizzle : {64L, 32L}) {
    CAPTURE(swizzle);
    const std::map<std::string, long> c =
        IntConstants(mn->code, {{"kSwB", swizzle}});
    for (const char* name :
         {"BN", "BK", "SLAB_BYTES", "LBO", "SBO", "K16_STEP"}) {
      REQUIRE_MESSAGE(c.count(name) == 1, "no constant " << name);
    }
    CHECK(MnMajorMismatches(swizzle, c.at("SLAB_BYTES"), c.at("LBO"),
                            c.at("SBO"), c.at("K16_STEP"), c.at("BN"),
                            c.at("BK")) == 0);
  }
  // V [keys, d] as the MN-major B operand of P V, 128B swizzle.
  const Skill* fa = FindSkill(skills, "tc-wgmma-register-a-attention-pv");
  REQUIRE(fa != nullptr);
  for (const char* use :
       {"(uint64_t(V_LBO >> 4) << 16)", "(uint64_t(V_SBO >> 4) << 32)",
        "kk * V_K16_STEP", "dst + SLAB_BYTES"}) {
    CHECK_MESSAGE(fa->code.find(use) != std::string::npos,
                  "the descriptor no longer uses " << use);
  }
  const std::map<std::string, long> v = IntConstants(fa->code);
  for (const char* name :
       {"HEAD_DIM", "KV_ROWS", "SLAB_BYTES", "V_LBO", "V_SBO", "V_K16_STEP"}) {
    REQUIRE_MESSAGE(v.count(name) == 1, "no constant " << name);
  }
  CHECK(MnMajorMismatches(128, v.at("SLAB_BYTES"), v.at("V_LBO"), v.at("V_SBO"),
                          v.at("V_K16_STEP"), v.at("HEAD_DIM"),
                          v.at("KV_ROWS")) == 0);
}

// ---- Triton: int64 row offsets, zero-filled dot operands -------------------

// Program-id variables multiplied by a row stride or row length, in int32
// (assigned from tl.program_id without .to(tl.int64)).
std::vector<std::string> Int32RowOffsets(const std::string& code) {
  static const std::regex kPid(
      R"((\w+)\s*=\s*tl\.program_id\([^)]*\)([^\n]*))");
  std::vector<std::string> bad;
  for (std::sregex_iterator it(code.begin(), code.end(), kPid), end; it != end;
       ++it) {
    if (std::string((*it)[2]).find(".to(tl.int64)") != std::string::npos) {
      continue;
    }
    const std::regex product(
        "\\b" + std::string((*it)[1]) +
        R"(\s*\*\s*(stride\w*|n_cols|row_len\w*|seq_len)\b)");
    std::smatch m;
    if (std::regex_search(code, m, product)) bad.push_back(m.str());
  }
  return bad;
}

TEST_CASE(
    "triton patterns form per-row offsets from the program id in int64, "
    "so rows x stride past 2^31 does not wrap") {
  int rowwise = 0;
  for (const Skill& s : testing::SeedSkillsOrFail()) {
    if (s.language != Language::kTriton) continue;
    CAPTURE(s.id);
    for (const std::string& product : Int32RowOffsets(s.code)) {
      FAIL_CHECK("int32 row offset: " << product);
    }
    rowwise += s.code.find(".to(tl.int64)") != std::string::npos;
  }
  CHECK(rowwise >= 8);
  // The cross-entropy skill is the one the review found (8192 x 262144).
  const std::vector<Skill> skills = testing::SeedSkillsOrFail();
  const Skill* xent = FindSkill(skills, "fuse-softmax-cross-entropy");
  REQUIRE(xent != nullptr);
  CHECK(xent->code.find("tl.program_id(0).to(tl.int64)") != std::string::npos);
  // The rule sees the bug it is for.
  CHECK(Int32RowOffsets("row = tl.program_id(0)\nbase = p + row * stride_row")
            .size() == 1);
  CHECK(Int32RowOffsets("row = tl.program_id(0).to(tl.int64)\n"
                        "base = p + row * stride_row")
            .empty());
}

// The tl.load(...) calls of `code`, each as written.
std::vector<std::string> LoadCalls(const std::string& code) {
  std::vector<std::string> calls;
  for (size_t at = code.find("tl.load("); at != std::string::npos;
       at = code.find("tl.load(", at + 1)) {
    int depth = 0;
    size_t end = at + 7;
    for (; end < code.size(); ++end) {
      if (code[end] == '(') ++depth;
      if (code[end] == ')' && --depth == 0) break;
    }
    calls.push_back(code.substr(at, end + 1 - at));
  }
  return calls;
}

TEST_CASE(
    "triton patterns that call tl.dot give every masked load a fill value "
    "(0 x Inf is NaN: both operands need other=0)") {
  int dots = 0;
  for (const Skill& s : testing::SeedSkillsOrFail()) {
    if (s.language != Language::kTriton ||
        s.code.find("tl.dot(") == std::string::npos) {
      continue;
    }
    CAPTURE(s.id);
    ++dots;
    for (const std::string& call : LoadCalls(s.code)) {
      if (call.find("mask=") == std::string::npos) continue;
      CHECK_MESSAGE(call.find("other=") != std::string::npos,
                    "masked load without other=: " << call);
    }
  }
  CHECK(dots >= 8);
}

// ---- Claims the review retracted, and the corrections --------------------

struct Claim {
  const char* skill;  // "" = any seed skill
  const char* text;
};

TEST_CASE("no seed skill repeats a claim the expert review retracted") {
  const Claim retracted[] = {
      {"", "removing wave-quantization tails"},
      {"", "(no idle tail)"},
      {"triton-persistent-matmul",
       "the\n    # epilogue of one tile can overlap"},
      {"", "TMA/async on Hopper"},  // pointer tl.load is cp.async
      {"", "(or at least one, consistently)"},
      {"", "drops these instructions"},  // TMA below sm_90: ptxas error
      // warp_specialize partitions on Hopper from Triton 3.5, not 3.4
      {"triton-hopper-warp-specialize", "(Triton 3.4+: tl.range"},
  };
  for (const Skill& s : testing::SeedSkillsOrFail()) {
    const std::string text =
        s.title + "\n" + s.summary + "\n" + s.body + "\n" + s.code;
    for (const Claim& c : retracted) {
      if (*c.skill != '\0' && s.id != c.skill) continue;
      CHECK_MESSAGE(text.find(c.text) == std::string::npos,
                    s.id << " says \"" << std::string(c.text) << "\"");
    }
  }
}

TEST_CASE(
    "verify/tasks/README.md does not call the task reference what eager "
    "PyTorch runs") {
  const std::filesystem::path readme =
      std::filesystem::path(testing::SeedTestDir())
          .parent_path()
          .parent_path() /
      "verify" / "tasks" / "README.md";
  auto text = util::ReadFile(readme.string());
  REQUIRE_MESSAGE(text.ok(), text.status().ToString());
  CHECK(text->find("what eager PyTorch would run") == std::string::npos);
  CHECK(text->find("not what PyTorch runs") != std::string::npos);
}

TEST_CASE("the corrections of the expert review stay in the skills") {
  const Claim kept[] = {
      {"tc-setmaxnreg-register-rebalance", "launch allocation"},
      {"fuse-softmax-cross-entropy", "2^31"},
      {"triton-persistent-matmul", "ceil(num_tiles / NUM_SMS) tile times"},
      {"triton-persistent-matmul", "Stream-K"},
      {"par-persistent-kernel-tile-scheduler", "ceil(num_tiles / slots)"},
      {"fuse-online-softmax", "torch.softmax"},
      {"fuse-online-softmax", "kTorchSemantics"},
      {"mem-tma-tile-load-mbarrier", "requires .target sm_90 or higher"},
      {"mem-tma-tile-load-mbarrier", "__CUDA_ARCH__"},
      {"triton-masking-other", "on both operands"},
      {"triton-matmul-tile-config", "tensor descriptors"},
      {"triton-hopper-warp-specialize", "Triton 3.5 release"},
      {"tc-wgmma-mn-major-b-swizzle-modes", "make_gmma_desc<Major::MN>"},
  };
  const std::vector<Skill> skills = testing::SeedSkillsOrFail();
  for (const Claim& c : kept) {
    const std::string id = c.skill;
    CAPTURE(id);
    const Skill* s = FindSkill(skills, c.skill);
    REQUIRE(s != nullptr);
    const std::string text = s->summary + "\n" + s->body + "\n" + s->code;
    CHECK_MESSAGE(text.find(c.text) != std::string::npos,
                  "lost: \"" << std::string(c.text) << "\"");
  }
}

}  // namespace
}  // namespace skilldb
