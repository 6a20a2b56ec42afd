#include "subprocess.h"

#include <doctest/doctest.h>

namespace skilldb::verify::internal {
namespace {

TEST_CASE("a child's output and exit status come back") {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3"};
  auto r = Run(o);
  REQUIRE(r.ok());
  CHECK(r->exit_code == 3);
  CHECK(!r->ok());
  CHECK(r->output.find("out") != std::string::npos);
  CHECK(r->output.find("err") != std::string::npos);
}

TEST_CASE("a child past its deadline is killed, its children too") {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "sleep 30 & sleep 30; echo never"};
  o.timeout_s = 0.3;
  auto r = Run(o);
  REQUIRE(r.ok());
  CHECK(r->timed_out);
  CHECK(r->wall_ms < 5000);
  CHECK(r->output.find("never") == std::string::npos);
}

TEST_CASE("output beyond the limit is truncated and says so") {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "yes | head -c 100000"};
  o.max_output_bytes = 1000;
  auto r = Run(o);
  REQUIRE(r.ok());
  CHECK(r->output.size() == 1000);
  CHECK(r->output_truncated);
}

TEST_CASE("a missing program exits with 127") {
  RunOptions o;
  o.argv = {"/nonexistent/program"};
  auto r = Run(o);
  REQUIRE(r.ok());
  CHECK(r->exit_code == 127);
}

}  // namespace
}  // namespace skilldb::verify::internal
