// Retries, backoff, Retry-After, timeouts and the concurrency limit, against
// the scripted protocol server. Waits are recorded through the retry
// options' sleep hook where the test is about their length; the few tests
// that need real time use waits of a few hundred milliseconds.
#include <ctime>
#include <thread>

#include "llm_test_util.h"

namespace skilldb::llm::testing {
namespace {

using scripted::StatusReply;
using scripted::TextReply;
using Clock = std::chrono::steady_clock;

std::string HttpDate(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

TEST_CASE(
    "a 429 with Retry-After in seconds waits exactly that long, then "
    "succeeds") {
  auto server = StartServer();
  server->Add({StatusReply(429, {{"Retry-After", "2"}}),
               TextReply({"after the wait"})});
  ClientConfig config = ConfigFor(*server);
  SleepRecorder sleeps;
  sleeps.InstallIn(&config);
  auto client = ClientFor(config);
  auto r = client->Generate(OnePrompt(), Greedy());
  REQUIRE(r.ok());
  CHECK((*r)[0].samples[0].text == "after the wait");
  CHECK(server->RequestCount() == 2);
  CHECK(sleeps.waits() == std::vector<milliseconds>{milliseconds(2000)});
  CHECK(client->Stats().retries == 1);
  CHECK(client->Usage().requests == 1);
}

TEST_CASE("a Retry-After HTTP-date is honoured as the time until then") {
  auto server = StartServer();
  const auto when = std::chrono::system_clock::now() + std::chrono::seconds(3);
  server->Add(
      {StatusReply(503, {{"Retry-After", HttpDate(when)}}), TextReply({"ok"})});
  ClientConfig config = ConfigFor(*server);
  SleepRecorder sleeps;
  sleeps.InstallIn(&config);
  REQUIRE(ClientFor(config)->Generate(OnePrompt(), Greedy()).ok());
  REQUIRE(sleeps.waits().size() == 1);
  // The date has a resolution of one second.
  CHECK(sleeps.waits()[0] > milliseconds(1000));
  CHECK(sleeps.waits()[0] <= milliseconds(3000));
}

TEST_CASE("the retry really waits for the server's retry-after-ms") {
  auto server = StartServer();
  server->Add(
      {StatusReply(429, {{"retry-after-ms", "300"}}), TextReply({"ok"})});
  auto client = ClientFor(ConfigFor(*server));
  REQUIRE(client->Generate(OnePrompt(), Greedy()).ok());
  auto log = server->Requests();
  REQUIRE(log.size() == 2);
  CHECK(log[1].arrived - log[0].arrived >= milliseconds(300));
}

TEST_CASE("a Retry-After beyond the cap falls back to exponential backoff") {
  auto server = StartServer();
  server->Add({StatusReply(429, {{"Retry-After", "3600"}}), TextReply({"ok"})});
  ClientConfig config = ConfigFor(*server);
  config.retry.initial_backoff_ms = 40;
  config.retry.max_backoff_ms = 1000;
  config.retry.jitter = 0;
  config.retry.max_retry_after_ms = 10000;
  SleepRecorder sleeps;
  sleeps.InstallIn(&config);
  REQUIRE(ClientFor(config)->Generate(OnePrompt(), Greedy()).ok());
  CHECK(sleeps.waits() == std::vector<milliseconds>{milliseconds(40)});
}

TEST_CASE("5xx answers are retried with doubling backoff until one succeeds") {
  auto server = StartServer();
  server->Add({StatusReply(500), StatusReply(502), StatusReply(503),
               TextReply({"finally"})});
  ClientConfig config = ConfigFor(*server);
  config.retry.max_retries = 3;
  config.retry.initial_backoff_ms = 100;
  config.retry.max_backoff_ms = 1000;
  config.retry.jitter = 0;
  SleepRecorder sleeps;
  sleeps.InstallIn(&config);
  auto client = ClientFor(config);
  auto r = client->Generate(OnePrompt(), Greedy());
  REQUIRE(r.ok());
  CHECK((*r)[0].samples[0].text == "finally");
  CHECK(server->RequestCount() == 4);
  CHECK(sleeps.waits() == std::vector<milliseconds>{milliseconds(100),
                                                    milliseconds(200),
                                                    milliseconds(400)});
  CHECK(client->Stats().attempts == 4);
}

TEST_CASE("jitter shortens each backoff by at most its fraction") {
  auto server = StartServer();
  ScriptedReply always = StatusReply(503);
  always.times = -1;
  server->Add(always);
  ClientConfig config = ConfigFor(*server);
  config.retry.max_retries = 5;
  config.retry.initial_backoff_ms = 100;
  config.retry.max_backoff_ms = 800;
  config.retry.jitter = 0.5;
  config.retry.jitter_seed = 99;
  SleepRecorder sleeps;
  sleeps.InstallIn(&config);
  auto r = ClientFor(config)->Generate(OnePrompt(), Greedy());
  CHECK(r.status().code() == StatusCode::kUnavailable);
  CHECK(server->RequestCount() == 6);
  const int64_t caps[] = {100, 200, 400, 800, 800};
  auto waits = sleeps.waits();
  REQUIRE(waits.size() == 5);
  for (size_t k = 0; k < waits.size(); ++k) {
    CAPTURE(k);
    CHECK(waits[k].count() <= caps[k]);
    CHECK(waits[k].count() >= caps[k] / 2);
  }
}

TEST_CASE("a server that is gone is retried, then reported unavailable") {
  auto server = StartServer();
  ClientConfig config = ConfigFor(*server);
  server->Stop();
  config.retry.max_retries = 2;
  SleepRecorder sleeps;
  sleeps.InstallIn(&config);
  auto client = ClientFor(config);
  auto r = client->Generate(OnePrompt(), Greedy());
  CHECK(r.status().code() == StatusCode::kUnavailable);
  CHECK(client->Stats().attempts == 3);
  CHECK(sleeps.waits().size() == 2);
  CHECK(client->Usage().requests == 0);
}

TEST_CASE("an answer slower than the read timeout is a deadline error") {
  auto server = StartServer();
  ScriptedReply slow = TextReply({"late"});
  slow.delay_ms = 3000;
  slow.times = -1;
  server->Add(slow);
  ClientConfig config = ConfigFor(*server);
  config.read_timeout_ms = 200;
  config.retry.max_retries = 0;
  const auto start = Clock::now();
  auto r = ClientFor(config)->Generate(OnePrompt(), Greedy());
  CHECK(r.status().code() == StatusCode::kDeadlineExceeded);
  CHECK(Clock::now() - start < milliseconds(2000));
  CHECK(server->RequestCount() == 1);

  config.retry.max_retries = 1;
  config.retry.retry_on_timeout = false;
  server->ClearLog();
  CHECK(ClientFor(config)->Generate(OnePrompt(), Greedy()).status().code() ==
        StatusCode::kDeadlineExceeded);
  CHECK(server->RequestCount() == 1);
}

TEST_CASE("a timed-out attempt is retried and the next answer is used") {
  auto server = StartServer();
  ScriptedReply slow = TextReply({"late"});
  slow.delay_ms = 2000;
  server->Add({slow, TextReply({"on time"})});
  ClientConfig config = ConfigFor(*server);
  config.read_timeout_ms = 200;
  config.retry.max_retries = 1;
  auto r = ClientFor(config)->Generate(OnePrompt(), Greedy());
  REQUIRE(r.ok());
  CHECK((*r)[0].samples[0].text == "on time");
  CHECK(server->RequestCount() == 2);
}

TEST_CASE("no more than max_in_flight requests reach the server at once") {
  auto server = StartServer();
  ScriptedReply slow = TextReply({"x"});
  slow.delay_ms = 100;
  slow.times = -1;
  server->Add(slow);
  ClientConfig config = ConfigFor(*server);
  config.max_in_flight = 2;
  auto client = ClientFor(config);
  std::vector<Chat> prompts(6, OnePrompt()[0]);
  const auto start = Clock::now();
  // Two callers at once share the one limit.
  std::thread other([&] { CHECK(client->Generate(prompts, Greedy()).ok()); });
  auto r = client->Generate(prompts, Greedy());
  other.join();
  REQUIRE(r.ok());
  CHECK(r->size() == 6);
  CHECK(server->RequestCount() == 12);
  CHECK(server->MaxConcurrent() == 2);
  CHECK(Clock::now() - start >= milliseconds(600));  // 12 requests, 2 at a time
}

TEST_CASE("a batch is sent in parallel up to the limit") {
  auto server = StartServer();
  ScriptedReply slow = TextReply({"x"});
  slow.delay_ms = 200;
  slow.times = -1;
  server->Add(slow);
  ClientConfig config = ConfigFor(*server);
  config.max_in_flight = 6;
  const auto start = Clock::now();
  REQUIRE(ClientFor(config)
              ->Generate(std::vector<Chat>(6, OnePrompt()[0]), Greedy())
              .ok());
  CHECK(server->MaxConcurrent() == 6);
  CHECK(Clock::now() - start < milliseconds(1100));
}

TEST_CASE("a request waiting to retry does not hold a slot") {
  auto server = StartServer();
  ScriptedReply busy = StatusReply(429, {{"retry-after-ms", "400"}});
  busy.prompt_contains = "first";
  server->Add(busy);
  ClientConfig config = ConfigFor(*server);
  config.max_in_flight = 1;
  auto client = ClientFor(config);
  std::thread first(
      [&] { CHECK(client->Generate(OnePrompt("first"), Greedy()).ok()); });
  REQUIRE(server->WaitForRequests(1, std::chrono::seconds(5)));
  // The first caller is now backing off: the second gets through meanwhile.
  CHECK(client->Generate(OnePrompt("second"), Greedy()).ok());
  first.join();
  auto log = server->Requests();
  REQUIRE(log.size() == 3);
  CHECK(log[0].prompt == "first");
  CHECK(log[1].prompt == "second");
  CHECK(log[2].prompt == "first");
}

TEST_CASE("a server that drips bytes is cut at the request deadline") {
  auto server = StartServer();
  // Never silent for a read timeout, never done: a byte every 100 ms.
  ScriptedReply drip = TextReply({std::string(2000, 'x')});
  drip.delivery = scripted::Delivery::kDrip;
  drip.drip_bytes = 1;
  drip.drip_interval_ms = 100;
  server->Add(drip);
  ClientConfig config = ConfigFor(*server);
  config.read_timeout_ms = 5000;
  config.request_timeout_ms = 800;
  std::vector<std::string> notices;
  std::mutex mu;
  config.on_wait = [&](std::string_view line) {
    std::lock_guard<std::mutex> lock(mu);
    notices.emplace_back(line);
  };
  const auto start = Clock::now();
  auto r = ClientFor(config)->Generate(OnePrompt(), Greedy());
  CHECK(r.status().code() == StatusCode::kDeadlineExceeded);
  CHECK(r.status().message().find("request deadline (800 ms)") !=
        std::string::npos);
  CHECK(Clock::now() - start < milliseconds(3000));
  CHECK(server->RequestCount() == 1);  // a deadline is not retried
}

TEST_CASE("a retry that would start after the deadline is not made") {
  auto server = StartServer();
  server->Add(StatusReply(503, {{"Retry-After", "60"}}));
  ClientConfig config = ConfigFor(*server);
  config.request_timeout_ms = 2000;
  SleepRecorder sleeps;
  sleeps.InstallIn(&config);
  auto r = ClientFor(config)->Generate(OnePrompt(), Greedy());
  CHECK(r.status().code() == StatusCode::kDeadlineExceeded);
  CHECK(sleeps.waits().empty());
  CHECK(server->RequestCount() == 1);
}

TEST_CASE("a retry is announced with what it waits for") {
  auto server = StartServer();
  server->Add({StatusReply(503), TextReply({"ok"})});
  ClientConfig config = ConfigFor(*server);
  SleepRecorder sleeps;
  sleeps.InstallIn(&config);
  std::vector<std::string> notices;
  std::mutex mu;
  config.on_wait = [&](std::string_view line) {
    std::lock_guard<std::mutex> lock(mu);
    notices.emplace_back(line);
  };
  REQUIRE(ClientFor(config)->Generate(OnePrompt(), Greedy()).ok());
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].find("retrying POST " + server->base_url() +
                        "/chat/completions") != std::string::npos);
  CHECK(notices[0].find("attempt 2 of 4") != std::string::npos);
}

}  // namespace
}  // namespace skilldb::llm::testing
