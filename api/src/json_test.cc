#include "skilldb/json.h"

#include <doctest/doctest.h>

#include <string>

namespace skilldb {
namespace {

// ToJson, FromJson, and ToJson again: the value and the text survive.
template <typename T>
void CheckRoundTrip(const T& value) {
  const std::string text = ToJson(value);
  auto back = FromJson<T>(text);
  REQUIRE_MESSAGE(back.ok(), back.status().ToString(), " for ", text);
  CHECK(*back == value);
  CHECK(ToJson(*back) == text);
}

Skill FullSkill() {
  Skill s = Skill::Make("smem-tiling", "Tile K through shared memory");
  s.summary = "Stage tiles of A and B in shared memory";
  s.body = "## When\nGEMM-like loops.";
  s.code = "__shared__ float a[32][33];";
  s.language = Language::kCuda;
  s.tags = {"tiling", "smem"};
  s.ops = {"matmul"};
  s.arch = {"sm_90"};
  s.provenance.source = "summary-agent";
  s.provenance.model_step = 4000;
  s.lineage.derived_from = {"base"};
  s.extra_json = R"({"note":"x"})";
  return s;
}

UsageCounters SomeCounters() {
  UsageCounters c;
  c.counts[0] = 9;
  c.counts[2] = 4;
  c.counts[3] = 3;
  c.counts[4] = 1;
  c.last_used_version = 12;
  return c;
}

Hit FullHit() {
  Hit h;
  h.id = "smem-tiling";
  h.score = 3.25;
  h.fields = HitFields::All();
  h.revision = 7;
  h.title = "Tile K";
  h.summary = "s";
  h.body = "b";
  h.code = "c";
  h.tags = {"t"};
  h.ops = {"matmul"};
  h.arch = {"sm_80"};
  h.language = Language::kTriton;
  h.status = SkillStatus::kCandidate;
  h.usage = SomeCounters();
  return h;
}

TEST_CASE("every public type survives a JSON round trip") {
  CheckRoundTrip(FullSkill());
  CheckRoundTrip(FullHit());
  Hit bare;
  bare.id = "a";
  bare.score = 1.5;
  CheckRoundTrip(bare);
  CheckRoundTrip(QueryResult{.version = 4, .hits = {FullHit(), bare}});
  CheckRoundTrip(CommitInfo{.version = 3,
                            .time_ms = 1700000000000,
                            .kind = "import",
                            .message = "m",
                            .author = "a",
                            .added = 2,
                            .updated = 1,
                            .deleted = 0,
                            .num_skills = 9,
                            .total_length = 120});
  CheckRoundTrip(Change{.id = "x", .kind = ChangeKind::kDeleted});
  CheckRoundTrip(
      Revision{.version = 5, .deleted = false, .skill = FullSkill()});
  CheckRoundTrip(Revision{.version = 6, .deleted = true, .skill = {}});
  CheckRoundTrip(DiffEntry{.id = "smem-tiling",
                           .kind = ChangeKind::kUpdated,
                           .before = FullSkill(),
                           .after = FullSkill()});
  LibraryInfo info{.path = "/tmp/lib",
                   .analyzer = Analyzer::kStandard,
                   .k1 = 1.1,
                   .b = 0.5,
                   .field_weights = kSkillLibraryWeights,
                   .read_only = true,
                   .head = 9,
                   .oldest_retained = 2};
  CheckRoundTrip(info);
  LibraryStats stats;
  stats.version = 3;
  stats.num_skills = 10;
  stats.avg_length = 12.5;
  stats.active = 8;
  stats.pruned = 2;
  stats.cuda = 4;
  stats.provisional = 6;
  stats.trusted = 1;
  stats.disk_bytes = 1 << 20;
  CheckRoundTrip(stats);
  CheckRoundTrip(SomeCounters());
  CheckRoundTrip(
      UsageRecord{.id = "a", .event = UsageEvent::kSucceeded, .count = 3});
  CheckRoundTrip(DuplicateMatch{.id = "d",
                                .kind = DuplicateMatch::Kind::kExact,
                                .bm25_similarity = 0.99,
                                .jaccard = 1.0});
  ProposalOutcome outcome{.accepted = true,
                          .version = 8,
                          .skill_id = "n",
                          .deprecated = {"old"},
                          .reasons = {"r"}};
  outcome.duplicates.push_back(DuplicateMatch{.id = "old", .jaccard = 0.7});
  outcome.audit_seq = 17;
  CheckRoundTrip(outcome);
  CheckRoundTrip(PruneAction{.id = "p", .reasons = {"unused", "superseded"}});
  CheckRoundTrip(GcReport{.old_oldest = 1,
                          .new_oldest = 5,
                          .tagged = {2, 3},
                          .revisions_dropped = 4,
                          .commits_dropped = 3,
                          .df_entries_dropped = 10,
                          .documents_dropped = 2,
                          .disk_bytes_before = 100,
                          .disk_bytes_after = 50});
  CheckRoundTrip(TagInfo{.name = "ckpt-1", .version = 4});
  GenerationRecord gen{.model = "m",
                       .prompt = {{"system", "s"}, {"user", "rank these"}},
                       .prompt_text = "<|im_start|>",
                       .prompt_token_ids = {1, 2, 3},
                       .completion = "[2] > [1]",
                       .completion_token_ids = {7, 8},
                       .completion_logprobs = {-0.5, -1.25}};
  CheckRoundTrip(gen);
  RerankResult rr{
      .hits = {RankedHit{
          .hit = FullHit(), .bm25_rank = 2, .rerank_score = 0.9, .score = 0.7}},
      .applied = true,
      .mode = "listwise",
      .reason = "",
      .cached = false,
      .generations = {gen}};
  CheckRoundTrip(rr);
}

TEST_CASE("a verification report's isolation survives a JSON round trip") {
  VerificationReport r;
  r.verifier = "host";
  r.task = "softmax_rows_fp32";
  r.isolation = {.namespaces = true,
                 .seccomp = true,
                 .network = false,
                 .pid_namespace = true,
                 .compiler_confined = true,
                 .notes = "sandbox: netns mntns chroot seccomp-allowlist"};
  const std::string text = ToJson(r);
  CHECK(text.find("\"isolation\":{") != std::string::npos);
  CHECK(text.find("\"network\":false") != std::string::npos);
  auto back = FromJson<VerificationReport>(text);
  REQUIRE(back.ok());
  CHECK(back->isolation.namespaces);
  CHECK(back->isolation.seccomp);
  CHECK(!back->isolation.network);
  CHECK(back->isolation.pid_namespace);
  CHECK(back->isolation.compiler_confined);
  CHECK(back->isolation.notes == r.isolation.notes);
  CHECK(ToJson(*back) == text);
  // Each flag on its own, so no field is read from another's key.
  for (int flag = 0; flag < 5; ++flag) {
    VerificationReport one;
    one.isolation.namespaces = flag == 0;
    one.isolation.seccomp = flag == 1;
    one.isolation.network = flag == 2;
    one.isolation.pid_namespace = flag == 3;
    one.isolation.compiler_confined = flag == 4;
    auto b = FromJson<VerificationReport>(ToJson(one));
    REQUIRE(b.ok());
    CHECK(b->isolation.namespaces == (flag == 0));
    CHECK(b->isolation.seccomp == (flag == 1));
    CHECK(b->isolation.network == (flag == 2));
    CHECK(b->isolation.pid_namespace == (flag == 3));
    CHECK(b->isolation.compiler_confined == (flag == 4));
  }
  // A report from before the field reads as unconfined, with network.
  auto old =
      FromJson<VerificationReport>(R"({"verifier":"cuda","passed":true})");
  REQUIRE(old.ok());
  CHECK(!old->isolation.namespaces);
  CHECK(!old->isolation.seccomp);
  CHECK(old->isolation.network);
  CHECK(!old->isolation.compiler_confined);
  CHECK(FromJson<VerificationReport>(R"({"isolation":3})").status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(FromJson<VerificationReport>(R"({"isolation":{"seccomp":"yes"}})")
            .status()
            .code() == StatusCode::kInvalidArgument);
}

TEST_CASE("an audit entry keeps its stored JSON verbatim") {
  const std::string stored =
      R"({"seq":3,"time_ms":5,"event":"rejected","proposal_id":"p-1",)"
      R"("skill_id":"s","author":"agent","base_version":2,"version":0,)"
      R"("reasons":["too slow"],"report":{"passed":false}})";
  auto e = FromJson<AuditEntry>(stored);
  REQUIRE(e.ok());
  CHECK(e->seq == 3);
  CHECK(e->event == "rejected");
  CHECK(e->reasons == std::vector<std::string>{"too slow"});
  CHECK(ToJson(*e) == stored);
}

TEST_CASE("a hit carries only the fields it was asked for") {
  Hit h = FullHit();
  h.fields = {HitField::kTitle};
  auto back = FromJson<Hit>(ToJson(h));
  REQUIRE(back.ok());
  CHECK(back->fields == HitFields{HitField::kTitle});
  CHECK(back->title == "Tile K");
  CHECK(back->body.empty());
  CHECK_FALSE(back->usage.has_value());
}

TEST_CASE("readers reject malformed input with InvalidArgument") {
  CHECK(FromJson<CommitInfo>("not json").status().IsInvalidArgument());
  CHECK(FromJson<CommitInfo>("[1,2]").status().IsInvalidArgument());
  CHECK(FromJson<CommitInfo>(R"({"version":"three"})")
            .status()
            .IsInvalidArgument());
  CHECK(FromJson<CommitInfo>(R"({"version":-1})").status().IsInvalidArgument());
  CHECK(FromJson<Change>(R"({"id":"a","change":"renamed"})")
            .status()
            .IsInvalidArgument());
  CHECK(FromJson<Hit>(R"({"score":1})").status().IsInvalidArgument());
  CHECK(FromJson<UsageRecord>(R"({"id":"a","event":"clicked"})")
            .status()
            .IsInvalidArgument());
  CHECK(FromJson<GenerationRecord>(R"({"prompt_token_ids":[1,4294967296]})")
            .status()
            .IsInvalidArgument());
  CHECK(FromJson<LibraryInfo>(R"({"field_weights":{"title":99}})")
            .status()
            .IsInvalidArgument());
}

TEST_CASE("repeated keys are rejected, at any depth") {
  CHECK(
      FromJson<Change>(R"({"id":"a","id":"b"})").status().IsInvalidArgument());
  CHECK(ParseSkillJson(R"({"id":"a","title":"t","title":"u"})")
            .status()
            .IsInvalidArgument());
  CHECK(ParseSkillJson(R"({"id":"a","title":"t","extra":{"k":1,"k":2}})")
            .status()
            .IsInvalidArgument());
  // The same key in sibling objects is fine.
  CHECK(ParseSkillJson(
            R"({"id":"a","title":"t","extra":{"x":{"k":1},"y":{"k":2}}})")
            .ok());
}

TEST_CASE("nesting beyond the limit is rejected before it can hurt") {
  auto nested = [](int depth) {
    std::string extra;
    for (int i = 0; i < depth; ++i) extra += R"({"a":)";
    extra += "1";
    for (int i = 0; i < depth; ++i) extra += "}";
    return R"({"id":"a","title":"t","extra":)" + extra + "}";
  };
  CHECK(ParseSkillJson(nested(20)).ok());
  auto deep = ParseSkillJson(nested(100000));
  CHECK(deep.status().IsInvalidArgument());
  CHECK(deep.status().message().find("32") != std::string::npos);
  CHECK(FromJson<QueryResult>(std::string(100000, '['))
            .status()
            .IsInvalidArgument());
}

TEST_CASE("names of enums parse back") {
  for (Analyzer a :
       {Analyzer::kWhitespace, Analyzer::kStandard, Analyzer::kCode})
    CHECK(*ParseAnalyzer(AnalyzerName(a)) == a);
  CHECK(ParseAnalyzer("klingon").status().IsInvalidArgument());
  auto fields = ParseHitFields("title,body,usage");
  REQUIRE(fields.ok());
  CHECK(fields->has(HitField::kBody));
  CHECK_FALSE(fields->has(HitField::kCode));
  CHECK(FormatHitFields(*fields) == "title,body,usage");
  CHECK(*ParseHitFields("all") == HitFields::All());
  CHECK(ParseHitFields("none")->empty());
  CHECK(ParseHitFields("title,,body").status().IsInvalidArgument());
  CHECK(ParseHitFields("titel").status().IsInvalidArgument());
}

TEST_CASE("BM25 order keeps the candidates, flags why, and truncates to k") {
  RerankRequest req{.query = "q", .candidates = {FullHit(), FullHit()}, .k = 1};
  req.candidates[1].id = "second";
  RerankResult r = Bm25Order(req, "listwise", "server down");
  CHECK_FALSE(r.applied);
  CHECK(r.reason == "server down");
  REQUIRE(r.hits.size() == 1);
  CHECK(r.hits[0].bm25_rank == 1);
  CHECK(r.hits[0].hit.id == "smem-tiling");
}

}  // namespace
}  // namespace skilldb
