#include "skilldb/verify/compiler.h"

#include <doctest/doctest.h>

#include "file_util.h"

namespace skilldb::verify {
namespace {

const std::string kProtocol = std::string(SKILLDB_VERIFY_SOURCE_DIR) + "/protocol";

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
  const char* bad = "extern \"C\" int launch() { return undeclared_name_42; }\n";
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
  auto r2 = (*Compiler::Make(o))->Compile(slow, SourceLanguage::kCpp);
  REQUIRE(r2.ok());
  CHECK(!r2->cache_hit);
}

}  // namespace
}  // namespace skilldb::verify
