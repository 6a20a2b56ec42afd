#include "skilldb/llm/client_config.h"

#include <doctest/doctest.h>

#include <map>
#include <utility>
#include <vector>

namespace skilldb::llm {
namespace {

EnvLookup FakeEnv(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST_CASE("a base URL splits into scheme, host, port and path") {
  auto u = ParseBaseUrl("https://api.example.com/v1/");
  REQUIRE(u.ok());
  CHECK(u->scheme == "https");
  CHECK(u->host == "api.example.com");
  CHECK(u->port == 443);
  CHECK(u->path == "/v1");
  CHECK(u->Origin() == "https://api.example.com:443");

  auto local = ParseBaseUrl("http://127.0.0.1:8000");
  REQUIRE(local.ok());
  CHECK(local->port == 8000);
  CHECK(local->path == "/v1");  // a URL without a path gets /v1

  auto v6 = ParseBaseUrl("http://[::1]:9000/openai/v1");
  REQUIRE(v6.ok());
  CHECK(v6->host == "::1");
  CHECK(v6->path == "/openai/v1");
  CHECK(v6->Origin() == "http://[::1]:9000");
}

TEST_CASE("malformed base URLs are invalid arguments") {
  for (const char* bad :
       {"localhost:8000", "ftp://host/v1", "http://", "http://host:0",
        "http://host:99999", "http://host:", "http://host:8x", "http://[::1",
        "http://host/v1?x=1", "http://user:pw@host/v1", "http://ho st/v1"}) {
    CAPTURE(bad);
    CHECK(ParseBaseUrl(bad).status().code() == StatusCode::kInvalidArgument);
  }
}

TEST_CASE(
    "SKILLDB_LLM variables override the OPENAI ones and flags override both") {
  auto env = FakeEnv({{"OPENAI_BASE_URL", "http://openai.local/v1"},
                      {"OPENAI_API_KEY", "sk-openai"},
                      {"SKILLDB_LLM_URL", "http://skilldb.local:8000/v1"},
                      {"SKILLDB_LLM_MODEL", "qwen"}});
  auto from_env = ResolveClientConfig({}, env);
  REQUIRE(from_env.ok());
  CHECK(from_env->base_url == "http://skilldb.local:8000/v1");
  CHECK(from_env->model == "qwen");
  CHECK(from_env->api_key == "sk-openai");

  ClientFlags flags;
  flags.url = "http://flag.local/v1";
  flags.key = "sk-flag";
  auto from_flags = ResolveClientConfig(flags, env);
  REQUIRE(from_flags.ok());
  CHECK(from_flags->base_url == "http://flag.local/v1");
  CHECK(from_flags->api_key == "sk-flag");
  CHECK(from_flags->model == "qwen");
}

TEST_CASE("empty variables count as unset and defaults remain") {
  auto env = FakeEnv({{"SKILLDB_LLM_URL", ""},
                      {"SKILLDB_LLM_KEY", ""},
                      {"OPENAI_API_KEY", "sk-x"}});
  ClientConfig base;
  base.max_in_flight = 3;
  auto c = ResolveClientConfig({}, env, base);
  REQUIRE(c.ok());
  CHECK(c->base_url == ClientConfig().base_url);
  CHECK(c->api_key == "sk-x");
  CHECK(c->max_in_flight == 3);
}

TEST_CASE("a bad URL from the environment is reported with its variable") {
  auto c = ResolveClientConfig({}, FakeEnv({{"OPENAI_BASE_URL", "nope"}}));
  REQUIRE(!c.ok());
  CHECK(c.status().code() == StatusCode::kInvalidArgument);
  // Naming the variable is the behaviour under test.
  CHECK(c.status().message().find("OPENAI_BASE_URL") != std::string::npos);
}

TEST_CASE("config validation rejects out-of-range fields") {
  ClientConfig c;
  CHECK(ValidateClientConfig(c).ok());
  c.max_in_flight = 0;
  CHECK(ValidateClientConfig(c).code() == StatusCode::kInvalidArgument);
  c = ClientConfig();
  c.read_timeout_ms = 0;
  CHECK(ValidateClientConfig(c).code() == StatusCode::kInvalidArgument);
  c = ClientConfig();
  c.retry.jitter = 1.5;
  CHECK(ValidateClientConfig(c).code() == StatusCode::kInvalidArgument);
  c = ClientConfig();
  c.retry.max_retries = -1;
  CHECK(ValidateClientConfig(c).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("timeout, retries and native n come from flags, then variables") {
  auto env = FakeEnv({{"SKILLDB_LLM_TIMEOUT", "2.5"},
                      {"SKILLDB_LLM_RETRIES", "0"},
                      {"SKILLDB_LLM_NATIVE_N", "0"}});
  auto from_env = ResolveClientConfig({}, env);
  REQUIRE(from_env.ok());
  CHECK(from_env->request_timeout_ms == 2500);
  CHECK(from_env->retry.max_retries == 0);
  CHECK_FALSE(from_env->native_n);
  ClientFlags flags;
  flags.timeout_s = 10;
  flags.retries = 5;
  flags.native_n = true;
  auto from_flags = ResolveClientConfig(flags, env);
  REQUIRE(from_flags.ok());
  CHECK(from_flags->request_timeout_ms == 10000);
  CHECK(from_flags->retry.max_retries == 5);
  CHECK(from_flags->native_n);
  // The variable by name, not a structured binding: clang 14 (clang-tidy's)
  // cannot capture a binding in CAPTURE's lambda.
  for (const auto& setting : std::vector<std::pair<std::string, std::string>>{
           {"SKILLDB_LLM_TIMEOUT", "soon"},
           {"SKILLDB_LLM_TIMEOUT", "-1"},
           {"SKILLDB_LLM_RETRIES", "1.5"},
           {"SKILLDB_LLM_RETRIES", "99"},
           {"SKILLDB_LLM_NATIVE_N", "maybe"}}) {
    const std::string& name = setting.first;
    CAPTURE(name);
    auto bad = ResolveClientConfig({}, FakeEnv({{name, setting.second}}));
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.status().message().find(name) != std::string::npos);
  }
  CHECK(ResolveClientConfig({}, FakeEnv({}))->request_timeout_ms == 900000);
}

TEST_CASE("a base URL says whether it had a path of its own") {
  CHECK(ParseBaseUrl("http://h:8080")->path_given == false);
  CHECK(ParseBaseUrl("http://h:8080/")->path_given == false);
  CHECK(ParseBaseUrl("http://h:8080/tei")->path_given == true);
}

}  // namespace
}  // namespace skilldb::llm
