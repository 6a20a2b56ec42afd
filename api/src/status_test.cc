#include "skilldb/status.h"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

namespace skilldb {
namespace {

Result<int> Fails() { return Status::NotFound("no such thing"); }

// Runs `fn` in a child process with stderr captured; returns its wait
// status and what it wrote to stderr.
template <typename Fn>
std::pair<int, std::string> RunInChild(Fn fn) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    fn();
    _exit(0);
  }
  close(fds[1]);
  std::string err;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;) err.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return {status, err};
}

TEST_CASE(
    "reading the value of an error Result stops the program with the status") {
  auto [status, err] = RunInChild([] {
    volatile int v = Fails().value();
    (void)v;
  });
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
  CHECK(err.find("not_found: no such thing") != std::string::npos);
}

TEST_CASE("dereferencing an error Result stops the program too") {
  auto [status, err] = RunInChild([] {
    Result<std::string> r = Status::IOError("disk gone");
    volatile size_t n = r->size();
    (void)n;
  });
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
  CHECK(err.find("io_error: disk gone") != std::string::npos);
}

TEST_CASE("value_or gives the value or the fallback") {
  CHECK(Fails().value_or(7) == 7);
  Result<int> good = 3;
  CHECK(good.value_or(7) == 3);
  Result<std::string> moved = std::string("kept");
  CHECK(std::move(moved).value_or("fallback") == "kept");
}

TEST_CASE("a Result built from an OK status holds an internal error") {
  Result<int> r = Status::Ok();
  CHECK_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInternal);
}

TEST_CASE("WithContext prefixes the message and keeps the code") {
  Status s = Status::Corruption("bad block").WithContext("table 7.sst");
  CHECK(s.code() == StatusCode::kCorruption);
  CHECK(s.message() == "table 7.sst: bad block");
  CHECK(Status::Ok().WithContext("x").ok());
}

}  // namespace
}  // namespace skilldb
