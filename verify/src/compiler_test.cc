#include "skilldb/verify/compiler.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include "file_util.h"
#include "build_paths.h"

namespace skilldb::verify {
namespace {

const std::string kProtocol =
    std::string(SKILLDB_VERIFY_SOURCE_DIR) + "/protocol";

struct TempCache {
  TempCache() { dir = *internal::MakeTempDir("/tmp", "skilldb-cc-test-"); }
  ~TempCache() { internal::RemoveTree(dir); }
  std::string dir;
};

std::unique_ptr<Compiler> MakeCompiler(const std::string& cache) {
  CompilerOptions o;
  o.cache_dir = cache;
  o.protocol_dir = kProtocol;
  auto c = Compiler::Make(o);
  REQUIRE(c.ok());
  return std::move(*c);
}

const char* kGood = R"(
extern "C" int launch(const Tensor*, int, Tensor*, int, skdb_stream_t) { return 0; }
)";

TEST_CASE("a host candidate compiles once and is then served from the cache") {
  TempCache cache;
  auto c = MakeCompiler(cache.dir);
  auto first = c->Compile(kGood, SourceLanguage::kCpp);
  REQUIRE(first.ok());
  CHECK(first->ok);
  CHECK(!first->cache_hit);
  CHECK(internal::FileExists(first->library_path));
  auto second = c->Compile(kGood, SourceLanguage::kCpp);
  REQUIRE(second.ok());
  CHECK(second->ok);
  CHECK(second->cache_hit);
  CHECK(second->library_path == first->library_path);
  // A fresh compiler over the same directory finds it too (on disk).
  auto again = MakeCompiler(cache.dir)->Compile(kGood, SourceLanguage::kCpp);
  REQUIRE(again.ok());
  CHECK(again->cache_hit);
}

TEST_CASE("the cache key changes with the source, the flags and the language") {
  TempCache cache;
  auto c = MakeCompiler(cache.dir);
  const std::string k1 = c->CacheKey(kGood, SourceLanguage::kCpp);
  CHECK(k1.size() == 64);
  CHECK(c->CacheKey(std::string(kGood) + " ", SourceLanguage::kCpp) != k1);
  CHECK(c->CacheKey(kGood, SourceLanguage::kCuda) != k1);
  CompilerOptions o;
  o.cache_dir = cache.dir;
  o.protocol_dir = kProtocol;
  o.extra_cxx_flags = {"-DEXTRA=1"};
  CHECK((*Compiler::Make(o))->CacheKey(kGood, SourceLanguage::kCpp) != k1);
}

TEST_CASE("a compile error comes back verbatim and is cached as a failure") {
  TempCache cache;
  auto c = MakeCompiler(cache.dir);
  const char* bad =
      "extern \"C\" int launch() { return undeclared_name_42; }\n";
  auto r = c->Compile(bad, SourceLanguage::kCpp);
  REQUIRE(r.ok());
  CHECK(!r->ok);
  CHECK(r->log.find("undeclared_name_42") != std::string::npos);
  CHECK(r->log.find("candidate.cc") != std::string::npos);
  auto again = c->Compile(bad, SourceLanguage::kCpp);
  REQUIRE(again.ok());
  CHECK(!again->ok);
  CHECK(again->cache_hit);
  CHECK(again->log == r->log);
  CHECK(r->failure == CompileFailure::kDiagnosis);
  CHECK(again->failure == CompileFailure::kDiagnosis);
}

// A stand-in compiler: a shell script that answers --version and then
// behaves as `body` says.
struct FakeCompiler {
  explicit FakeCompiler(const std::string& body) {
    dir = *internal::MakeTempDir("/tmp", "skilldb-fake-cc-");
    path = dir + "/fake-cc";
    REQUIRE(internal::WriteFileAtomic(path,
                                      "#!/bin/sh\nif [ \"$1\" = --version ]; "
                                      "then echo fake 1; exit 0; fi\n" +
                                          body + "\n")
                .ok());
    REQUIRE(::chmod(path.c_str(), 0755) == 0);
  }
  ~FakeCompiler() { internal::RemoveTree(dir); }
  std::string dir, path;
};

Result<CompileOutput> CompileWith(const std::string& cache,
                                  const std::string& cxx) {
  CompilerOptions o;
  o.cache_dir = cache;
  o.protocol_dir = kProtocol;
  o.cxx_path = cxx;
  auto c = Compiler::Make(o);
  REQUIRE(c.ok());
  return (*c)->Compile(kGood, SourceLanguage::kCpp);
}

TEST_CASE(
    "a compiler killed by a signal is a limit failure and is not cached") {
  TempCache cache;
  FakeCompiler cc("echo partial output; kill -9 $$");
  auto r = CompileWith(cache.dir, cc.path);
  REQUIRE(r.ok());
  CHECK(!r->ok);
  CHECK(r->failure == CompileFailure::kLimit);
  CHECK(r->limit == "signal");
  CHECK(r->log.find("partial output") != std::string::npos);
  auto again = CompileWith(cache.dir, cc.path);
  REQUIRE(again.ok());
  CHECK(!again->cache_hit);
  CHECK(again->failure == CompileFailure::kLimit);
}

TEST_CASE("a driver reporting a killed or starved subprocess is not cached") {
  // What g++ prints when cc1plus dies of a limit, with its own exit status.
  struct Case {
    const char* body;
    const char* limit;
  };
  for (const Case& c :
       {Case{"echo 'g++: fatal error: Killed signal terminated program "
             "cc1plus' >&2; exit 1",
             "signal"},
        Case{"echo 'cc1plus: out of memory allocating 65536 bytes' >&2; exit 1",
             "memory"},
        Case{"echo \"nvcc error   : 'cicc' died due to signal 24\" >&2; exit 1",
             "cpu"},
        Case{"i=0; while [ $i -lt 3000 ]; do echo 'error: the same line of "
             "output, again'; "
             "i=$((i+1)); done; exit 1",
             "output"}}) {
    CAPTURE(c.body);
    TempCache cache;
    FakeCompiler cc(c.body);
    auto r = CompileWith(cache.dir, cc.path);
    REQUIRE(r.ok());
    CHECK(!r->ok);
    CHECK(r->failure == CompileFailure::kLimit);
    CHECK(r->limit == c.limit);
    auto again = CompileWith(cache.dir, cc.path);
    REQUIRE(again.ok());
    CHECK(!again->cache_hit);
  }
}

TEST_CASE(
    "a diagnosis quoting limit-like words from the source is still cached") {
  TempCache cache;
  auto c = MakeCompiler(cache.dir);
  const char* bad =
      "extern \"C\" int launch() { /* out of memory, std::bad_alloc, Killed "
      "signal "
      "terminated program, died due to signal 9 */ return "
      "out_of_memory_bad_alloc; }\n";
  auto r = c->Compile(bad, SourceLanguage::kCpp);
  REQUIRE(r.ok());
  CHECK(!r->ok);
  CHECK(r->log.find("out_of_memory_bad_alloc") != std::string::npos);
  CHECK(r->failure == CompileFailure::kDiagnosis);
  CHECK(r->limit.empty());
  auto again = c->Compile(bad, SourceLanguage::kCpp);
  REQUIRE(again.ok());
  CHECK(again->cache_hit);
}

TEST_CASE("a diagnosis with the compiler's own exit status is cached") {
  TempCache cache;
  FakeCompiler cc(
      "echo 'candidate.cc:1:1: error: expected declaration' >&2; exit 1");
  auto r = CompileWith(cache.dir, cc.path);
  REQUIRE(r.ok());
  CHECK(r->failure == CompileFailure::kDiagnosis);
  auto again = CompileWith(cache.dir, cc.path);
  REQUIRE(again.ok());
  CHECK(again->cache_hit);
  CHECK(again->failure == CompileFailure::kDiagnosis);
}

TEST_CASE("an oversized source is InvalidArgument") {
  TempCache cache;
  CompilerOptions o;
  o.cache_dir = cache.dir;
  o.protocol_dir = kProtocol;
  o.max_source_bytes = 16;
  auto r = (*Compiler::Make(o))->Compile(kGood, SourceLanguage::kCpp);
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("a compiler that does not exist is Unavailable") {
  TempCache cache;
  CompilerOptions o;
  o.cache_dir = cache.dir;
  o.protocol_dir = kProtocol;
  o.cxx_path = "/nonexistent/g++";
  auto r = (*Compiler::Make(o))->Compile(kGood, SourceLanguage::kCpp);
  CHECK(r.status().code() == StatusCode::kUnavailable);
}

TEST_CASE("a compile that exceeds its time limit fails without being cached") {
  TempCache cache;
  CompilerOptions o;
  o.cache_dir = cache.dir;
  o.protocol_dir = kProtocol;
  o.timeout_s = 0.001;
  // Starting the compiler alone takes far longer than 1 ms.
  const char* slow = R"(
template <int N> struct F { static constexpr long v = F<N - 1>::v + F<N - 2>::v; };
template <> struct F<1> { static constexpr long v = 1; };
template <> struct F<0> { static constexpr long v = 0; };
extern "C" long launch() { return F<80>::v; }
)";
  auto r = (*Compiler::Make(o))->Compile(slow, SourceLanguage::kCpp);
  REQUIRE(r.ok());
  CHECK(!r->ok);
  CHECK(r->log.find("timed out") != std::string::npos);
  o.timeout_s = 120;
  CHECK(r->failure == CompileFailure::kLimit);
  CHECK(r->limit == "time");
  auto r2 = (*Compiler::Make(o))->Compile(slow, SourceLanguage::kCpp);
  REQUIRE(r2.ok());
  CHECK(!r2->cache_hit);
}

// A source whose preprocessing never ends on its own: 10^5 expansions of
// 1024 tokens each.
const char* kMacroBomb = R"(
#define A0 x
#define A1 A0 A0
#define A2 A1 A1
#define A3 A2 A2
#define A4 A3 A3
#define A5 A4 A4
#define A6 A5 A5
#define A7 A6 A6
#define A8 A7 A7
#define A9 A8 A8
#define B0 A9 A9 A9 A9 A9 A9 A9 A9 A9 A9
#define B1 B0 B0 B0 B0 B0 B0 B0 B0 B0 B0
#define B2 B1 B1 B1 B1 B1 B1 B1 B1 B1 B1
#define B3 B2 B2 B2 B2 B2 B2 B2 B2 B2 B2
#define B4 B3 B3 B3 B3 B3 B3 B3 B3 B3 B3
int x, y[] = {B4};
)";

CompilerOptions Limited(const std::string& cache, bool confine) {
  CompilerOptions o;
  o.cache_dir = cache;
  o.protocol_dir = kProtocol;
  o.memory_bytes = int64_t{512} << 20;
  o.timeout_s = 60;
  o.confine = confine;
  return o;
}

TEST_CASE("an include of /dev/zero ends at the memory limit, not cached") {
  TempCache cache;
  // Unconfined, so the device file is there to be read.
  auto c = Compiler::Make(Limited(cache.dir, false));
  REQUIRE(c.ok());
  CHECK((*c)->confinement().find("unconfined (off)") != std::string::npos);
  const std::string src = std::string("#include \"/dev/zero\"\n") + kGood;
  auto r = (*c)->Compile(src, SourceLanguage::kCpp);
  REQUIRE(r.ok());
  INFO(r->log);
  CHECK(!r->ok);
  CHECK(r->failure == CompileFailure::kLimit);
  CHECK(r->limit == "memory");
  CHECK(r->wall_ms < 30000);
  auto again = (*c)->Compile(src, SourceLanguage::kCpp);
  REQUIRE(again.ok());
  CHECK(!again->cache_hit);
}

TEST_CASE("a macro bomb ends at the memory limit under confinement") {
  TempCache cache;
  auto c = Compiler::Make(Limited(cache.dir, true));
  REQUIRE(c.ok());
  auto r = (*c)->Compile(kMacroBomb, SourceLanguage::kCpp);
  REQUIRE(r.ok());
  INFO(r->log);
  CHECK(!r->ok);
  CHECK(r->failure == CompileFailure::kLimit);
  CHECK(r->limit == "memory");
  CHECK(r->wall_ms < 30000);
}

TEST_CASE("a confined compiler cannot read host files for the log") {
  TempCache cache;
  auto c = Compiler::Make(Limited(cache.dir, true));
  REQUIRE(c.ok());
  INFO((*c)->confinement());
  for (const char* path : {"/etc/passwd", "/dev/zero", "/proc/self/environ"}) {
    CAPTURE(path);
    const std::string src = "#include \"" + std::string(path) + "\"\n" + kGood;
    auto r = (*c)->Compile(src, SourceLanguage::kCpp);
    REQUIRE(r.ok());
    INFO(r->log);
    CHECK(!r->ok);
    CHECK(r->log.find("root:x:0") == std::string::npos);
    if ((*c)->confined()) {
      CHECK(r->failure == CompileFailure::kDiagnosis);
      CHECK(r->log.find("No such file or directory") != std::string::npos);
    } else {
      // No namespaces on this machine: the probe says why.
      WARN_MESSAGE(false, "compiler confinement unavailable here");
      CHECK((*c)->confinement().find("unconfined (") != std::string::npos);
    }
  }
  // A normal candidate still compiles confined.
  auto ok = (*c)->Compile(kGood, SourceLanguage::kCpp);
  REQUIRE(ok.ok());
  CHECK(ok->ok);
}

}  // namespace
}  // namespace skilldb::verify
