#include "skilldb/policy/trajectory.h"

#include <doctest/doctest.h>

#include <set>

#include "trajectory_fixture.h"

namespace skilldb::policy {
namespace {

TEST_CASE("a trajectory survives its JSON round trip field for field") {
  const Trajectory t = testing::FixtureTrajectory();
  auto back = TrajectoryFromJson(ToJson(t));
  REQUIRE_MESSAGE(back.ok(), back.status().ToString());
  CHECK(*back == t);
}

TEST_CASE("the best sample is the one the trajectory names") {
  Trajectory t = testing::FixtureTrajectory();
  REQUIRE(BestSample(t) != nullptr);
  CHECK(BestSample(t)->verdict == SampleVerdict::kFaster);
  CHECK(BestTurn(t)->turn == 1);
  t.best_turn = -1;
  CHECK(BestSample(t) == nullptr);
  t.best_turn = 9;
  CHECK(BestTurn(t) == nullptr);
}

TEST_CASE("every verdict name reads back and unknown names are refused") {
  for (SampleVerdict v :
       {SampleVerdict::kFaster, SampleVerdict::kNotFaster,
        SampleVerdict::kWrong, SampleVerdict::kCompileError,
        SampleVerdict::kLoadError, SampleVerdict::kRuntimeError,
        SampleVerdict::kHack, SampleVerdict::kNoCode, SampleVerdict::kTooLarge,
        SampleVerdict::kVerifierError}) {
    auto back = ParseSampleVerdict(SampleVerdictName(v));
    REQUIRE(back.ok());
    CHECK(*back == v);
  }
  CHECK(ParseSampleVerdict("great").status().IsInvalidArgument());
}

TEST_CASE("trajectory ids are unique and well formed") {
  std::set<std::string> ids;
  for (int i = 0; i < 100; ++i) ids.insert(NewTrajectoryId());
  CHECK(ids.size() == 100);
  CHECK(ids.begin()->rfind("t-", 0) == 0);
}

TEST_CASE("malformed trajectory JSON is refused naming the field") {
  CHECK(TrajectoryFromJson("{").status().IsInvalidArgument());
  auto bad = TrajectoryFromJson(R"({"turns": 3})");
  CHECK(bad.status().IsInvalidArgument());
  CHECK(bad.status().message().find("turns") != std::string::npos);
  CHECK(TrajectoryFromJson(R"({"turns":[{"samples":[{"verdict":"x"}]}]})")
            .status()
            .IsInvalidArgument());
}

}  // namespace
}  // namespace skilldb::policy
