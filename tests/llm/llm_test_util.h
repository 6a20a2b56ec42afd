// Shared fixtures of the llm/ protocol tests: a scripted protocol server, a
// client configuration pointing at it with fast retries, and a recorder of
// the client's backoff waits (so tests assert on them without sleeping).
#ifndef SKILLDB_TESTS_LLM_LLM_TEST_UTIL_H_
#define SKILLDB_TESTS_LLM_LLM_TEST_UTIL_H_

#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

#include "scripted_llm_server.h"
#include "skilldb/llm/client_config.h"
#include "skilldb/llm/openai_client.h"

namespace skilldb::llm::testing {

using scripted::Endpoint;
using scripted::ScriptedLlmServer;
using scripted::ScriptedReply;
using scripted::ServerOptions;
using std::chrono::milliseconds;

inline std::unique_ptr<ScriptedLlmServer> StartServer(
    const ServerOptions& options = ServerOptions()) {
  auto started = ScriptedLlmServer::Start(options);
  REQUIRE(started.ok());
  return std::move(started).value();
}

// A client of `server` with retries that wait 1-2 ms, so the suite stays
// fast; tests that time waits set their own.
inline ClientConfig ConfigFor(const ScriptedLlmServer& server) {
  ClientConfig c;
  c.base_url = server.base_url();
  c.model = "scripted-model";
  c.api_key = "sk-scripted";
  c.connect_timeout_ms = 2000;
  c.read_timeout_ms = 5000;
  c.retry.initial_backoff_ms = 1;
  c.retry.max_backoff_ms = 2;
  c.retry.jitter_seed = 1;
  return c;
}

inline std::unique_ptr<OpenAiClient> ClientFor(const ClientConfig& config) {
  auto client = OpenAiClient::Create(config);
  REQUIRE(client.ok());
  return std::move(client).value();
}

// Records every backoff wait instead of sleeping.
class SleepRecorder {
 public:
  void InstallIn(ClientConfig* config) {
    config->retry.sleep_for = [this](milliseconds wait) {
      std::lock_guard<std::mutex> lock(mu_);
      waits_.push_back(wait);
    };
  }
  std::vector<milliseconds> waits() const {
    std::lock_guard<std::mutex> lock(mu_);
    return waits_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<milliseconds> waits_;
};

inline std::vector<Chat> OnePrompt(const std::string& text = "write a kernel") {
  return {{{"user", text}}};
}

inline SamplingOptions Greedy(int max_tokens = 64) {
  SamplingOptions o;
  o.temperature = 0.0;
  o.max_tokens = max_tokens;
  return o;
}

}  // namespace skilldb::llm::testing

#endif  // SKILLDB_TESTS_LLM_LLM_TEST_UTIL_H_
