#include "expr.h"

#include <doctest/doctest.h>

namespace skilldb::verify::internal {
namespace {

TEST_CASE("an expression over dims evaluates with the usual precedence") {
  const Dims dims{{"M", 4}, {"N", 3}, {"K", 5}};
  CHECK(*EvalExpr("2*M*N*K", dims) == 120.0);
  CHECK(*EvalExpr("M + N * K", dims) == 19.0);
  CHECK(*EvalExpr("(M + N) * K", dims) == 35.0);
  CHECK(*EvalExpr("-M + 10", dims) == 6.0);
  CHECK(*EvalExpr("K % N", dims) == 2.0);
  CHECK(*EvalExpr("M / 8", dims) == 0.5);
}

TEST_CASE("an expression names its unknown dimension") {
  auto r = EvalExpr("M * Q", Dims{{"M", 2}});
  REQUIRE(!r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  CHECK(r.status().message().find("'Q'") != std::string::npos);
}

TEST_CASE("malformed expressions and division by zero are rejected") {
  const Dims dims{{"M", 2}};
  CHECK(!EvalExpr("M *", dims).ok());
  CHECK(!EvalExpr("(M", dims).ok());
  CHECK(!EvalExpr("M / 0", dims).ok());
  CHECK(!EvalExpr("", dims).ok());
  CHECK(!EvalExpr("M $ 2", dims).ok());
}

TEST_CASE("shape entries must be positive integers") {
  const Dims dims{{"H", 9}};
  CHECK(*EvalPositiveInt("H", dims) == 9);
  CHECK(*EvalPositiveInt("(H + 1) / 2", dims) == 5);
  CHECK(!EvalPositiveInt("H / 2", dims).ok());   // 4.5
  CHECK(!EvalPositiveInt("H - 9", dims).ok());   // 0
}

}  // namespace
}  // namespace skilldb::verify::internal
