// The rollout store on SQLite (schema in rollout_store.h).
#include "skilldb/policy/rollout_store.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <sstream>

#include "json_io.h"
#include "rollout_db.h"
#include "skilldb/json.h"
#include "skilldb/util/clock.h"

namespace skilldb::policy {

using internal::Json;
using util::SqliteStatement;
using util::SqliteTable;
using util::SqliteTransaction;

namespace internal {
namespace {

const char kText[] = "TEXT NOT NULL";
const char kInt[] = "INTEGER NOT NULL";
const char kReal[] = "REAL NOT NULL";

util::SqliteSchema MakeSchema() {
  util::SqliteSchema s;
  s.store = "rollout store";
  s.version = kRolloutSchemaVersion;
  s.tables = {
      {"trajectories",
       {{"id", "TEXT PRIMARY KEY"},
        {"grp", "TEXT NOT NULL DEFAULT ''"},
        {"task", kText},
        {"backend", kText},
        {"model", kText},
        {"library_version", kInt},
        {"max_turns", kInt},
        {"samples_per_turn", kInt},
        {"started_ms", kInt},
        {"finished_ms", kInt},
        {"status", kText},
        {"error", kText},
        {"solved", kInt},
        {"turns_done", kInt},
        {"best_turn", kInt},
        {"best_sample", kInt},
        {"best_reward", kReal},
        {"best_speedup", kReal},
        {"owner", "TEXT NOT NULL DEFAULT ''"},
        {"heartbeat_ms", "INTEGER NOT NULL DEFAULT 0"}},
       "",
       ""},
      {"turns",
       {{"trajectory_id", kText},
        {"turn", kInt},
        {"query", kText},
        {"library_version", kInt},
        {"prompt_json", kText},
        {"prompt_text", kText},
        {"prompt_token_ids_json", kText},
        {"selection_json", kText},
        {"best_sample", kInt},
        {"reward", kReal},
        {"times_json", kText}},
       "PRIMARY KEY (trajectory_id, turn)",
       ""},
      {"turn_skills",
       {{"trajectory_id", kText},
        {"turn", kInt},
        {"role", kText},
        {"rank", kInt},
        {"skill_id", kText},
        {"revision", kInt},
        {"bm25_score", kReal},
        {"score", kReal}},
       "PRIMARY KEY (trajectory_id, turn, role, rank)",
       ""},
      {"samples",
       {{"trajectory_id", kText},
        {"turn", kInt},
        {"sample", kInt},
        {"verdict", kText},
        {"reward", kReal},
        {"passed", kInt},
        {"speedup", kReal},
        {"ci_low", kReal},
        {"ci_high", kReal},
        {"findings", kText},
        {"language", kText},
        {"source", kText},
        {"extraction", kText},
        {"feedback", kText},
        {"finish_reason", kText},
        {"model", kText},
        {"completion", kText},
        {"completion_token_ids_json", kText},
        {"completion_logprobs_json", kText},
        {"report_json", "TEXT"},
        {"times_json", kText}},
       "PRIMARY KEY (trajectory_id, turn, sample)",
       ""},
      {"distillations",
       {{"id", "TEXT PRIMARY KEY"},
        {"trajectory_id", kText},
        {"kind", kText},
        {"model", kText},
        {"started_ms", kInt},
        {"finished_ms", kInt},
        {"outcome", kText},
        {"skill_id", kText},
        {"version", kInt},
        {"proposal_id", kText},
        {"reasons_json", kText},
        {"candidate_json", "TEXT"},
        {"report_json", "TEXT"},
        {"generations_json", kText},
        {"errors_json", kText}},
       "",
       ""},
  };
  s.indexes = {
      "CREATE INDEX IF NOT EXISTS trajectories_task ON trajectories(task, "
      "started_ms)",
      "CREATE INDEX IF NOT EXISTS turn_skills_skill ON turn_skills(skill_id)",
      "CREATE INDEX IF NOT EXISTS distillations_trajectory ON "
      "distillations(trajectory_id)"};
  // Version 2: who writes a running trajectory, and when it last did.
  s.migrations = {
      {1,
       "ALTER TABLE trajectories ADD COLUMN owner TEXT NOT NULL DEFAULT '';"
       "ALTER TABLE trajectories ADD COLUMN heartbeat_ms INTEGER NOT NULL "
       "DEFAULT 0;"}};
  return s;
}

// Field 22 of /proc/PID/stat: the process's start time in clock ticks
// since boot ("" when unreadable).
std::string StartTime(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return field;
  }
  return "";
}

std::string HostName() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "";
  return host;
}

}  // namespace

const util::SqliteSchema& RolloutSchema() {
  static const util::SqliteSchema schema = MakeSchema();
  return schema;
}
const SqliteTable& TrajectoriesTable() { return RolloutSchema().tables[0]; }
const SqliteTable& TurnsTable() { return RolloutSchema().tables[1]; }
const SqliteTable& TurnSkillsTable() { return RolloutSchema().tables[2]; }
const SqliteTable& SamplesTable() { return RolloutSchema().tables[3]; }
const SqliteTable& DistillationsTable() { return RolloutSchema().tables[4]; }

std::string ThisProcessOwner() {
  const long pid = static_cast<long>(::getpid());
  return HostName() + ":" + std::to_string(pid) + ":" + StartTime(pid);
}

bool OwnerIsGone(const std::string& owner) {
  const size_t b = owner.rfind(':');
  if (b == std::string::npos || b == 0) return false;
  const size_t a = owner.rfind(':', b - 1);
  if (a == std::string::npos) return false;
  if (owner.substr(0, a) != HostName()) return false;
  const std::string pid_text = owner.substr(a + 1, b - a - 1);
  if (pid_text.empty() || pid_text.size() > 9 ||
      pid_text.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  const long pid = std::stol(pid_text);
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return true;
  // Alive, unless the pid was reused by a process started at another time.
  const std::string started = StartTime(pid);
  return !started.empty() && started != owner.substr(b + 1);
}

}  // namespace internal

namespace {

std::string CommaJoin(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

template <typename T>
std::string ArrayJson(const std::vector<T>& v) {
  return internal::Dump(Json(v));
}

Json ChatJson(const std::vector<ChatMessage>& chat) {
  Json out = Json::array();
  for (const ChatMessage& m : chat)
    out.push_back(Json{{"role", m.role}, {"content", m.content}});
  return out;
}

double SpeedupOf(const SampleRecord* s) {
  return s != nullptr && s->report ? s->report->speedup.ratio : 0.0;
}

Json DistillationJson(const DistillationRecord& r) {
  Json gens = Json::array();
  for (const GenerationRecord& g : r.generations)
    gens.push_back(Json::parse(skilldb::ToJson(g), nullptr, false));
  Json j{{"id", r.id},
         {"trajectory_id", r.trajectory_id},
         {"kind", r.kind},
         {"model", r.model},
         {"started_ms", r.started_ms},
         {"finished_ms", r.finished_ms},
         {"outcome", r.outcome},
         {"skill_id", r.skill_id},
         {"version", r.version},
         {"proposal_id", r.proposal_id},
         {"reasons", r.reasons},
         {"errors", r.errors},
         {"generations", gens}};
  j["candidate"] = r.candidate_json.empty()
                       ? Json()
                       : Json::parse(r.candidate_json, nullptr, false);
  j["report"] = r.report_json.empty()
                    ? Json()
                    : Json::parse(r.report_json, nullptr, false);
  return j;
}

}  // namespace

std::string ToJson(const DistillationRecord& record) {
  return internal::Dump(DistillationJson(record));
}

std::string DefaultRolloutPath(std::string_view library_path) {
  return util::SidecarPath(library_path, ".rollouts.sqlite");
}

RolloutStore::RolloutStore(std::string path, std::unique_ptr<Db> db,
                           bool read_only)
    : path_(std::move(path)), read_only_(read_only), db_(std::move(db)) {}

RolloutStore::~RolloutStore() = default;

Result<std::unique_ptr<RolloutStore>> RolloutStore::Open(
    std::string_view path, const RolloutStoreOptions& options) {
  auto db = std::make_unique<Db>();
  SKILLDB_ASSIGN_OR_RETURN(
      db->sql, util::SqliteDb::Open(
                   path, internal::RolloutSchema(),
                   {.read_only = options.read_only,
                    .create = options.create,
                    .busy_timeout_ms = options.busy_timeout_ms}));
  auto store = std::unique_ptr<RolloutStore>(
      new RolloutStore(std::string(path), std::move(db), options.read_only));
  if (!options.read_only) {
    SKILLDB_RETURN_IF_ERROR(store->MarkInterruptedLocked());
  }
  return store;
}

// Rows left "running" by a process of this host that is gone (killed, or
// crashed) become "interrupted": no one will ever finish them.
Status RolloutStore::MarkInterruptedLocked() {
  const util::SqliteDb& sql = *db_->sql;
  const std::string ctx = "marking interrupted trajectories in " + sql.name();
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement running,
      sql.Prepare("SELECT id, owner FROM trajectories WHERE status = "
                  "'running' AND owner != ''",
                  ctx));
  std::vector<std::string> gone;
  while (true) {
    SKILLDB_ASSIGN_OR_RETURN(bool row, running.Step(ctx));
    if (!row) break;
    if (internal::OwnerIsGone(running.ColText(1))) {
      gone.push_back(running.ColText(0));
    }
  }
  if (gone.empty()) return Status::Ok();
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement mark,
      sql.Prepare("UPDATE trajectories SET status = 'interrupted', error = "
                  "?2, finished_ms = heartbeat_ms WHERE id = ?1 AND status = "
                  "'running'",
                  ctx));
  for (const std::string& id : gone) {
    SKILLDB_RETURN_IF_ERROR(
        mark.Reset().Text(1, id).Text(2, kInterruptedError).Run(ctx));
  }
  return Status::Ok();
}

Status RolloutStore::WriteHeaderLocked(const Trajectory& t, bool insert) {
  const SqliteTable& table = internal::TrajectoriesTable();
  std::string sql;
  if (insert) {
    sql = table.Insert();
  } else {
    // Every column but the key and the owner, bound by the same numbers as
    // the insert's.
    sql = "UPDATE trajectories SET ";
    for (size_t i = 1; i < table.columns.size(); ++i) {
      if (table.columns[i].name == "owner") continue;
      sql += (sql.back() == ' ' ? "" : ", ") + table.columns[i].name + " = ?" +
             std::to_string(i + 1);
    }
    sql += " WHERE id = ?1";
  }
  const std::string ctx = "writing trajectory " + t.id;
  SKILLDB_ASSIGN_OR_RETURN(SqliteStatement s, db_->sql->Prepare(sql, ctx));
  const SampleRecord* best = BestSample(t);
  s.Text(1, t.id).Text(2, t.group).Text(3, t.task).Text(4, t.backend);
  s.Text(5, t.model).Int(6, static_cast<int64_t>(t.library_version));
  s.Int(7, t.max_turns).Int(8, t.samples_per_turn).Int(9, t.started_ms);
  s.Int(10, t.finished_ms);
  const bool running = t.finished_ms == 0 && t.status == "finished";
  s.Text(11, running ? "running" : t.status).Text(12, t.error);
  s.Int(13, t.solved).Int(14, static_cast<int64_t>(t.turns.size()));
  s.Int(15, t.best_turn).Int(16, t.best_sample);
  s.Real(17, best ? best->reward : 0.0).Real(18, SpeedupOf(best));
  s.Text(19, internal::ThisProcessOwner()).Int(20, util::NowUnixMs());
  SKILLDB_RETURN_IF_ERROR(s.Run(ctx));
  if (!insert && db_->sql->Changes() == 0) {
    return Status::NotFound("trajectory '" + t.id + "' was never begun");
  }
  return Status::Ok();
}

Status RolloutStore::WriteTurnLocked(const Trajectory& t,
                                     const TurnRecord& turn) {
  const util::SqliteDb& sql = *db_->sql;
  const std::string ctx =
      "writing turn " + std::to_string(turn.turn) + " of trajectory " + t.id;
  const GenerationRecord empty;
  const GenerationRecord& g =
      turn.samples.empty() ? empty : turn.samples.front().generation;
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement tr,
      sql.Prepare(internal::TurnsTable().Insert("INSERT OR REPLACE"), ctx));
  tr.Text(1, t.id).Int(2, turn.turn).Text(3, turn.selection.query);
  tr.Int(4, static_cast<int64_t>(turn.selection.library_version));
  tr.Text(5, internal::Dump(ChatJson(g.prompt))).Text(6, g.prompt_text);
  tr.Text(7, ArrayJson(g.prompt_token_ids)).Text(8, ToJson(turn.selection));
  tr.Int(9, turn.best_sample)
      .Real(10, turn.reward)
      .Text(11, ToJson(turn.times));
  SKILLDB_RETURN_IF_ERROR(tr.Run(ctx));
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement del,
      sql.Prepare("DELETE FROM turn_skills WHERE trajectory_id = ?1 AND "
                  "turn = ?2",
                  ctx));
  SKILLDB_RETURN_IF_ERROR(del.Text(1, t.id).Int(2, turn.turn).Run(ctx));
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement sk,
      sql.Prepare(internal::TurnSkillsTable().Insert(), ctx));
  for (const char* role : {"retrieved", "selected"}) {
    const auto& refs = std::string_view(role) == "retrieved"
                           ? turn.selection.retrieved
                           : turn.selection.selected;
    for (size_t i = 0; i < refs.size(); ++i) {
      sk.Reset().Text(1, t.id).Int(2, turn.turn).Text(3, role);
      sk.Int(4, static_cast<int64_t>(i + 1)).Text(5, refs[i].id);
      sk.Int(6, static_cast<int64_t>(refs[i].revision));
      sk.Real(7, refs[i].bm25_score).Real(8, refs[i].score);
      SKILLDB_RETURN_IF_ERROR(sk.Run(ctx));
    }
  }
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement sm,
      sql.Prepare(internal::SamplesTable().Insert("INSERT OR REPLACE"), ctx));
  for (const SampleRecord& s : turn.samples) {
    const VerificationReport* r = s.report ? &*s.report : nullptr;
    sm.Reset().Text(1, t.id).Int(2, turn.turn).Int(3, s.index);
    sm.Text(4, SampleVerdictName(s.verdict)).Real(5, s.reward);
    sm.Int(6, r && r->passed).Real(7, r ? r->speedup.ratio : 0.0);
    sm.Real(8, r ? r->speedup.ci_low : 0.0)
        .Real(9, r ? r->speedup.ci_high : 0.0);
    sm.Text(10, CommaJoin(s.findings)).Text(11, s.language).Text(12, s.source);
    sm.Text(13, s.extraction).Text(14, s.feedback).Text(15, s.finish_reason);
    sm.Text(16, s.generation.model).Text(17, s.generation.completion);
    sm.Text(18, ArrayJson(s.generation.completion_token_ids));
    sm.Text(19, ArrayJson(s.generation.completion_logprobs));
    if (r) {
      sm.Text(20, ReportToJson(*r));
    } else {
      sm.Null(20);
    }
    sm.Text(21, ToJson(s.times));
    SKILLDB_RETURN_IF_ERROR(sm.Run(ctx));
  }
  return Status::Ok();
}

Status RolloutStore::BeginTrajectory(const Trajectory& t) {
  if (read_only_)
    return Status::FailedPrecondition("rollout store is read-only");
  std::lock_guard<std::mutex> lock(mu_);
  return WriteHeaderLocked(t, /*insert=*/true);
}

Status RolloutStore::AppendTurn(const Trajectory& t, const TurnRecord& turn) {
  if (read_only_)
    return Status::FailedPrecondition("rollout store is read-only");
  std::lock_guard<std::mutex> lock(mu_);
  SqliteTransaction tx(*db_->sql);
  SKILLDB_RETURN_IF_ERROR(tx.Begin());
  SKILLDB_RETURN_IF_ERROR(WriteHeaderLocked(t, /*insert=*/false));
  SKILLDB_RETURN_IF_ERROR(WriteTurnLocked(t, turn));
  return tx.Commit();
}

Status RolloutStore::FinishTrajectory(const Trajectory& t) {
  if (read_only_)
    return Status::FailedPrecondition("rollout store is read-only");
  std::lock_guard<std::mutex> lock(mu_);
  SqliteTransaction tx(*db_->sql);
  SKILLDB_RETURN_IF_ERROR(tx.Begin());
  SKILLDB_RETURN_IF_ERROR(WriteHeaderLocked(t, /*insert=*/false));
  // A turn's times are final only after it was stored (its usage is
  // recorded in the library once the turn is safe in the store).
  const std::string ctx = "finishing trajectory " + t.id;
  if (t.turns.empty()) return tx.Commit();
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement times,
      db_->sql->Prepare("UPDATE turns SET times_json = ?3 WHERE "
                        "trajectory_id = ?1 AND turn = ?2",
                        ctx));
  for (const TurnRecord& turn : t.turns) {
    SKILLDB_RETURN_IF_ERROR(times.Reset()
                                .Text(1, t.id)
                                .Int(2, turn.turn)
                                .Text(3, ToJson(turn.times))
                                .Run(ctx));
  }
  return tx.Commit();
}

Status RolloutStore::PutTrajectory(const Trajectory& t) {
  if (read_only_)
    return Status::FailedPrecondition("rollout store is read-only");
  std::lock_guard<std::mutex> lock(mu_);
  SqliteTransaction tx(*db_->sql);
  SKILLDB_RETURN_IF_ERROR(tx.Begin());
  const std::string ctx = "replacing trajectory " + t.id;
  for (const char* sql : {"DELETE FROM trajectories WHERE id = ?1",
                          "DELETE FROM turns WHERE trajectory_id = ?1",
                          "DELETE FROM turn_skills WHERE trajectory_id = ?1",
                          "DELETE FROM samples WHERE trajectory_id = ?1"}) {
    SKILLDB_ASSIGN_OR_RETURN(SqliteStatement del, db_->sql->Prepare(sql, ctx));
    SKILLDB_RETURN_IF_ERROR(del.Text(1, t.id).Run(ctx));
  }
  SKILLDB_RETURN_IF_ERROR(WriteHeaderLocked(t, /*insert=*/true));
  for (const TurnRecord& turn : t.turns) {
    SKILLDB_RETURN_IF_ERROR(WriteTurnLocked(t, turn));
  }
  return tx.Commit();
}

}  // namespace skilldb::policy
