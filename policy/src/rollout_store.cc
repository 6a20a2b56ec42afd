// The rollout store on SQLite (schema in rollout_store.h).
#include "skilldb/policy/rollout_store.h"

#include <filesystem>

#include "json_io.h"
#include "rollout_db.h"
#include "skilldb/json.h"

namespace skilldb::policy {

using internal::Json;
using internal::Stmt;
using internal::Transaction;

namespace {

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trajectories(
  id TEXT PRIMARY KEY, grp TEXT NOT NULL DEFAULT '', task TEXT NOT NULL,
  backend TEXT NOT NULL, model TEXT NOT NULL, library_version INTEGER NOT NULL,
  max_turns INTEGER NOT NULL, samples_per_turn INTEGER NOT NULL,
  started_ms INTEGER NOT NULL, finished_ms INTEGER NOT NULL,
  status TEXT NOT NULL, error TEXT NOT NULL, solved INTEGER NOT NULL,
  turns_done INTEGER NOT NULL, best_turn INTEGER NOT NULL,
  best_sample INTEGER NOT NULL, best_reward REAL NOT NULL,
  best_speedup REAL NOT NULL);
CREATE INDEX IF NOT EXISTS trajectories_task ON trajectories(task, started_ms);
CREATE TABLE IF NOT EXISTS turns(
  trajectory_id TEXT NOT NULL, turn INTEGER NOT NULL, query TEXT NOT NULL,
  library_version INTEGER NOT NULL, prompt_json TEXT NOT NULL,
  prompt_text TEXT NOT NULL, prompt_token_ids_json TEXT NOT NULL,
  selection_json TEXT NOT NULL, best_sample INTEGER NOT NULL,
  reward REAL NOT NULL, times_json TEXT NOT NULL,
  PRIMARY KEY (trajectory_id, turn));
CREATE TABLE IF NOT EXISTS turn_skills(
  trajectory_id TEXT NOT NULL, turn INTEGER NOT NULL, role TEXT NOT NULL,
  rank INTEGER NOT NULL, skill_id TEXT NOT NULL, revision INTEGER NOT NULL,
  bm25_score REAL NOT NULL, score REAL NOT NULL,
  PRIMARY KEY (trajectory_id, turn, role, rank));
CREATE INDEX IF NOT EXISTS turn_skills_skill ON turn_skills(skill_id);
CREATE TABLE IF NOT EXISTS samples(
  trajectory_id TEXT NOT NULL, turn INTEGER NOT NULL, sample INTEGER NOT NULL,
  verdict TEXT NOT NULL, reward REAL NOT NULL, passed INTEGER NOT NULL,
  speedup REAL NOT NULL, ci_low REAL NOT NULL, ci_high REAL NOT NULL,
  findings TEXT NOT NULL, language TEXT NOT NULL, source TEXT NOT NULL,
  extraction TEXT NOT NULL, feedback TEXT NOT NULL,
  finish_reason TEXT NOT NULL, model TEXT NOT NULL, completion TEXT NOT NULL,
  completion_token_ids_json TEXT NOT NULL,
  completion_logprobs_json TEXT NOT NULL, report_json TEXT,
  times_json TEXT NOT NULL,
  PRIMARY KEY (trajectory_id, turn, sample));
CREATE TABLE IF NOT EXISTS distillations(
  id TEXT PRIMARY KEY, trajectory_id TEXT NOT NULL, kind TEXT NOT NULL,
  model TEXT NOT NULL, started_ms INTEGER NOT NULL,
  finished_ms INTEGER NOT NULL, outcome TEXT NOT NULL, skill_id TEXT NOT NULL,
  version INTEGER NOT NULL, proposal_id TEXT NOT NULL,
  reasons_json TEXT NOT NULL, candidate_json TEXT, report_json TEXT,
  generations_json TEXT NOT NULL, errors_json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS distillations_trajectory
  ON distillations(trajectory_id);
)sql";

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
  std::string p(library_path);
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p + ".rollouts.sqlite";
}

RolloutStore::RolloutStore(std::string path, std::unique_ptr<Db> db,
                           bool read_only)
    : path_(std::move(path)), read_only_(read_only), db_(std::move(db)) {}

RolloutStore::~RolloutStore() = default;

Result<std::unique_ptr<RolloutStore>> RolloutStore::Open(
    std::string_view path, const RolloutStoreOptions& options) {
  const std::string p(path);
  std::error_code ec;
  if (options.read_only && !std::filesystem::exists(p, ec)) {
    return Status::NotFound("no rollout store at '" + p + "'");
  }
  auto db = std::make_unique<Db>();
  const int flags =
      (options.read_only ? SQLITE_OPEN_READONLY
                         : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
      SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(p.c_str(), &db->handle, flags, nullptr) != SQLITE_OK) {
    return internal::SqliteError(db->handle,
                                 "opening rollout store '" + p + "'");
  }
  sqlite3_busy_timeout(db->handle, options.busy_timeout_ms);
  const std::string ctx = "rollout store '" + p + "'";
  if (!options.read_only) {
    SKILLDB_RETURN_IF_ERROR(internal::Exec(
        db->handle, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        ctx));
    SKILLDB_RETURN_IF_ERROR(internal::Exec(db->handle, kSchema, ctx));
    Stmt meta(
        db->handle,
        "INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', ?)");
    SKILLDB_RETURN_IF_ERROR(
        meta.Text(1, std::to_string(kRolloutSchemaVersion)).Run(ctx));
  }
  Stmt version(db->handle,
               "SELECT value FROM meta WHERE key = 'schema_version'");
  SKILLDB_ASSIGN_OR_RETURN(bool row, version.Step(ctx));
  if (!row) return Status::Corruption(ctx + " has no schema version");
  if (std::stoll("0" + version.ColText(0)) > kRolloutSchemaVersion) {
    return Status::FailedPrecondition(
        ctx + " has schema version " + version.ColText(0) +
        ", newer than this build's " + std::to_string(kRolloutSchemaVersion));
  }
  return std::unique_ptr<RolloutStore>(
      new RolloutStore(p, std::move(db), options.read_only));
}

Status RolloutStore::WriteHeaderLocked(const Trajectory& t, bool insert) {
  const SampleRecord* best = BestSample(t);
  const char* sql =
      insert ? "INSERT INTO trajectories(grp, task, backend, model, "
               "library_version, max_turns, samples_per_turn, started_ms, "
               "finished_ms, status, error, solved, turns_done, best_turn, "
               "best_sample, best_reward, best_speedup, id) "
               "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
             : "UPDATE trajectories SET grp=?, task=?, backend=?, model=?, "
               "library_version=?, max_turns=?, samples_per_turn=?, "
               "started_ms=?, finished_ms=?, status=?, error=?, solved=?, "
               "turns_done=?, best_turn=?, best_sample=?, best_reward=?, "
               "best_speedup=? WHERE id=?";
  Stmt s(db_->handle, sql);
  s.Text(1, t.group).Text(2, t.task).Text(3, t.backend).Text(4, t.model);
  s.Int(5, static_cast<int64_t>(t.library_version)).Int(6, t.max_turns);
  s.Int(7, t.samples_per_turn).Int(8, t.started_ms).Int(9, t.finished_ms);
  const bool running = t.finished_ms == 0 && t.status == "finished";
  s.Text(10, running ? "running" : t.status).Text(11, t.error);
  s.Int(12, t.solved).Int(13, static_cast<int64_t>(t.turns.size()));
  s.Int(14, t.best_turn).Int(15, t.best_sample);
  s.Real(16, best ? best->reward : 0.0).Real(17, SpeedupOf(best));
  s.Text(18, t.id);
  SKILLDB_RETURN_IF_ERROR(s.Run("writing trajectory " + t.id));
  if (!insert && sqlite3_changes(db_->handle) == 0) {
    return Status::NotFound("trajectory '" + t.id + "' was never begun");
  }
  return Status::Ok();
}

Status RolloutStore::WriteTurnLocked(const Trajectory& t,
                                     const TurnRecord& turn) {
  const std::string ctx =
      "writing turn " + std::to_string(turn.turn) + " of trajectory " + t.id;
  const GenerationRecord empty;
  const GenerationRecord& g =
      turn.samples.empty() ? empty : turn.samples.front().generation;
  Stmt tr(db_->handle,
          "INSERT OR REPLACE INTO turns VALUES(?,?,?,?,?,?,?,?,?,?,?)");
  tr.Text(1, t.id).Int(2, turn.turn).Text(3, turn.selection.query);
  tr.Int(4, static_cast<int64_t>(turn.selection.library_version));
  tr.Text(5, internal::Dump(ChatJson(g.prompt))).Text(6, g.prompt_text);
  tr.Text(7, ArrayJson(g.prompt_token_ids)).Text(8, ToJson(turn.selection));
  tr.Int(9, turn.best_sample)
      .Real(10, turn.reward)
      .Text(11, ToJson(turn.times));
  SKILLDB_RETURN_IF_ERROR(tr.Run(ctx));
  Stmt del(db_->handle,
           "DELETE FROM turn_skills WHERE trajectory_id=? AND turn=?");
  SKILLDB_RETURN_IF_ERROR(del.Text(1, t.id).Int(2, turn.turn).Run(ctx));
  Stmt sk(db_->handle, "INSERT INTO turn_skills VALUES(?,?,?,?,?,?,?,?)");
  for (const char* role : {"retrieved", "selected"}) {
    const auto& refs = std::string_view(role) == "retrieved"
                           ? turn.selection.retrieved
                           : turn.selection.selected;
    for (size_t i = 0; i < refs.size(); ++i) {
      sk.Reset().Text(1, t.id).Int(2, turn.turn).Text(3, role).Int(4, i + 1);
      sk.Text(5, refs[i].id).Int(6, static_cast<int64_t>(refs[i].revision));
      sk.Real(7, refs[i].bm25_score).Real(8, refs[i].score);
      SKILLDB_RETURN_IF_ERROR(sk.Run(ctx));
    }
  }
  Stmt sm(db_->handle,
          "INSERT OR REPLACE INTO samples VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
          "?,?,?,?,?,?)");
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
  Transaction tx(db_->handle);
  SKILLDB_RETURN_IF_ERROR(tx.Begin());
  SKILLDB_RETURN_IF_ERROR(WriteHeaderLocked(t, /*insert=*/false));
  SKILLDB_RETURN_IF_ERROR(WriteTurnLocked(t, turn));
  return tx.Commit();
}

Status RolloutStore::FinishTrajectory(const Trajectory& t) {
  if (read_only_)
    return Status::FailedPrecondition("rollout store is read-only");
  std::lock_guard<std::mutex> lock(mu_);
  return WriteHeaderLocked(t, /*insert=*/false);
}

Status RolloutStore::PutTrajectory(const Trajectory& t) {
  if (read_only_)
    return Status::FailedPrecondition("rollout store is read-only");
  std::lock_guard<std::mutex> lock(mu_);
  Transaction tx(db_->handle);
  SKILLDB_RETURN_IF_ERROR(tx.Begin());
  for (const char* sql : {"DELETE FROM trajectories WHERE id=?",
                          "DELETE FROM turns WHERE trajectory_id=?",
                          "DELETE FROM turn_skills WHERE trajectory_id=?",
                          "DELETE FROM samples WHERE trajectory_id=?"}) {
    Stmt del(db_->handle, sql);
    SKILLDB_RETURN_IF_ERROR(
        del.Text(1, t.id).Run("replacing trajectory " + t.id));
  }
  SKILLDB_RETURN_IF_ERROR(WriteHeaderLocked(t, /*insert=*/true));
  for (const TurnRecord& turn : t.turns) {
    SKILLDB_RETURN_IF_ERROR(WriteTurnLocked(t, turn));
  }
  return tx.Commit();
}

}  // namespace skilldb::policy
