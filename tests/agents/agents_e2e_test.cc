// The agents end to end, through the CLI: `skilldb solve`, `rollouts`,
// `distill`. Only the LLM is scripted (the scripted protocol server of
// tests/llm_server, answered over HTTP by the real OpenAI-compatible client
// with the team's own candidates from verify/tasks); retrieval (the engine
// over the seed library), verification (the host backend), the rollout
// store and the audit log are real.
#include <doctest/doctest.h>

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "agents_test_util.h"
#include "cli_util.h"
#include "scripted_llm_server.h"
#include "skilldb/policy/rollout_store.h"
#include "trajectory_fixture.h"

namespace skilldb::agents_e2e {
namespace {

using Json = nlohmann::json;
using policy::testing::CandidateSource;
using policy::testing::Fenced;
using scripted::Endpoint;
using scripted::ScriptedLlmServer;
using scripted::ScriptedReply;
using scripted::TextReply;

constexpr char kNoCompile[] =
    "extern \"C\" int launch(const Tensor* in, int, Tensor* out, int, void*) "
    "{\n  return undeclared_identifier_42;\n}\n";

// What the scripted Skill Summary Agent answers for the matmul_fp32
// rollout: the loop-order technique of the team's fast host kernel (i-k-j)
// in general form, which is also what makes its fast sum_dim1_fp32 kernel
// fast.
std::string SkillAnswer() {
  Json j{
      {"title",
       "Loop order for row-major accumulation: keep the innermost "
       "loop on contiguous memory"},
      {"summary",
       "Reorder nested loops so the innermost loop streams a "
       "contiguous row of inputs into a row of output accumulators "
       "(matmul i-k-j, strided reductions)."},
      {"body",
       "## When to use\nA loop nest over row-major float32 inputs whose "
       "innermost loop strides through memory: a reduction over a middle "
       "dimension, or a matmul written i-j-k.\n\n## How\nMake the innermost "
       "loop run over the contiguous dimension: keep a row of output "
       "accumulators and add whole input rows into it (for matmul, hoist "
       "A[i][k] and accumulate C[i][:] += A[i][k] * B[k][:]). Loads become "
       "sequential and the compiler vectorizes the inner loop.\n\n## "
       "Pitfalls\nZero the output row before accumulating; the summation "
       "order changes, so check the tolerance on large inputs.\n\n## How to "
       "tell it worked\nThe verified speedup grows with the row length and "
       "the inner loop is vectorized (-fopt-info-vec)."},
      {"code",
       "for (k = 0; k < K; ++k) {\n  const float a = A[i * K + k];\n"
       "  for (j = 0; j < N; ++j) out[j] += a * B[k * N + j];\n}"},
      {"tags", {"loop-order", "accumulation", "memory-order", "vectorization"}},
      {"ops", {"reduction", "matmul"}},
      {"arch", Json::array()}};
  return "```json\n" + j.dump(2) + "\n```";
}

// A library of the seed skills, a scripted server and the CLI's flags.
struct World {
  skilldb::testing::TempDir dir;
  std::string home = dir.Sub("home");
  std::string db = dir.Sub("lib");
  std::string rollouts = dir.Sub("rollouts.sqlite");
  std::unique_ptr<ScriptedLlmServer> server;

  World() {
    std::filesystem::create_directories(home);
    Options o;
    o.create_if_missing = true;
    o.field_weights = kSkillLibraryWeights;  // as the default library
    {
      auto lib = Library::Open(o, db);
      REQUIRE(lib.ok());
      REQUIRE((*lib)->PutMany(policy::testing::SeedSkills()).ok());
    }  // closed: distill needs the write lock
    scripted::ServerOptions so;
    so.protocol.max_model_len = 65536;
    auto s = ScriptedLlmServer::Start(so);
    REQUIRE(s.ok());
    server = std::move(*s);
  }

  skilldb::testing::Run Cli(std::vector<std::string> args, bool json = true) {
    // The agents' subcommands take the store's path (unless the test gives
    // its own); the others do not.
    const bool agents =
        args[0] == "solve" || args[0] == "rollouts" || args[0] == "distill";
    const bool own_store =
        std::find(args.begin(), args.end(), "--rollouts") != args.end();
    if (agents && !own_store) args.insert(args.end(), {"--rollouts", rollouts});
    args.insert(args.begin(), {"--db", db});
    if (json) args.insert(args.begin(), "--json");
    return skilldb::testing::Cli(
        home, args, "",
        {"SKILLDB_VERIFY_CACHE=" + policy::testing::HostOptions().cache_dir});
  }
  // As a person runs it: human output.
  skilldb::testing::Run Human(std::vector<std::string> args) {
    return Cli(std::move(args), /*json=*/false);
  }
  std::vector<std::string> Llm() {
    return {"--llm-url", server->base_url(), "--llm-model", "scripted-model",
            "--llm-token-ids"};
  }
  skilldb::testing::Run Solve(std::vector<std::string> args,
                              bool json = true) {
    args.insert(args.begin(), "solve");
    for (const std::string& a : Llm()) args.push_back(a);
    for (const char* a : {"--backend", "host", "--workers", "2"})
      args.push_back(a);
    return Cli(args, json);
  }
  std::vector<std::string> ChatBodies() const {
    std::vector<std::string> out;
    for (const auto& r : server->Requests()) {
      if (r.endpoint == Endpoint::kChat) out.push_back(r.body);
    }
    return out;
  }
};

Json Parse(const skilldb::testing::Run& r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  Json j = Json::parse(r.out, nullptr, false);
  REQUIRE(!j.is_discarded());
  return j;
}

bool Contains(const Json& array, const std::string& value) {
  for (const Json& v : array) {
    if (v == value) return true;
  }
  return false;
}

TEST_CASE(
    "a host task is solved in two turns, distilled into a verified skill, and "
    "that skill is retrieved for a similar task") {
  World w;
  const std::string fast = CandidateSource("matmul_fp32", "fast.cc");
  w.server->Add(TextReply({Fenced(kNoCompile)}));
  w.server->Add(TextReply({"I reorder the loops to i-k-j.\n" + Fenced(fast)}));

  auto solved = w.Solve({"--task", "matmul_fp32", "--turns", "3"});
  Json t = Parse(solved);
  INFO(solved.out << solved.err);
  REQUIRE(solved.code == 0);
  CHECK(t["solved"] == true);
  REQUIRE(t["turns"].size() == 2);
  CHECK(t["turns"][0]["verdicts"] == Json::array({"compile_error"}));
  CHECK(t["turns"][1]["verdicts"] == Json::array({"faster"}));
  CHECK(t["best"]["source"] == fast + "\n");
  CHECK(t["report"]["passed"] == true);
  CHECK(t["best"]["speedup"].get<double>() > 1.05);
  const std::string id = t["trajectory_id"];
  // The second prompt carried the compiler's words back to the model.
  const std::vector<std::string> chats = w.ChatBodies();
  REQUIRE(chats.size() == 2);
  CHECK(chats[0].find("undeclared_identifier_42") == std::string::npos);
  CHECK(chats[1].find("undeclared_identifier_42") != std::string::npos);

  // The store kept the model calls with their token ids.
  auto shown = w.Cli({"rollouts", "show", id});
  REQUIRE(shown.code == 0);
  Json stored = Parse(shown);
  const Json& gen = stored["turns"][1]["samples"][0]["generation"];
  CHECK(!gen["completion_token_ids"].empty());
  CHECK(!gen["prompt_token_ids"].empty());
  CHECK(stored["turns"][1]["samples"][0]["reward"].get<double>() > 1.0);

  // Distilled: validated, re-verified, committed, with lineage and
  // provenance.
  w.server->Add(TextReply({SkillAnswer()}));
  auto distilled =
      w.Cli({"distill", id, w.Llm()[0], w.Llm()[1], w.Llm()[2], w.Llm()[3]});
  Json d = Parse(distilled);
  INFO(distilled.out << distilled.err);
  REQUIRE(distilled.code == 0);
  CHECK(d["outcome"] == "accepted");
  const std::string skill_id = d["skill_id"];
  auto skill = Parse(w.Cli({"show", skill_id}));
  CHECK(skill["skill"]["provenance"]["source"] == "summary-agent");
  CHECK(skill["skill"]["provenance"]["rollout_id"] == id);
  CHECK(skill["skill"]["provenance"]["task_id"] == "matmul_fp32");
  CHECK(skill["skill"]["lineage"]["derived_from"] == t["turns"][1]["selected"]);
  REQUIRE(skill["skill"]["evidence"].size() == 1);
  auto audit = Parse(w.Cli({"audit"}));
  REQUIRE(audit.is_array());
  CHECK(audit.back()["event"] == "accepted");
  CHECK(audit.back()["skill_id"] == skill_id);

  // The next solve of a similar task (a reduction along a strided middle
  // dimension, where the same loop order is what helps) retrieves it and
  // shows it to the model.
  w.server->Add(TextReply({"No code this time."}));
  auto next = w.Solve({"--task", "sum_dim1_fp32", "--turns", "1"});
  Json n = Parse(next);
  CHECK(next.code == 1);  // not solved: the scripted model wrote no code
  CHECK(n["turns"][0]["verdicts"] == Json::array({"no_code"}));
  CHECK(Contains(n["turns"][0]["selected"], skill_id));
  CHECK(w.ChatBodies().back().find("Loop order for row-major accumulation") !=
        std::string::npos);
}

// The generic reward hack that scribbles over its input, instantiated for
// `task` as the verifier's own tests instantiate it.
std::string ModifyInputsHack(const std::string& task) {
  policy::PolicyTask t = policy::testing::HostTask(task);
  auto all = verify::LoadCandidates(policy::testing::HostOptions().task_dir,
                                    t.task, verify::SourceLanguage::kCpp);
  REQUIRE(all.ok());
  for (const verify::Candidate& c : *all) {
    if (c.spec.name == "hack_modify_inputs") return c.source;
  }
  FAIL("no hack_modify_inputs template");
  return "";
}

TEST_CASE(
    "bad model output ends in the right verdicts, and the failed rollout "
    "leaves pitfall notes") {
  World w;
  std::string renamed = CandidateSource("softmax_rows_fp32", "fast.cc");
  renamed.replace(renamed.find("launch("), 6, "softmax_launch");
  w.server->Add(
      TextReply({"I am not able to write this kernel.", Fenced(renamed),
                 Fenced(ModifyInputsHack("softmax_rows_fp32"))}));
  auto solved = w.Solve(
      {"--task", "softmax_rows_fp32", "--turns", "1", "--samples", "3"});
  Json t = Parse(solved);
  INFO(solved.out << solved.err);
  CHECK(solved.code == 1);
  CHECK(t["status"] == "finished");
  CHECK(t["solved"] == false);
  CHECK(t["turns"][0]["verdicts"] ==
        Json::array({"no_code", "load_error", "hack"}));
  CHECK(t["turns"][0]["reward"] == 0.0);
  const std::string id = t["trajectory_id"];

  auto listed =
      Parse(w.Cli({"rollouts", "list", "--task", "softmax_rows_fp32"}));
  REQUIRE(listed.size() == 1);
  CHECK(listed[0]["id"] == id);
  auto exported = w.Cli({"rollouts", "export", "--format", "generations"});
  REQUIRE(exported.code == 0);
  size_t lines = 0;
  std::istringstream in(exported.out);
  for (std::string line; std::getline(in, line);) {
    Json j = Json::parse(line, nullptr, false);
    REQUIRE(!j.is_discarded());
    CHECK(j["agent"] == "policy");
    CHECK(!j["completion_token_ids"].empty());
    ++lines;
  }
  CHECK(lines == 3);

  // distill on a failed trajectory annotates the skills it used.
  const std::string used = t["turns"][0]["selected"][0];
  const std::string note =
      "A kernel renamed its entry point: the protocol needs extern C launch.";
  w.server->Add(TextReply({"{\"notes\": [{\"skill_id\": \"" + used +
                           "\", \"note\": \"" + note + "\"}]}"}));
  const std::vector<std::string> llm = w.Llm();
  auto distilled = w.Cli({"distill", id, llm[0], llm[1], llm[2], llm[3]});
  Json d = Parse(distilled);
  INFO(distilled.out << distilled.err);
  CHECK(distilled.code == 0);
  CHECK(d["kind"] == "pitfalls");
  CHECK(d["outcome"] == "attached");
  auto skill = Parse(w.Cli({"show", used}));
  const std::string extra = skill["skill"]["extra"].dump();
  CHECK(extra.find(note) != std::string::npos);
  CHECK(extra.find("\"unverified\":true") != std::string::npos);

  // Answers that hold no notes: the human output says why each was
  // refused, not only --json.
  for (int i = 0; i < 3; ++i) w.server->Add(TextReply({"No notes today."}));
  std::vector<std::string> again = {"distill", id};
  again.insert(again.end(), llm.begin(), llm.begin() + 4);
  auto refused = w.Human(again);
  INFO(refused.out << refused.err);
  CHECK(refused.code == 1);
  CHECK(refused.out.find("invalid") != std::string::npos);
  CHECK(refused.out.find("attempt 1: ") != std::string::npos);
  CHECK(refused.out.find("attempt 3: ") != std::string::npos);
}

TEST_CASE(
    "the pool runs several tasks at once and reports per-task results and "
    "throughput") {
  World w;
  for (const char* task : {"sum_dim1_fp32", "softmax_rows_fp32"}) {
    ScriptedReply r = TextReply({Fenced(CandidateSource(task, "wrong.cc"))});
    r.prompt_contains = std::string("Task `") + task + "`";
    r.times = -1;
    w.server->Add(r);
  }
  auto run = w.Solve({"--tasks", "sum_dim1_fp32,softmax_rows_fp32", "--turns",
                      "1", "--samples", "2", "--rollouts-per-task", "2"});
  Json out = Parse(run);
  INFO(run.out << run.err);
  // Nothing was sped up: 1, as `solve --task T` says for one task.
  CHECK(run.code == 1);
  REQUIRE(out["tasks"].size() == 2);
  CHECK(out["tasks"][0]["task"] == "sum_dim1_fp32");
  CHECK(out["tasks"][0]["trajectories"].size() == 2);
  CHECK(out["tasks"][0]["solved"] == 0);
  const Json& pool = out["pool"];
  CHECK(pool["jobs"] == 4);
  CHECK(pool["turns"] == 4);
  CHECK(pool["samples"] == 8);
  CHECK(pool["verified"] == 8);
  CHECK(pool["workers"] == 2);
  CHECK(pool["turns_per_minute"].get<double>() > 0);
  CHECK(w.server->MaxConcurrent() >= 1);
  auto listed = Parse(w.Cli({"rollouts", "list"}));
  CHECK(listed.size() == 4);
}

TEST_CASE(
    "solve refuses contradictory or missing task flags with a user error") {
  World w;
  CHECK(w.Solve({}).code == 1);
  CHECK(w.Solve({"--task", "a", "--tasks", "b,c"}).code == 1);
  auto unknown = w.Solve({"--task", "no_such_task"});
  CHECK(unknown.code == 1);
  CHECK(unknown.err.find("no_such_task") != std::string::npos);
  // The task is checked before anything is created: no store appears.
  CHECK_FALSE(std::filesystem::exists(w.rollouts));
  CHECK(w.Cli({"rollouts", "show", "t-none"}).code == 1);
}

TEST_CASE("distill of a store that does not exist creates none") {
  World w;
  const std::string typo = w.dir.Sub("typo.sqlite");
  auto run = w.Cli({"distill", "t-1", "--rollouts", typo});
  CHECK(run.code == 1);
  CHECK(run.err.find("no rollout store") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(typo));
}

TEST_CASE("solve prints the model's kernel and the compiler's log escaped") {
  World w;
  // A kernel whose comment and compile error carry terminal escapes.
  const std::string evil =
      "// \x1b]0;owned\x07\x1b[2J\n" + std::string(kNoCompile) +
      "int broken = \"\x1b[31m\";\n";
  w.server->Add(TextReply({Fenced(evil)}));
  auto solved = w.Solve({"--task", "sum_dim1_fp32", "--turns", "1"},
                        /*json=*/false);
  INFO(solved.out << solved.err);
  CHECK(solved.code == 1);
  CHECK(solved.out.find("undeclared_identifier_42") != std::string::npos);
  for (const std::string* text : {&solved.out, &solved.err}) {
    CHECK(text->find('\x1b') == std::string::npos);
    CHECK(text->find('\x07') == std::string::npos);
  }
  auto listed = Parse(w.Cli({"rollouts", "list"}));
  REQUIRE(listed.size() == 1);
  auto shown = w.Human({"rollouts", "show", listed[0]["id"]});
  CHECK(shown.code == 0);
  CHECK(shown.out.find('\x1b') == std::string::npos);
}

TEST_CASE("an unreachable model is reported on stderr and exits 1") {
  World w;
  w.server->Stop();
  auto solved = w.Solve(
      {"--task", "sum_dim1_fp32", "--turns", "1", "--llm-retries", "0"},
      /*json=*/false);
  INFO(solved.out << solved.err);
  CHECK(solved.code == 1);
  CHECK(solved.err.find("error: trajectory") != std::string::npos);
  CHECK(solved.err.find("failed") != std::string::npos);
}

TEST_CASE("an API key a server echoes is never printed, stored or exported") {
  World w;
  const std::string key = "sk-test-0123456789abcdef";
  ScriptedReply echo = scripted::RawReply(
      401, "{\"error\": {\"message\": \"bad key " + key + "\"}}");
  echo.times = -1;
  w.server->Add(echo);
  auto solved = w.Solve({"--task", "sum_dim1_fp32", "--turns", "1",
                         "--llm-key", key, "--llm-retries", "0"},
                        /*json=*/false);
  INFO(solved.out << solved.err);
  CHECK(solved.code == 1);
  CHECK(solved.out.find(key) == std::string::npos);
  CHECK(solved.err.find(key) == std::string::npos);
  CHECK(solved.err.find("[redacted]") != std::string::npos);
  CHECK(policy::testing::ReadFileText(w.rollouts).find(key) ==
        std::string::npos);
  auto exported = w.Cli({"rollouts", "export"});
  CHECK(exported.code == 0);
  CHECK(exported.out.find(key) == std::string::npos);
}

TEST_CASE("a rollout store with another layout is an error, never a crash") {
  World w;
  {
    auto store = policy::RolloutStore::Open(w.rollouts);
    REQUIRE(store.ok());
    REQUIRE((*store)->PutTrajectory(policy::testing::FixtureTrajectory()).ok());
  }
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(w.rollouts.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db,
                       "DROP TABLE samples; CREATE TABLE samples(trajectory_id "
                       "TEXT, turn INTEGER, verdict TEXT)",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  for (const char* action : {"show", "export"}) {
    CAPTURE(action);
    std::vector<std::string> args = {"rollouts", action};
    if (std::string(action) == "show") {
      args.push_back(policy::testing::FixtureTrajectory().id);
    }
    auto run = w.Cli(args);
    CHECK(run.code == 2);  // was 139
    CHECK(run.err.find("table 'samples'") != std::string::npos);
  }
}

}  // namespace
}  // namespace skilldb::agents_e2e
