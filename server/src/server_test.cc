// The server's JSON routes end to end over loopback: search against the
// in-process query, authentication, limits (429 with Retry-After), the
// durable proposal queue, metrics and the OpenAPI document.
#include <thread>

#include "server_test_util.h"
#include "skilldb/json.h"
#include "skilldb/replay_verifier.h"
#include "skilldb/server/remote_library.h"

namespace skilldb::server {
namespace {

using testing::ParseJson;
using testing::ScriptedReport;
using testing::ScriptedVerifier;
using testing::TestServer;
using testing::TJson;

std::string ProposalBody(const std::string& id, double speedup) {
  QueuedRequest q;
  q.candidate = testing::ServedSkill(id, "Technique " + id,
                                     "A body of words unique to " + id + ".");
  q.replay_report = ScriptedReport("sum_dim1_fp32", speedup);
  return ToJson(q);
}

TEST_CASE("a batch search through the server returns the in-process hits and scores") {
  TestServer server;
  const std::vector<std::string> texts = {"shared memory tiling",
                                          "warp shuffle", "float4 loads"};
  QueryOptions options;
  options.fields = {HitField::kTitle, HitField::kSummary};
  auto local = server.lib().QueryBatch(options, texts, 1);
  REQUIRE(local.ok());
  TJson body{{"queries", texts},
             {"options", TJson::parse(ToJson(options))}};
  auto res = server.Client().Post("/v1/search", body.dump(), "application/json");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  TJson j = ParseJson(res->body);
  REQUIRE(j["results"].size() == texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    auto remote = FromJson<QueryResult>(j["results"][i].dump());
    REQUIRE(remote.ok());
    CHECK(*remote == (*local)[i]);
  }
  // As of an old version (the empty library), through the GET form.
  auto old = server.Client().Get("/v1/search?q=tiling&as_of=0");
  REQUIRE(old);
  REQUIRE(old->status == 200);
  CHECK(ParseJson(old->body)["results"][0]["hits"].empty());
  auto now = server.Client().Get("/v1/search?q=tiling");
  REQUIRE(now);
  CHECK(ParseJson(now->body)["results"][0]["hits"][0]["id"] == "smem-tiling");
}

TEST_CASE("errors are JSON with the status code of their Status") {
  TestServer server;
  auto missing = server.Client().Get("/v1/skills/no-such-skill");
  REQUIRE(missing);
  CHECK(missing->status == 404);
  TJson j = ParseJson(missing->body);
  CHECK(j["error"]["code"] == "not_found");
  CHECK(j["error"]["status"] == 404);
  auto bad = server.Client().Post("/v1/search", "{\"queries\": 3}",
                                  "application/json");
  REQUIRE(bad);
  CHECK(bad->status == 400);
  CHECK(ParseJson(bad->body)["error"]["code"] == "invalid_argument");
  std::string deep(200, '[');
  auto nested = server.Client().Post("/v1/search", deep, "application/json");
  REQUIRE(nested);
  CHECK(nested->status == 400);
  auto route = server.Client().Get("/v1/nothing-here");
  REQUIRE(route);
  CHECK(route->status == 404);
  CHECK(ParseJson(route->body)["error"]["code"] == "not_found");
}

TEST_CASE("writes need a bearer token when tokens are set, and reads too when asked") {
  ServerOptions options;
  options.tokens = {"a-token-of-sixteen-chars"};
  options.auth_reads = true;
  options.proposal_workers = 0;
  TestServer server(options);
  auto anonymous = server.Client().Get("/v1/log");
  REQUIRE(anonymous);
  CHECK(anonymous->status == 401);
  CHECK(anonymous->get_header_value("WWW-Authenticate") == "Bearer");
  httplib::Headers wrong{{"Authorization", "Bearer a-token-of-sixteen-charX"}};
  CHECK(server.Client().Get("/v1/log", wrong)->status == 401);
  httplib::Headers right{{"Authorization", "Bearer a-token-of-sixteen-chars"}};
  CHECK(server.Client().Get("/v1/log", right)->status == 200);
  auto post = server.Client().Post(
      "/v1/usage", "{\"records\":[{\"id\":\"warp-reduce\",\"event\":\"applied\"}]}",
      "application/json");
  CHECK(post->status == 401);
  CHECK(server.lib().GetUsage("warp-reduce")->count(UsageEvent::kApplied) == 0);
  auto ok = server.Client().Post(
      "/v1/usage", right,
      "{\"records\":[{\"id\":\"warp-reduce\",\"event\":\"applied\",\"count\":3}]}",
      "application/json");
  REQUIRE(ok);
  CHECK(ok->status == 200);
  CHECK(server.lib().GetUsage("warp-reduce")->count(UsageEvent::kApplied) == 3);
  // Health is public.
  CHECK(server.Client().Get("/healthz")->status == 200);
}

TEST_CASE("a read-only server refuses writes and serves reads") {
  ServerOptions options;
  options.read_only = true;
  TestServer server(options);
  auto post = server.Client().Post("/v1/proposals", ProposalBody("x", 2.0),
                                   "application/json");
  REQUIRE(post);
  CHECK(post->status == 403);
  CHECK(server.Client().Get("/v1/skills/warp-reduce")->status == 200);
}

TEST_CASE("a second server cannot take the port of a running one") {
  TestServer server;
  ServerOptions options;
  options.port = server.port();
  auto second = Server::Start(
      options, std::shared_ptr<Library>(&server.lib(), [](Library*) {}));
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == StatusCode::kUnavailable);
  CHECK(server.Client().Get("/healthz")->status == 200);
}

TEST_CASE("a proposal is queued at once and committed by the server's worker") {
  TestServer server;
  auto remote = OpenRemoteLibrary({.url = server.Url()});
  REQUIRE_MESSAGE(remote.ok(), remote.status().ToString());
  const Version before = server.lib().CurrentVersion();
  // RemoteProposal sends it to the queue and waits for the decision.
  Skill candidate = testing::ServedSkill(
      "async-copy", "Asynchronous copies", "cp.async moves global data to "
                                           "shared memory without registers.");
  auto p = (*remote)->Propose(candidate, ProposalOptions{});
  REQUIRE(p.ok());
  ReplayVerifier replay(ScriptedReport("sum_dim1_fp32", 2.0));
  VerificationRequest request;
  request.task = "sum_dim1_fp32";
  auto report = (*p)->Verify(replay, request);
  REQUIRE_MESSAGE(report.ok(), report.status().ToString());
  auto outcome = (*p)->Commit();
  REQUIRE(outcome.ok());
  CHECK(outcome->accepted);
  CHECK(outcome->version == before + 1);
  CHECK(server.lib().Get("async-copy").ok());
  auto q = server.lib().GetQueued((*p)->id());
  REQUIRE(q.ok());
  CHECK(q->state == QueueState::kCommitted);
  // Read back by id over HTTP.
  auto got = server.Client().Get("/v1/proposals/" + (*p)->id());
  REQUIRE(got);
  CHECK(ParseJson(got->body)["state"] == "committed");
}

TEST_CASE("skills committed through the server are candidates unless it accepts active ones") {
  for (const bool accept_active : {false, true}) {
    CAPTURE(accept_active);
    ServerOptions options;
    options.accept_active = accept_active;
    TestServer server(options);
    auto remote = OpenRemoteLibrary({.url = server.Url()});
    REQUIRE(remote.ok());
    // The client asks for an active skill (ProposalOptions' default).
    auto p = (*remote)->Propose(
        testing::ServedSkill("ldmatrix", "ldmatrix fragments",
                             "Load mma fragments from shared memory with one "
                             "ldmatrix per warp."),
        ProposalOptions{});
    REQUIRE(p.ok());
    ReplayVerifier replay(ScriptedReport("sum_dim1_fp32", 2.0));
    REQUIRE((*p)->Verify(replay, VerificationRequest{}).ok());
    auto outcome = (*p)->Commit();
    REQUIRE(outcome.ok());
    REQUIRE(outcome->accepted);
    auto skill = server.lib().Get("ldmatrix");
    REQUIRE(skill.ok());
    CHECK(skill->status ==
          (accept_active ? SkillStatus::kActive : SkillStatus::kCandidate));
  }
}

TEST_CASE("a proposal below the server's policy floor is rejected whatever it asks") {
  ServerOptions options;
  options.min_policy.min_speedup = 1.5;
  TestServer server(options);
  auto remote = OpenRemoteLibrary({.url = server.Url()});
  REQUIRE(remote.ok());
  ProposalOptions lax;
  lax.policy.min_speedup = 1.0;
  lax.policy.min_ci_low = 0.0;
  auto p = (*remote)->Propose(
      testing::ServedSkill("modest", "Modest gain", "Words only modest has."),
      lax);
  REQUIRE(p.ok());
  ReplayVerifier replay(ScriptedReport("sum_dim1_fp32", 1.2));
  REQUIRE((*p)->Verify(replay, VerificationRequest{}).ok());
  auto outcome = (*p)->Commit();
  REQUIRE(outcome.ok());
  CHECK_FALSE(outcome->accepted);
  CHECK_FALSE(server.lib().Get("modest").ok());
}

TEST_CASE("a full proposal queue answers 429 with Retry-After") {
  ServerOptions options;
  options.proposal_workers = 0;  // nothing drains it
  options.max_queued_proposals = 1;
  TestServer server(options);
  auto first = server.Client().Post("/v1/proposals", ProposalBody("a1", 2.0),
                                    "application/json");
  REQUIRE(first);
  CHECK(first->status == 202);
  CHECK(ParseJson(first->body)["state"] == "queued");
  auto second = server.Client().Post("/v1/proposals", ProposalBody("a2", 2.0),
                                     "application/json");
  REQUIRE(second);
  CHECK(second->status == 429);
  CHECK(second->has_header("Retry-After"));
}

TEST_CASE("a queued proposal survives a restart and is committed after it") {
  ServerOptions idle;
  idle.proposal_workers = 0;
  TestServer server(idle);
  auto posted = server.Client().Post("/v1/proposals", ProposalBody("kept", 2.0),
                                     "application/json");
  REQUIRE(posted);
  REQUIRE(posted->status == 202);
  const std::string id = ParseJson(posted->body)["id"];
  server.Restart(ServerOptions{});  // one worker now
  auto remote = OpenRemoteLibrary({.url = server.Url()});
  REQUIRE(remote.ok());
  // The worker claims what was queued before the restart; ask until final
  // through the client's own waiting (a fresh proposal behind it proves the
  // worker got past it: the queue is first in, first out).
  auto p = (*remote)->Propose(
      testing::ServedSkill("after", "After restart", "Words of after only."),
      ProposalOptions{});
  REQUIRE(p.ok());
  ReplayVerifier replay(ScriptedReport("sum_dim1_fp32", 2.0));
  REQUIRE((*p)->Verify(replay, VerificationRequest{}).ok());
  auto kept = server.lib().GetQueued(id);
  REQUIRE(kept.ok());
  CHECK(kept->state == QueueState::kCommitted);
  CHECK(server.lib().Get("kept").ok());
}

TEST_CASE("a synchronous verification past the verifier's capacity gets 429") {
  testing::BlockingVerifier verifier;
  ServerOptions options;
  options.verifier = &verifier;
  options.verify_workers = 1;
  options.max_pending_verifications = 0;
  TestServer server(options);
  VerificationRequest request;
  request.task = "sum_dim1_fp32";
  request.candidate = {"k.cc", "cpp", "extern \"C\" int launch() { return 0; }"};
  const std::string body = ToJson(request);
  int first_status = 0;
  std::thread first([&] {
    auto res = server.Client().Post("/v1/verify", body, "application/json");
    first_status = res ? res->status : -1;
  });
  verifier.WaitEntered(1);
  auto second = server.Client().Post("/v1/verify", body, "application/json");
  REQUIRE(second);
  CHECK(second->status == 429);
  CHECK(second->get_header_value("Retry-After") == "5");
  verifier.Release();
  first.join();
  CHECK(first_status == 200);
}

TEST_CASE("metrics are Prometheus text counting requests by route and code") {
  TestServer server;
  REQUIRE(server.Client().Get("/v1/skills/warp-reduce")->status == 200);
  REQUIRE(server.Client().Get("/v1/skills/nope")->status == 404);
  auto m = server.Client().Get("/metrics");
  REQUIRE(m);
  CHECK(m->status == 200);
  CHECK(m->get_header_value("Content-Type").starts_with("text/plain"));
  CHECK(m->body.find("skilldb_http_requests_total{route=\"skill\",code=\"200\"} 1") !=
        std::string::npos);
  CHECK(m->body.find("skilldb_http_requests_total{route=\"skill\",code=\"404\"} 1") !=
        std::string::npos);
  CHECK(m->body.find("skilldb_library_version 1") != std::string::npos);
  CHECK(m->body.find("skilldb_proposals{state=\"queued\"} 0") !=
        std::string::npos);
}

TEST_CASE("the OpenAPI document describes the routes the server answers") {
  TestServer server;
  auto doc = server.Client().Get("/openapi.json");
  REQUIRE(doc);
  TJson j = ParseJson(doc->body);
  CHECK(j["openapi"] == "3.0.3");
  for (const char* path : {"/v1/search", "/v1/proposals", "/v1/proposals/{id}",
                           "/evaluate", "/status/{task_id}",
                           "/results/{task_id}", "/metrics", "/healthz"}) {
    CHECK_MESSAGE(j["paths"].contains(path), path);
  }
}

TEST_CASE("clients querying while the queue commits see whole versions") {
  TestServer server;
  std::atomic<bool> failed{false};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      auto client = server.Client();
      for (int i = 0; i < 40; ++i) {
        auto res = client.Post("/v1/search",
                               "{\"query\":\"technique words unique\"}",
                               "application/json");
        if (!res || res->status != 200) failed = true;
      }
    });
  }
  auto remote = OpenRemoteLibrary({.url = server.Url()});
  REQUIRE(remote.ok());
  for (int i = 0; i < 5; ++i) {
    const std::string id = "c" + std::to_string(i);
    auto p = (*remote)->Propose(
        testing::ServedSkill(id, "Technique " + id,
                             "Words unique to " + id + " alone."),
        ProposalOptions{});
    REQUIRE(p.ok());
    ReplayVerifier replay(ScriptedReport("sum_dim1_fp32", 2.0));
    REQUIRE((*p)->Verify(replay, VerificationRequest{}).ok());
  }
  for (auto& t : readers) t.join();
  CHECK_FALSE(failed.load());
  CHECK(server.lib().CurrentVersion() == 6);
}

}  // namespace
}  // namespace skilldb::server
