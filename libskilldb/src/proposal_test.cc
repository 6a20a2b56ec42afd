#include "skilldb/proposal.h"

#include <doctest/doctest.h>

#include "../../tests/test_util.h"
#include "skilldb/library.h"

namespace skilldb {
namespace {

using testing::TempLibrary;

// A verifier that returns a fixed report: the engine's decision logic is
// what these tests exercise, not measurement.
class FixedVerifier : public Verifier {
 public:
  explicit FixedVerifier(double speedup, bool correct = true)
      : speedup_(speedup), correct_(correct) {}
  std::string_view Name() const override { return "fixed"; }
  Result<VerificationReport> Verify(
      const VerificationRequest& request) override {
    ++calls;
    VerificationReport r;
    r.verifier = "fixed";
    r.verifier_version = "1";
    r.device = "test device";
    r.device_class = "host";
    r.task = request.task;
    r.compiled = true;
    r.correctness.checked = true;
    r.correctness.passed = correct_;
    r.correctness.trials = 3;
    for (int i = 0; i < 3; ++i) {
      RoundTiming t;
      t.baseline_median_ms = 1.0;
      t.candidate_median_ms = 1.0 / speedup_;
      t.speedup_ratio = speedup_;
      r.rounds.push_back(t);
    }
    r.speedup = {speedup_, speedup_ * 0.97, speedup_ * 1.03, 0.95};
    r.passed = correct_ && speedup_ >= 1.05;
    if (!r.passed) r.reasons.push_back("not faster or not correct");
    return r;
  }
  int calls = 0;

 private:
  double speedup_;
  bool correct_;
};

Skill MakeSkill(const std::string& id, const std::string& body) {
  Skill s = Skill::Make(id, "Warp shuffle reduction for " + id);
  s.summary = "Reduce within a warp with shuffles.";
  s.body = body;
  s.code = "v += __shfl_down_sync(0xffffffff, v, 16);";
  s.tags = {"warp"};
  s.ops = {"reduction"};
  return s;
}

const char* kBodyA =
    "Use __shfl_down_sync to add values across the 32 lanes of a warp without "
    "shared memory, halving the offset each step from 16 down to 1, then lane "
    "0 "
    "holds the sum and writes it out once per warp.";
const char* kBodyB =
    "Tile the K dimension of a matrix product through shared memory so that "
    "each "
    "global element is read once per thread block and reused from on-chip "
    "storage.";

VerificationRequest Request() {
  VerificationRequest r;
  r.task = "reduce_sum_fp32";
  return r;
}

Result<ProposalOutcome> ProposeAndCommit(Library& lib, const Skill& s,
                                         Verifier& v,
                                         ProposalOptions options = {}) {
  SKILLDB_ASSIGN_OR_RETURN(auto p, lib.Propose(s, options));
  SKILLDB_RETURN_IF_ERROR(p->Duplicates().status());
  SKILLDB_RETURN_IF_ERROR(p->Verify(v, Request()).status());
  return p->Commit();
}

TEST_CASE("a verified, novel candidate is accepted with its evidence") {
  TempLibrary lib;
  FixedVerifier fast(1.4);
  auto outcome = ProposeAndCommit(*lib, MakeSkill("warp-reduce", kBodyA), fast);
  REQUIRE_MESSAGE(outcome.ok(), outcome.status().ToString());
  CHECK(outcome->accepted);
  CHECK(outcome->version == 1);
  auto stored = lib->Get("warp-reduce");
  REQUIRE(stored.ok());
  REQUIRE(stored->evidence_json.size() == 1);
  auto report = ReportFromJson(stored->evidence_json[0]);
  REQUIRE(report.ok());
  CHECK(report->speedup.ratio == doctest::Approx(1.4));
  CHECK(SkillTrust(*stored) == Trust::kProvisional);
  auto audit = lib->Audit({});
  REQUIRE(audit.ok());
  REQUIRE(audit->size() == 2);  // verified, accepted
  CHECK(audit->back().event == "accepted");
  CHECK(audit->back().version == 1);
}

TEST_CASE("a candidate that fails the policy is rejected and never visible") {
  TempLibrary lib;
  FixedVerifier slow(1.01);
  auto outcome = ProposeAndCommit(*lib, MakeSkill("warp-reduce", kBodyA), slow);
  REQUIRE(outcome.ok());
  CHECK_FALSE(outcome->accepted);
  CHECK_FALSE(outcome->reasons.empty());
  CHECK(lib->CurrentVersion() == 0);
  CHECK(lib->History("warp-reduce").status().code() == StatusCode::kNotFound);
  FixedVerifier wrong(2.0, /*correct=*/false);
  outcome = ProposeAndCommit(*lib, MakeSkill("warp-reduce", kBodyA), wrong);
  REQUIRE(outcome.ok());
  CHECK_FALSE(outcome->accepted);
  CHECK(lib->CurrentVersion() == 0);
  FixedVerifier implausible(80.0);
  outcome =
      ProposeAndCommit(*lib, MakeSkill("warp-reduce", kBodyA), implausible);
  REQUIRE(outcome.ok());
  CHECK_FALSE(outcome->accepted);
  auto audit = lib->Audit({});
  REQUIRE(audit.ok());
  int rejected = 0;
  for (const auto& e : *audit) rejected += e.event == "rejected";
  CHECK(rejected == 3);
}

TEST_CASE("a candidate without a verification report is rejected") {
  TempLibrary lib;
  auto p = lib->Propose(MakeSkill("warp-reduce", kBodyA), {});
  REQUIRE(p.ok());
  auto outcome = (*p)->Commit();
  REQUIRE(outcome.ok());
  CHECK_FALSE(outcome->accepted);
  CHECK(lib->CurrentVersion() == 0);
  CHECK((*p)->Commit().status().code() == StatusCode::kFailedPrecondition);
}

TEST_CASE("exact and near duplicates are found with scores") {
  TempLibrary lib;
  REQUIRE(lib->PutMany({MakeSkill("a", kBodyA), MakeSkill("b", kBodyB)}).ok());
  // Exact: same content, other id (ids and statuses do not count).
  Skill same = MakeSkill("a", kBodyA);
  same.id = "a-copy";
  same.title = "WARP shuffle   reduction for a";  // case and spacing differ
  auto p = lib->Propose(same, {});
  REQUIRE(p.ok());
  auto dups = (*p)->Duplicates();
  REQUIRE(dups.ok());
  REQUIRE(!dups->empty());
  CHECK(dups->front().id == "a");
  CHECK(dups->front().kind == DuplicateMatch::Kind::kExact);
  // Near: a light edit of A.
  Skill near = MakeSkill(
      "a-edit", std::string(kBodyA) + " Works for any associative operator.");
  p = lib->Propose(near, {});
  REQUIRE(p.ok());
  dups = (*p)->Duplicates();
  REQUIRE(dups.ok());
  REQUIRE(dups->size() == 1);
  CHECK(dups->front().id == "a");
  CHECK(dups->front().kind == DuplicateMatch::Kind::kNear);
  CHECK(dups->front().jaccard > 0.6);
  CHECK(dups->front().bm25_similarity > 0.5);
  // Unrelated: none.
  p = lib->Propose(
      MakeSkill("c",
                "Persistent kernels loop over tiles with an atomic "
                "counter instead of launching one block per tile."),
      {});
  REQUIRE(p.ok());
  CHECK((*p)->Duplicates()->empty());
}

TEST_CASE("dedup policies: reject, supersede and merge") {
  FixedVerifier fast(1.5);
  Skill near =
      MakeSkill("a-v2", std::string(kBodyA) + " Also for max and min.");
  SUBCASE("reject") {
    TempLibrary lib;
    REQUIRE(lib->Put(MakeSkill("a", kBodyA)).ok());
    auto outcome = ProposeAndCommit(*lib, near, fast);
    REQUIRE(outcome.ok());
    CHECK_FALSE(outcome->accepted);
    CHECK(lib->CurrentVersion() == 1);
  }
  SUBCASE("supersede") {
    TempLibrary lib;
    REQUIRE(lib->Put(MakeSkill("a", kBodyA)).ok());
    ProposalOptions o;
    o.dedup = DedupPolicy::kSupersede;
    auto outcome = ProposeAndCommit(*lib, near, fast, o);
    REQUIRE(outcome.ok());
    REQUIRE(outcome->accepted);
    CHECK(outcome->deprecated == std::vector<std::string>{"a"});
    CHECK(lib->Get("a")->status == SkillStatus::kDeprecated);
    auto v2 = lib->Get("a-v2");
    REQUIRE(v2.ok());
    CHECK(v2->lineage.supersedes == std::vector<std::string>{"a"});
    CHECK(lib->CurrentVersion() == 2);  // one commit for both changes
  }
  SUBCASE("merge") {
    TempLibrary lib;
    Skill a = MakeSkill("a", kBodyA);
    a.evidence_json = {R"({"task":"old","passed":true})"};
    REQUIRE(lib->Put(a).ok());
    ProposalOptions o;
    o.dedup = DedupPolicy::kMerge;
    auto outcome = ProposeAndCommit(*lib, near, fast, o);
    REQUIRE(outcome.ok());
    REQUIRE(outcome->accepted);
    CHECK(outcome->skill_id == "a");
    auto merged = lib->Get("a");
    REQUIRE(merged.ok());
    CHECK(merged->body == near.body);
    CHECK(merged->evidence_json.size() == 2);
    CHECK(lib->Get("a-v2").status().code() == StatusCode::kNotFound);
    CHECK(lib->History("a")->size() == 2);
  }
}

TEST_CASE("a duplicate committed after the proposal was made aborts it") {
  TempLibrary lib;
  FixedVerifier fast(1.5);
  auto first = lib->Propose(MakeSkill("one", kBodyA), {});
  auto second = lib->Propose(MakeSkill("two", kBodyA), {});
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  REQUIRE((*first)->Verify(fast, Request()).ok());
  REQUIRE((*second)->Verify(fast, Request()).ok());
  CHECK((*second)->Duplicates()->empty());  // none at V0
  auto a = (*first)->Commit();
  REQUIRE(a.ok());
  CHECK(a->accepted);
  auto b = (*second)->Commit();
  CHECK(b.status().code() == StatusCode::kAborted);
  CHECK(lib->Get("two").status().code() == StatusCode::kNotFound);
  auto audit = lib->Audit({});
  CHECK(audit->back().event == "aborted");
}

TEST_CASE("a change to the superseded skill after V0 aborts the proposal") {
  TempLibrary lib;
  FixedVerifier fast(1.5);
  REQUIRE(lib->Put(MakeSkill("a", kBodyA)).ok());
  ProposalOptions o;
  o.dedup = DedupPolicy::kSupersede;
  auto p =
      lib->Propose(MakeSkill("a-v2", std::string(kBodyA) + " Also min."), o);
  REQUIRE(p.ok());
  REQUIRE((*p)->Duplicates()->size() == 1);
  REQUIRE((*p)->Verify(fast, Request()).ok());
  Skill changed = MakeSkill("a", kBodyA);
  changed.tags.push_back("edited");
  REQUIRE(lib->Put(changed).ok());
  CHECK((*p)->Commit().status().code() == StatusCode::kAborted);
}

TEST_CASE("trust grows with passing evidence from distinct tasks") {
  Skill s = Skill::Make("x", "y");
  CHECK(SkillTrust(s) == Trust::kUnverified);
  VerificationReport r;
  r.passed = true;
  r.task = "t1";
  s.evidence_json.push_back(ReportToJson(r));
  CHECK(SkillTrust(s) == Trust::kProvisional);
  s.evidence_json.push_back(ReportToJson(r));  // same task again
  CHECK(SkillTrust(s) == Trust::kProvisional);
  r.task = "t2";
  s.evidence_json.push_back(ReportToJson(r));
  CHECK(SkillTrust(s) == Trust::kTrusted);
}

}  // namespace
}  // namespace skilldb
