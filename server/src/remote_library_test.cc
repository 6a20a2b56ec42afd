// RemoteLibrary against a live server: what the Library interface answers
// in process, it answers over HTTP.
#include "skilldb/server/remote_library.h"

#include "server_test_util.h"

namespace skilldb::server {
namespace {

using testing::TestServer;

TEST_CASE("a remote library reads what the library holds, as of any version") {
  TestServer server;
  REQUIRE(server.lib()
              .Put(testing::ServedSkill("warp-reduce", "Warp shuffle reduction v2",
                                        "A second revision."))
              .ok());
  auto remote = OpenRemoteLibrary({.url = server.Url()});
  REQUIRE_MESSAGE(remote.ok(), remote.status().ToString());
  Library& r = **remote;
  Library& l = server.lib();
  CHECK(r.CurrentVersion() == l.CurrentVersion());
  CHECK(*r.Get("warp-reduce", {}) == *l.Get("warp-reduce", {}));
  CHECK(*r.Get("warp-reduce", ReadOptions{1}) == *l.Get("warp-reduce", ReadOptions{1}));
  CHECK(*r.History("warp-reduce") == *l.History("warp-reduce"));
  CHECK(*r.Log({}) == *l.Log({}));
  CHECK(*r.Diff(1, 2) == *l.Diff(1, 2));
  CHECK(*r.GetCommit(2) == *l.GetCommit(2));
  CHECK(*r.CommitChanges(1) == *l.CommitChanges(1));
  QueryOptions q;
  q.fields = HitFields::All();
  CHECK(*r.Query(q, "shared memory") == *l.Query(q, "shared memory"));
  std::vector<std::string> ids;
  REQUIRE(r.Scan({}, [&](const Skill& s) {
             ids.push_back(s.id);
             return true;
           }).ok());
  CHECK(ids == std::vector<std::string>{"smem-tiling", "vector-loads", "warp-reduce"});
  CHECK(r.Get("missing", {}).status().code() == StatusCode::kNotFound);
  CHECK(r.Put(Skill::Make("x", "X"), {}).status().code() ==
        StatusCode::kNotSupported);
}

TEST_CASE("a remote library records usage in one batch") {
  TestServer server;
  auto remote = OpenRemoteLibrary({.url = server.Url()});
  REQUIRE(remote.ok());
  REQUIRE((*remote)
              ->RecordUsage({{"warp-reduce", UsageEvent::kSelected, 2},
                             {"smem-tiling", UsageEvent::kSucceeded, 1}})
              .ok());
  CHECK(server.lib().GetUsage("warp-reduce")->count(UsageEvent::kSelected) == 2);
  CHECK((*remote)->GetUsage("smem-tiling")->count(UsageEvent::kSucceeded) == 1);
  // Nothing is recorded when one id is unknown.
  CHECK((*remote)
            ->RecordUsage({{"warp-reduce", UsageEvent::kSelected, 1},
                           {"nope", UsageEvent::kSelected, 1}})
            .code() == StatusCode::kNotFound);
  CHECK(server.lib().GetUsage("warp-reduce")->count(UsageEvent::kSelected) == 2);
}

TEST_CASE("a remote library says clearly when the server is not there") {
  CHECK(OpenRemoteLibrary({.url = "ftp://x"}).status().code() ==
        StatusCode::kInvalidArgument);
  // A port nothing listens on: the server's own port after it stopped.
  int port = 0;
  {
    TestServer server;
    port = std::stoi(server.Url().substr(server.Url().rfind(':') + 1));
  }
  auto r = OpenRemoteLibrary(
      {.url = "http://127.0.0.1:" + std::to_string(port), .retries = 0});
  CHECK(r.status().code() == StatusCode::kUnavailable);
}

}  // namespace
}  // namespace skilldb::server
