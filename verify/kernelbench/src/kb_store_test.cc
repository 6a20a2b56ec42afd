// The task store, problem lists and run directories: no Python needed.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "file_util.h"
#include "kb_build.h"
#include "kb_evaluate.h"
#include "kb_internal.h"

namespace skilldb::verify::kb {
namespace {

using verify::internal::JoinPath;

struct TempDir {
  TempDir() {
    const char* tmp = std::getenv("TMPDIR");
    path = *verify::internal::MakeTempDir(tmp ? tmp : "/tmp", "skilldb-kb-store-test-");
  }
  ~TempDir() { verify::internal::RemoveTree(path); }
  std::string path;
};

void Write(const std::string& path, const std::string& text) {
  REQUIRE(verify::internal::MakeDirs(internal::ParentDir(path)).ok());
  REQUIRE(verify::internal::WriteFileAtomic(path, text).ok());
}

Problem Sample(int level, int id) {
  Problem p;
  p.level = level;
  p.id = id;
  p.name = std::to_string(id) + "_Thing.py";
  p.source = "import torch\nclass Model: pass\n";
  p.code_hash = "h" + std::to_string(id);
  p.init_inputs_json = "[{\"kind\": \"int\", \"value\": 3}]";
  p.inputs = {{"tensor", "float32", {4, 5}, "randn", 80}};
  p.degenerate = "yes";
  p.degenerate_reason = "output 0 is constant";
  p.flops = 1234;
  return p;
}

TEST_CASE("the task store keeps a problem and gives it back whole") {
  TempDir dir;
  auto store = TaskStore::Open(dir.path);
  REQUIRE(store.ok());
  REQUIRE(store->Put(Sample(1, 19)).ok());
  REQUIRE(store->Put(Sample(1, 2)).ok());
  REQUIRE(store->Put(Sample(3, 7)).ok());
  auto p = store->Get(1, 19);
  REQUIRE(p.ok());
  CHECK(p->name == "19_Thing.py");
  CHECK(p->source == Sample(1, 19).source);
  CHECK(p->key() == "level1/19");
  REQUIRE(p->inputs.size() == 1);
  CHECK(p->inputs[0].shape == std::vector<int64_t>{4, 5});
  CHECK(p->inputs[0].distribution == "randn");
  CHECK(p->degenerate == "yes");
  CHECK(p->flops == 1234);
  CHECK(p->init_inputs_json.find("\"value\":3") != std::string::npos);
  auto all = store->List(0);
  REQUIRE(all.ok());
  REQUIRE(all->size() == 3);
  CHECK((*all)[0].id == 2);  // by level, then id as a number
  CHECK((*all)[1].id == 19);
  CHECK((*all)[2].level == 3);
  CHECK(store->List(3)->size() == 1);
  CHECK(store->Get(1, 5).status().code() == StatusCode::kNotFound);
}

TEST_CASE("a damaged store entry is reported as corruption, not read") {
  TempDir dir;
  auto store = TaskStore::Open(dir.path);
  REQUIRE(store.ok());
  REQUIRE(store->Put(Sample(1, 4)).ok());
  Write(JoinPath(dir.path, "level1/4/task.json"), "{not json");
  CHECK(store->Get(1, 4).status().code() == StatusCode::kCorruption);
  REQUIRE(store->Put(Sample(1, 6)).ok());
  Write(JoinPath(dir.path, "level1/6/task.json"), "{\"level\": 1, \"id\": 9}");
  CHECK(store->Get(1, 6).status().code() == StatusCode::kCorruption);
}

TEST_CASE("problems that could not be imported are listed per level with the reason") {
  TempDir dir;
  auto store = TaskStore::Open(dir.path);
  REQUIRE(store.ok());
  REQUIRE(store->PutUnimportable(4, {{4, 16, "16_gpt2.py", "needs the network"}}).ok());
  auto list = store->ListUnimportable(0);
  REQUIRE(list.ok());
  REQUIRE(list->size() == 1);
  CHECK((*list)[0].reason == "needs the network");
  CHECK(store->ListUnimportable(1)->empty());
}

TEST_CASE("a compiler outside /usr named by CC or CXX has its prefix shown to runners") {
  // The H200 image's torch builds with CC=/opt/gcc/bin/gcc: a root without
  // /opt/gcc failed every load_inline and Triton launcher build there.
  const char* old_cc = std::getenv("CC");
  const char* old_cxx = std::getenv("CXX");
  const std::string saved_cc = old_cc ? old_cc : "", saved_cxx = old_cxx ? old_cxx : "";
  ::setenv("CC", "/opt/skilldb-test-gcc/bin/gcc", 1);
  ::setenv("CXX", "/usr/bin/g++", 1);
  const std::vector<std::string> dirs = internal::CompilerPrefixes();
  if (old_cc) ::setenv("CC", saved_cc.c_str(), 1); else ::unsetenv("CC");
  if (old_cxx) ::setenv("CXX", saved_cxx.c_str(), 1); else ::unsetenv("CXX");
  CHECK(std::find(dirs.begin(), dirs.end(), "/opt/skilldb-test-gcc") != dirs.end());
  CHECK(std::find(dirs.begin(), dirs.end(), "/usr") == dirs.end());
}

TEST_CASE("a build's Triton cache joins a runner's without rewriting a file it may have loaded") {
  TempDir t;
  const std::string from = JoinPath(t.path, "build"), to = JoinPath(t.path, "runner");
  REQUIRE(verify::internal::MakeDirs(JoinPath(from, "k1")).ok());
  REQUIRE(verify::internal::MakeDirs(JoinPath(to, "k1")).ok());
  Write(JoinPath(from, "k1/cuda_utils.so"), "the build's copy");
  Write(JoinPath(from, "k1/kernel.cubin"), "cubin");
  Write(JoinPath(to, "k1/cuda_utils.so"), "the runner's loaded copy");
  struct stat before {};
  REQUIRE(::stat(JoinPath(to, "k1/cuda_utils.so").c_str(), &before) == 0);
  CHECK(internal::CopyMissing(from, to));
  struct stat after {};
  REQUIRE(::stat(JoinPath(to, "k1/cuda_utils.so").c_str(), &after) == 0);
  CHECK(after.st_ino == before.st_ino);
  CHECK(*verify::internal::ReadFile(JoinPath(to, "k1/cuda_utils.so"), 1 << 20) ==
        "the runner's loaded copy");
  CHECK(*verify::internal::ReadFile(JoinPath(to, "k1/kernel.cubin"), 1 << 20) == "cubin");
  CHECK_FALSE(internal::CopyMissing(JoinPath(t.path, "absent"), to));
}

TEST_CASE("problem lists parse ranges and refuse garbage") {
  CHECK(*ParseIdList("3,1-2,2") == std::vector<int>{1, 2, 3});
  CHECK(ParseIdList("")->empty());
  CHECK(ParseIdList("1-x").status().code() == StatusCode::kInvalidArgument);
  CHECK(ParseIdList("5-2").status().code() == StatusCode::kInvalidArgument);
  CHECK(InIdList({}, 42));
  CHECK_FALSE(InIdList({1, 2}, 3));
}

TEST_CASE("run directories in every accepted layout are found") {
  TempDir dir;
  Write(JoinPath(dir.path, "level_1_problem_19_sample_0_kernel.py"), "a");
  Write(JoinPath(dir.path, "level_1_problem_19_sample_2_kernel.py"), "b");
  Write(JoinPath(dir.path, "level_1_problem_19_sample_0_prompt.txt"), "prompt");
  Write(JoinPath(dir.path, "level2/5_Conv.py"), "c");
  Write(JoinPath(dir.path, "level3/7/sample_1.py"), "d");
  Write(JoinPath(dir.path, "eval_results.json"), "{}");
  auto found = FindAnswers(dir.path);
  REQUIRE(found.ok());
  REQUIRE(found->size() == 4);
  CHECK((*found)[0].problem == 19);
  CHECK((*found)[1].sample == 2);
  CHECK((*found)[2].level == 2);
  CHECK((*found)[2].problem == 5);
  CHECK((*found)[3].level == 3);
  CHECK((*found)[3].sample == 1);
  TempDir empty;
  CHECK(FindAnswers(empty.path).status().code() == StatusCode::kInvalidArgument);
  CHECK(FindAnswers(empty.path + "/nope").status().code() == StatusCode::kNotFound);
}

TEST_CASE("a device's gate: checks side by side, a timed phase alone and ahead of new checks") {
  auto gate = internal::DeviceGate::For("test-gate-device");
  CHECK(gate == internal::DeviceGate::For("test-gate-device"));
  CHECK(gate != internal::DeviceGate::For("another-device"));
  REQUIRE(gate->try_lock_shared());
  REQUIRE(gate->try_lock_shared());  // two checks at once
  gate->unlock_shared();
  std::atomic<bool> timed{false};
  std::thread timing([&] {
    gate->lock();  // waits for the check still holding it
    timed = true;
    gate->unlock();
  });
  while (gate->waiting() == 0 && !timed) std::this_thread::yield();
  CHECK_FALSE(timed.load());
  CHECK_FALSE(gate->try_lock_shared());  // a new check waits behind the timed phase
  gate->unlock_shared();
  timing.join();
  CHECK(timed.load());
  CHECK(gate->try_lock_shared());
  gate->unlock_shared();
}

TEST_CASE("an answer's build key names the device's capability") {
  Problem p;
  p.source = "class Model: pass";
  FormatInfo f;
  f.backend = "cuda";
  EvalOptions o;
  const std::string key =
      internal::Builder::AnswerKey(p, "answer", f, o, "9.0");
  CHECK(key.size() == 32);
  CHECK(key == internal::Builder::AnswerKey(p, "answer", f, o, "9.0"));
  CHECK(key != internal::Builder::AnswerKey(p, "answer", f, o, "8.0"));
  CHECK(key != internal::Builder::AnswerKey(p, "answer", f, o, ""));
  CHECK(key != internal::Builder::AnswerKey(p, "another answer", f, o, "9.0"));
  // The runner's sources name the extensions a build makes: another
  // runner, another key.
  CHECK(key !=
        internal::Builder::AnswerKey(p, "answer", f, o, "9.0", "0123abcd"));
}

TEST_CASE("the runner's sources are part of a build's key") {
  TempDir d;
  const std::string dir = d.path;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
  };
  write("kb_load.py", "SALT = 1\n");
  write("skilldb_thunk.h", "// thunks\n");
  const std::string a = internal::Builder::RunnerCode(dir);
  CHECK(a.size() == 32);
  CHECK(internal::Builder::RunnerCode(dir) == a);  // read once
  // Another directory with a changed source (as after an upgrade): another
  // digest; the tests' files and other files do not count.
  TempDir d2;
  std::ofstream(d2.path + "/kb_load.py") << "SALT = 2\n";
  std::ofstream(d2.path + "/skilldb_thunk.h") << "// thunks\n";
  const std::string b = internal::Builder::RunnerCode(d2.path);
  CHECK(b.size() == 32);
  CHECK(b != a);
  TempDir d3;
  std::ofstream(d3.path + "/kb_load.py") << "SALT = 1\n";
  std::ofstream(d3.path + "/skilldb_thunk.h") << "// thunks\n";
  std::ofstream(d3.path + "/test_kb_load.py") << "assert True\n";
  std::ofstream(d3.path + "/README.md") << "words\n";
  CHECK(internal::Builder::RunnerCode(d3.path) == a);
  CHECK(internal::Builder::RunnerCode(d.path + "/missing").empty());
}

TEST_CASE("a build reply's extension keys: only the shim's 32 hex digits") {
  CHECK(internal::IsExtensionKey("3a773b99bfe5aa10bdd6cc3076a50fbb"));
  CHECK_FALSE(
      internal::IsExtensionKey("3a773b99bfe5aa10bdd6cc3076a50fb"));  // 31
  CHECK_FALSE(internal::IsExtensionKey(
      "3A773B99BFE5AA10BDD6CC3076A50FBB"));  // not the shim's
  CHECK_FALSE(internal::IsExtensionKey("caller-0123456789abcdef01234567"));
  CHECK_FALSE(internal::IsExtensionKey("../pch-v3/0123456789abcdef012345"));
  CHECK_FALSE(internal::IsExtensionKey(""));
  // The key of a real build reply, held as the builder holds it.
  const std::string held = std::string("3a773b99bfe5aa10") + "bdd6cc3076a50fbb";
  CHECK(internal::IsExtensionKey(held));
}

TEST_CASE(
    "a compile error is cached only when it is the answer's, not the "
    "machine's") {
  using internal::CacheableCompileError;
  CHECK(CacheableCompileError("compile", false,
                              "error: identifier \"x\" is undefined"));
  CHECK_FALSE(CacheableCompileError("compile", true,
                                    "No such file or directory: 'nvcc'"));
  CHECK_FALSE(CacheableCompileError("system", false,
                                    "the extension cache lacks a build"));
  CHECK_FALSE(CacheableCompileError("timeout", false, ""));
  CHECK_FALSE(
      CacheableCompileError("compile", false,
                            "g++: fatal error: Killed signal terminated "
                            "program cc1plus\ncompilation terminated."));
  CHECK_FALSE(CacheableCompileError(
      "compile", false, "cc1plus: out of memory allocating 65536 bytes"));
  CHECK_FALSE(CacheableCompileError(
      "compile", false,
      "/tmp/x.cu: internal compiler error: Segmentation fault"));
  CHECK_FALSE(CacheableCompileError(
      "compile", false, "OSError: [Errno 28] No space left on device"));
}

// A loader of `key`'s entry (no runner) that counts its loads.
internal::ReferencePool::Loader CountedLoad(std::atomic<int>* loads,
                                            const std::string& key) {
  return [loads, key]() -> Result<std::shared_ptr<internal::RefEntry>> {
    ++*loads;
    auto e = std::make_shared<internal::RefEntry>();
    e->key = key;
    return e;
  };
}

TEST_CASE(
    "a device's reference pool: one load per problem however many sessions "
    "ask") {
  internal::ReferencePool pool(2);
  std::atomic<int> loads{0};
  auto entry = [&](const std::string& key) { return CountedLoad(&loads, key); };
  // Four sessions of one problem at once: the first loads, the others wait
  // for its load (the loader returns only once all three wait).
  std::vector<std::shared_ptr<internal::RefEntry>> got(4);
  std::vector<std::thread> sessions;
  // Bounded: were callers not made to wait, the loader gives up after 60 s
  // and the count below fails rather than the test hanging.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::atomic<int> refused{0};
  for (size_t i = 0; i < got.size(); ++i) {
    sessions.emplace_back([&, i] {
      auto r =
          pool.Get("a", [&]() -> Result<std::shared_ptr<internal::RefEntry>> {
            while (pool.waiters() < 3 &&
                   std::chrono::steady_clock::now() < deadline) {
              std::this_thread::yield();
            }
            return entry("a")();
          });
      if (r.ok()) {
        got[i] = *r;
      } else {
        ++refused;
      }
    });
  }
  for (std::thread& t : sessions) t.join();
  CHECK(refused.load() == 0);
  CHECK(loads.load() == 1);
  for (const auto& g : got) CHECK(g == got[0]);
  got.clear();  // those sessions end
  // A failed load is its caller's error; the next caller loads again.
  auto failed =
      pool.Get("b", [&]() -> Result<std::shared_ptr<internal::RefEntry>> {
        ++loads;
        return Status::FailedPrecondition("the problem did not load");
      });
  CHECK(failed.status().code() == StatusCode::kFailedPrecondition);
  REQUIRE(pool.Get("b", entry("b")).ok());
  CHECK(loads.load() == 3);
  // Beyond the capacity the least recently used entry no session holds
  // leaves; entries sessions hold stay (the capacity is exceeded meanwhile).
  REQUIRE(pool.Get("a", entry("a")).ok());  // "a" is the newest now
  auto c = pool.Get("c", entry("c"));       // "b" leaves
  REQUIRE(c.ok());
  CHECK(loads.load() == 4);
  CHECK(pool.size() == 2);
  auto b = pool.Get("b", entry("b"));  // loaded again; "a" leaves, "c" is held
  REQUIRE(b.ok());
  CHECK(loads.load() == 5);
  CHECK(pool.size() == 2);
  auto a = pool.Get("a", entry("a"));  // loaded again; "c" and "b" are held
  REQUIRE(a.ok());
  CHECK(loads.load() == 6);
  CHECK(pool.size() == 3);
  CHECK((*c)->key == "c");
  // Callers that waited for a load that failed get its error: one load.
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::atomic<int> refusals{0};
  std::vector<std::thread> waiting;
  for (int i = 0; i < 3; ++i) {
    waiting.emplace_back([&] {
      auto r =
          pool.Get("f", [&]() -> Result<std::shared_ptr<internal::RefEntry>> {
            ++loads;
            while (pool.waiters() < 2 &&
                   std::chrono::steady_clock::now() < until) {
              std::this_thread::yield();
            }
            return Status::FailedPrecondition("the problem did not load");
          });
      if (r.status().code() == StatusCode::kFailedPrecondition) ++refusals;
    });
  }
  for (std::thread& t : waiting) t.join();
  CHECK(refusals.load() == 3);
  CHECK(loads.load() == 7);
  // A runner serves sessions_per_runner sessions; the next session of the
  // problem loads another, and later ones go to the one serving fewer.
  internal::ReferencePool spread(4, 2);
  auto session = [&](const std::string& key) {
    auto r = spread.Get(key, entry(key));
    REQUIRE(r.ok());
    return *r;
  };
  auto x1 = session("x");
  auto x2 = session("x");
  CHECK(x1 == x2);
  CHECK(loads.load() == 8);
  auto x3 = session("x");
  CHECK(x3 != x1);
  CHECK(loads.load() == 9);
  auto x4 = session("x");
  CHECK(x4 == x3);
  x1.reset();  // a session of the first ends: it serves one now
  auto x5 = session("x");
  CHECK(x5 == x2);
  CHECK(loads.load() == 9);
}

TEST_CASE(
    "a device's reference pool warms a problem once, for the Get that "
    "follows") {
  internal::ReferencePool pool(4);
  std::atomic<int> loads{0};
  auto entry = [&](const std::string& key) { return CountedLoad(&loads, key); };
  pool.Warm("a", entry("a"));
  CHECK(loads == 1);
  pool.Warm("a", entry("a"));  // it has one: nothing to do
  CHECK(loads == 1);
  auto a = pool.Get("a", entry("a"));  // the warmed one, no load
  REQUIRE(a.ok());
  CHECK(loads == 1);
  CHECK((*a)->key == "a");
  // A failed warm-up leaves nothing: the next caller loads.
  pool.Warm("b", [&]() -> Result<std::shared_ptr<internal::RefEntry>> {
    ++loads;
    return Status::FailedPrecondition("the problem did not load");
  });
  CHECK(loads == 2);
  REQUIRE(pool.Get("b", entry("b")).ok());
  CHECK(loads == 3);
  // A warm-up while a Get loads the problem returns at once.
  std::atomic<bool> in_load{false}, warmed{false};
  std::thread getter([&] {
    auto r =
        pool.Get("c", [&]() -> Result<std::shared_ptr<internal::RefEntry>> {
          in_load = true;
          const auto until =
              std::chrono::steady_clock::now() + std::chrono::seconds(60);
          while (!warmed && std::chrono::steady_clock::now() < until)
            std::this_thread::yield();
          return entry("c")();
        });
    CHECK(r.ok());
  });
  while (!in_load) std::this_thread::yield();
  pool.Warm("c", entry("c"));
  warmed = true;
  getter.join();
  CHECK(loads == 4);
}

}  // namespace
}  // namespace skilldb::verify::kb
