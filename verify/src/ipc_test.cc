#include "ipc.h"
#include "worker_client.h"

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

namespace skilldb::verify::internal {
namespace {

struct Pair {
  Pair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0); }
  ~Pair() {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }
  int fds[2];
};

TEST_CASE("a framed message with a large blob arrives intact") {
  Pair p;
  std::string blob(3 << 20, '\0');
  for (size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<char>(i * 31);
  std::thread writer([&] { REQUIRE(SendMessage(p.fds[0], {{"op", "check"}, {"n", 7}}, blob).ok()); });
  auto m = ReceiveMessage(p.fds[1], 5000);
  writer.join();
  REQUIRE(m.ok());
  CHECK(m->header["op"] == "check");
  CHECK(m->header["n"] == 7);
  CHECK(m->blob == blob);
}

TEST_CASE(
    "a blob is read into the storage given back, when it is large enough") {
  Pair p;
  std::string first(1 << 20, 'a'), second(1 << 19, 'b');
  std::thread writer([&] {
    REQUIRE(SendMessage(p.fds[0], {{"op", "one"}}, first).ok());
    REQUIRE(SendMessage(p.fds[0], {{"op", "two"}}, second).ok());
    REQUIRE(SendMessage(p.fds[0], {{"op", "three"}}, first).ok());
  });
  std::string reuse;
  auto a = ReceiveMessage(p.fds[1], 5000, {}, &reuse);  // nothing to reuse
  REQUIRE(a.ok());
  CHECK(a->blob == first);
  reuse = std::move(a->blob);
  const char* storage = reuse.data();
  auto b = ReceiveMessage(p.fds[1], 5000, {}, &reuse);  // smaller: taken
  REQUIRE(b.ok());
  CHECK(b->blob == second);  // no byte of the first message past its end
  CHECK(b->blob.data() == storage);
  CHECK(reuse.empty());
  std::string small(16, 'z');
  auto c = ReceiveMessage(p.fds[1], 5000, {}, &small);  // too small: kept
  writer.join();
  REQUIRE(c.ok());
  CHECK(c->blob == first);
  CHECK(small == std::string(16, 'z'));
}

TEST_CASE("waiting for a message that never comes times out") {
  Pair p;
  auto m = ReceiveMessage(p.fds[1], 20);
  CHECK(m.status().code() == StatusCode::kDeadlineExceeded);
}

TEST_CASE("a closed peer is Unavailable") {
  Pair p;
  ::close(p.fds[0]);
  p.fds[0] = -1;
  CHECK(ReceiveMessage(p.fds[1], 100).status().code() == StatusCode::kUnavailable);
  CHECK(!SendMessage(p.fds[1], {{"op", "x"}}).ok());
}

TEST_CASE("frames over the size limit or with a bad magic are corruption") {
  Pair p;
  REQUIRE(SendMessage(p.fds[0], {{"op", "x"}}, std::string(1000, 'a')).ok());
  MessageLimits small;
  small.max_blob_bytes = 10;
  CHECK(ReceiveMessage(p.fds[1], 1000, small).status().code() == StatusCode::kCorruption);
  Pair q;
  const char junk[16] = {'J', 'U', 'N', 'K'};
  REQUIRE(::write(q.fds[0], junk, sizeof(junk)) == sizeof(junk));
  CHECK(ReceiveMessage(q.fds[1], 1000).status().code() == StatusCode::kCorruption);
}

TEST_CASE("a dead worker's message quotes faulthandler's stack, not its module list") {
  const std::string log =
      "loading...\nFatal Python error: Segmentation fault\n\nCurrent thread 0x1 (most recent "
      "call first):\n  File \"/x/driver.py\", line 713 in __call__\n\nExtension modules: "
      "numpy.core, " + std::string(5000, 'm') + " (total: 38)\n";
  const std::string m = CrashExcerpt(log);
  CHECK(m.find("crash stack: Fatal Python error: Segmentation fault") == 0);
  CHECK(m.find("driver.py\", line 713") != std::string::npos);
  CHECK(m.find("Extension modules") == std::string::npos);
  CHECK(CrashExcerpt(std::string(1000, 'x') + "last words") ==
        "log tail: " + std::string(290, 'x') + "last words");
  CHECK(CrashExcerpt("Fatal Python error: " + std::string(5000, 's')).size() < 2100);
}

}  // namespace
}  // namespace skilldb::verify::internal
