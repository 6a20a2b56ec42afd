// Helpers of the server's tests: a server on a free loopback port over a
// temporary library, and scripted verifiers (named as scripted: they
// measure nothing).
#ifndef SKILLDB_SERVER_SERVER_TEST_UTIL_H_
#define SKILLDB_SERVER_SERVER_TEST_UTIL_H_

#include <doctest/doctest.h>
#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "../../tests/test_util.h"
#include "skilldb/library.h"
#include "skilldb/server/server.h"

namespace skilldb::server::testing {

using TJson = nlohmann::json;

// A passing (or failing) report with `speedup`, as a verifier would write.
inline VerificationReport ScriptedReport(const std::string& task,
                                         double speedup, bool compiled = true,
                                         bool correct = true) {
  VerificationReport r;
  r.verifier = "scripted";
  r.verifier_version = "1";
  r.device = "scripted device";
  r.device_class = "host";
  r.task = task;
  r.compiled = compiled;
  r.correctness.checked = compiled;
  r.correctness.passed = compiled && correct;
  r.correctness.trials = 4;
  if (compiled && correct) {
    for (int i = 0; i < 3; ++i) {
      RoundTiming t;
      t.baseline_ms = {2.0, 2.0};
      t.candidate_ms = {2.0 / speedup, 2.0 / speedup};
      t.baseline_median_ms = 2.0;
      t.candidate_median_ms = 2.0 / speedup;
      t.speedup_ratio = speedup;
      r.rounds.push_back(t);
    }
    r.speedup = {speedup, speedup * 0.95, speedup * 1.05, 0.95};
  }
  if (!compiled) {
    r.compile_log = "error: expected ';'";
    r.reasons = {"[compile_error] the compiler rejected the source"};
  } else if (!correct) {
    r.reasons = {"[wrong_output] 12 elements outside tolerance"};
  }
  r.passed = compiled && correct && speedup >= 1.05;
  return r;
}

// Answers every request with ScriptedReport(request.task, speedup) and
// counts the calls.
class ScriptedVerifier : public Verifier {
 public:
  explicit ScriptedVerifier(double speedup) : speedup_(speedup) {}
  std::string_view Name() const override { return "scripted"; }
  Result<VerificationReport> Verify(const VerificationRequest& r) override {
    ++calls;
    if (r.task == "unknown_task") {
      return Status::InvalidArgument("unknown task 'unknown_task'");
    }
    return ScriptedReport(r.task, speedup_);
  }
  std::atomic<int> calls{0};

 private:
  double speedup_;
};

// Blocks every Verify until Release(); Entered() waits for the first call.
class BlockingVerifier : public Verifier {
 public:
  std::string_view Name() const override { return "scripted-blocking"; }
  Result<VerificationReport> Verify(const VerificationRequest& r) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++entered_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return released_; });
    return ScriptedReport(r.task, 2.0);
  }
  void WaitEntered(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return entered_ >= n; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int entered_ = 0;
  bool released_ = false;
};

inline Skill ServedSkill(const std::string& id, const std::string& title,
                         const std::string& body) {
  Skill s = Skill::Make(id, title);
  s.summary = "How to " + title;
  s.body = body;
  s.code = "__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }";
  s.tags = {"cuda"};
  s.ops = {"elementwise"};
  return s;
}

// A library with three skills and a server over it on a free port.
class TestServer {
 public:
  explicit TestServer(ServerOptions options = {}) : options_(options) {
    auto put = lib_->PutMany(
        {ServedSkill("smem-tiling", "Shared memory tiling",
                     "Tile the K loop of a matrix product through shared "
                     "memory so each element is read once per block."),
         ServedSkill("warp-reduce", "Warp shuffle reduction",
                     "Reduce across a warp with __shfl_down_sync, no shared "
                     "memory."),
         ServedSkill("vector-loads", "Vectorized loads",
                     "Load float4 to issue fewer memory transactions.")});
    REQUIRE(put.ok());
    Start();
  }
  ~TestServer() { Stop(); }

  void Start() {
    options_.port = 0;
    auto shared = std::shared_ptr<Library>(lib_.operator->(), [](Library*) {});
    auto s = Server::Start(options_, shared);
    REQUIRE_MESSAGE(s.ok(), s.status().ToString());
    server_ = std::move(s).value();
  }
  void Stop() {
    if (server_) server_->Stop();
    server_.reset();
  }
  // Stops the server, reopens the library (as a restarted process would)
  // and starts a server with `options`.
  void Restart(ServerOptions options) {
    Stop();
    lib_.Reopen();
    options_ = options;
    Start();
  }

  httplib::Client Client() const {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(30, 0);
    return c;
  }
  std::string Url() const {
    return "http://127.0.0.1:" + std::to_string(server_->port());
  }
  int port() const { return server_->port(); }
  Library& lib() { return *lib_.operator->(); }

 private:
  ServerOptions options_;
  skilldb::testing::TempLibrary lib_;
  std::unique_ptr<Server> server_;
};

inline TJson ParseJson(const std::string& body) {
  TJson j = TJson::parse(body, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  return j;
}

}  // namespace skilldb::server::testing

#endif  // SKILLDB_SERVER_SERVER_TEST_UTIL_H_
