// The rollout store's reads and the distillation records.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "json_io.h"
#include "rollout_db.h"
#include "skilldb/json.h"

namespace skilldb::policy {

using internal::Json;
using util::SqliteStatement;

namespace {

std::vector<std::string> CommaSplit(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    if (end > pos) out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

Status Corrupt(std::string_view what, const Status& st) {
  return Status::Corruption("rollout store: " + std::string(what) + ": " +
                            st.message());
}

template <typename T>
Result<std::vector<T>> ReadArray(const std::string& text,
                                 std::string_view what) {
  SKILLDB_ASSIGN_OR_RETURN(Json j, internal::ParseJson(text, what));
  if (!j.is_array()) return Status::InvalidArgument("not an array");
  std::vector<T> out;
  for (const Json& e : j) {
    if constexpr (std::is_same_v<T, std::string>) {
      if (!e.is_string()) return Status::InvalidArgument("not a string");
      out.push_back(e.get<std::string>());
    } else if constexpr (std::is_integral_v<T>) {
      int64_t v = 0;
      SKILLDB_RETURN_IF_ERROR(util::ReadInt64(
          e, std::string(what) + " entry", std::numeric_limits<T>::min(),
          std::numeric_limits<T>::max(), &v));
      out.push_back(static_cast<T>(v));
    } else {
      double v = 0;
      SKILLDB_RETURN_IF_ERROR(util::ReadDouble(
          e, std::string(what) + " entry", -std::numeric_limits<double>::max(),
          std::numeric_limits<double>::max(), &v));
      out.push_back(v);
    }
  }
  return out;
}

Result<std::vector<ChatMessage>> ReadChat(const std::string& text) {
  SKILLDB_ASSIGN_OR_RETURN(Json j, internal::ParseJson(text, "prompt"));
  std::vector<ChatMessage> out;
  if (!j.is_array()) return Status::InvalidArgument("prompt is not an array");
  for (const Json& m : j) {
    ChatMessage msg;
    internal::Reader in(m, "prompt[]");
    SKILLDB_RETURN_IF_ERROR(in.String("role", &msg.role));
    SKILLDB_RETURN_IF_ERROR(in.String("content", &msg.content));
    out.push_back(std::move(msg));
  }
  return out;
}

// Columns by the position of the schema's SELECT lists (rollout_db.h):
// trajectories(id 0, grp, task, backend, model, library_version 5,
// max_turns, samples_per_turn, started_ms 8, finished_ms, status 10, error,
// solved 12, turns_done, best_turn 14, best_sample, best_reward 16,
// best_speedup, owner 18, heartbeat_ms).
TrajectorySummary SummaryFrom(const SqliteStatement& s) {
  TrajectorySummary t;
  t.id = s.ColText(0);
  t.group = s.ColText(1);
  t.task = s.ColText(2);
  t.backend = s.ColText(3);
  t.model = s.ColText(4);
  t.library_version = static_cast<Version>(s.ColInt(5));
  t.samples_per_turn = static_cast<int>(s.ColInt(7));
  t.started_ms = s.ColInt(8);
  t.finished_ms = s.ColInt(9);
  t.status = s.ColText(10);
  t.error = s.ColText(11);
  t.solved = s.ColInt(12) != 0;
  t.turns_done = static_cast<int>(s.ColInt(13));
  t.best_turn = static_cast<int>(s.ColInt(14));
  t.best_sample = static_cast<int>(s.ColInt(15));
  t.best_reward = s.ColReal(16);
  t.best_speedup = s.ColReal(17);
  if (t.status == "running" && internal::OwnerIsGone(s.ColText(18))) {
    t.status = "interrupted";
    t.error = kInterruptedError;
  }
  return t;
}

// The sample columns after (trajectory_id, turn, sample), into `s`; the
// generation's prompt comes from the turn.
Status SampleFrom(const SqliteStatement& row, const GenerationRecord& turn_prompt,
                  SampleRecord* s) {
  s->index = static_cast<int>(row.ColInt(2));
  SKILLDB_ASSIGN_OR_RETURN(s->verdict, ParseSampleVerdict(row.ColText(3)));
  s->reward = row.ColReal(4);
  s->findings = CommaSplit(row.ColText(9));
  s->language = row.ColText(10);
  s->source = row.ColText(11);
  s->extraction = row.ColText(12);
  s->feedback = row.ColText(13);
  s->finish_reason = row.ColText(14);
  s->generation = turn_prompt;
  s->generation.model = row.ColText(15);
  s->generation.completion = row.ColText(16);
  SKILLDB_ASSIGN_OR_RETURN(s->generation.completion_token_ids,
                           ReadArray<int32_t>(row.ColText(17), "token ids"));
  SKILLDB_ASSIGN_OR_RETURN(s->generation.completion_logprobs,
                           ReadArray<double>(row.ColText(18), "logprobs"));
  if (!row.ColNull(19)) {
    SKILLDB_ASSIGN_OR_RETURN(VerificationReport r,
                             ReportFromJson(row.ColText(19)));
    s->report = std::move(r);
  }
  SKILLDB_ASSIGN_OR_RETURN(s->times, SampleTimesFromJson(row.ColText(20)));
  return Status::Ok();
}

Status TurnFrom(const SqliteStatement& row, TurnRecord* turn,
                GenerationRecord* prompt) {
  turn->turn = static_cast<int>(row.ColInt(1));
  SKILLDB_ASSIGN_OR_RETURN(prompt->prompt, ReadChat(row.ColText(4)));
  prompt->prompt_text = row.ColText(5);
  SKILLDB_ASSIGN_OR_RETURN(prompt->prompt_token_ids,
                           ReadArray<int32_t>(row.ColText(6), "prompt ids"));
  SKILLDB_ASSIGN_OR_RETURN(turn->selection, SelectionFromJson(row.ColText(7)));
  turn->best_sample = static_cast<int>(row.ColInt(8));
  turn->reward = row.ColReal(9);
  SKILLDB_ASSIGN_OR_RETURN(turn->times, TurnTimesFromJson(row.ColText(10)));
  return Status::Ok();
}

// The indexes a stored trajectory holds point at what it holds (a hand-
// edited or torn store could say anything; readers index with them).
Status CheckIndexes(const Trajectory& t) {
  for (const TurnRecord& turn : t.turns) {
    if (turn.best_sample < -1 ||
        turn.best_sample >= static_cast<int>(turn.samples.size())) {
      return Status::Corruption(
          "rollout store: trajectory " + t.id + " turn " +
          std::to_string(turn.turn) + " has best sample " +
          std::to_string(turn.best_sample) + " of " +
          std::to_string(turn.samples.size()));
    }
  }
  if (t.best_turn < -1 || t.best_turn >= static_cast<int>(t.turns.size())) {
    return Status::Corruption("rollout store: trajectory " + t.id +
                              " has best turn " + std::to_string(t.best_turn) +
                              " of " + std::to_string(t.turns.size()));
  }
  if (t.best_turn >= 0) {
    const TurnRecord& best = t.turns[t.best_turn];
    if (t.best_sample < -1 ||
        t.best_sample >= static_cast<int>(best.samples.size())) {
      return Status::Corruption(
          "rollout store: trajectory " + t.id + " has best sample " +
          std::to_string(t.best_sample) + " of " +
          std::to_string(best.samples.size()) + " in its best turn");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Trajectory> RolloutStore::LoadLocked(std::string_view id) {
  const util::SqliteDb& sql = *db_->sql;
  const std::string ctx = "reading trajectory " + std::string(id);
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement h,
      sql.Prepare(internal::TrajectoriesTable().Select() + " WHERE id = ?1",
                  ctx));
  SKILLDB_ASSIGN_OR_RETURN(bool found, h.Text(1, id).Step(ctx));
  if (!found) {
    return Status::NotFound("no trajectory '" + std::string(id) +
                            "' in the rollout store '" + path_ + "'");
  }
  const TrajectorySummary sum = SummaryFrom(h);
  Trajectory t;
  t.id = sum.id;
  t.group = sum.group;
  t.task = sum.task;
  t.backend = sum.backend;
  t.model = sum.model;
  t.library_version = sum.library_version;
  t.max_turns = static_cast<int>(h.ColInt(6));
  t.samples_per_turn = sum.samples_per_turn;
  t.started_ms = sum.started_ms;
  t.finished_ms = sum.finished_ms;
  t.status = sum.status;  // "interrupted" when its writer is gone
  t.error = sum.error;
  t.solved = sum.solved;
  t.best_turn = sum.best_turn;
  t.best_sample = sum.best_sample;
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement turns,
      sql.Prepare(internal::TurnsTable().Select() +
                      " WHERE trajectory_id = ?1 ORDER BY turn",
                  ctx));
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement samples,
      sql.Prepare(internal::SamplesTable().Select() +
                      " WHERE trajectory_id = ?1 AND turn = ?2 ORDER BY sample",
                  ctx));
  turns.Text(1, id);
  while (true) {
    SKILLDB_ASSIGN_OR_RETURN(bool row, turns.Step(ctx));
    if (!row) break;
    TurnRecord turn;
    GenerationRecord prompt;
    Status st = TurnFrom(turns, &turn, &prompt);
    if (!st.ok()) return Corrupt(ctx, st);
    samples.Reset().Text(1, id).Int(2, turn.turn);
    while (true) {
      SKILLDB_ASSIGN_OR_RETURN(bool srow, samples.Step(ctx));
      if (!srow) break;
      SampleRecord s;
      st = SampleFrom(samples, prompt, &s);
      if (!st.ok()) return Corrupt(ctx, st);
      turn.samples.push_back(std::move(s));
    }
    t.turns.push_back(std::move(turn));
  }
  SKILLDB_RETURN_IF_ERROR(CheckIndexes(t));
  return t;
}

Result<Trajectory> RolloutStore::LoadTrajectory(std::string_view id) {
  std::lock_guard<std::mutex> lock(mu_);
  return LoadLocked(id);
}

Result<std::vector<TrajectorySummary>> RolloutStore::List(
    const ListOptions& o) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql = internal::TrajectoriesTable().Select() +
                    " WHERE (?1 = '' OR task = ?1) AND "
                    "(?2 = '' OR grp = ?2) AND (?3 < 0 OR solved = ?3) "
                    "ORDER BY started_ms DESC, id DESC";
  if (o.limit > 0) sql += " LIMIT " + std::to_string(o.limit);
  SKILLDB_ASSIGN_OR_RETURN(SqliteStatement s,
                           db_->sql->Prepare(sql, "listing trajectories"));
  s.Text(1, o.task).Text(2, o.group).Int(3, o.solved ? *o.solved : -1);
  std::vector<TrajectorySummary> out;
  while (true) {
    SKILLDB_ASSIGN_OR_RETURN(bool row, s.Step("listing trajectories"));
    if (!row) break;
    out.push_back(SummaryFrom(s));
  }
  return out;
}

Status RolloutStore::Scan(const ListOptions& o,
                          const std::function<bool(const Trajectory&)>& fn) {
  ListOptions all = o;
  all.limit = 0;
  SKILLDB_ASSIGN_OR_RETURN(std::vector<TrajectorySummary> rows, List(all));
  size_t n = 0;
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    if (o.limit > 0 && n++ >= o.limit) break;
    Result<Trajectory> t = LoadTrajectory(it->id);
    if (!t.ok()) return t.status();
    if (!fn(*t)) break;
  }
  return Status::Ok();
}

Status RolloutStore::PutDistillation(const DistillationRecord& r) {
  if (read_only_)
    return Status::FailedPrecondition("rollout store is read-only");
  std::lock_guard<std::mutex> lock(mu_);
  Json gens = Json::array();
  for (const GenerationRecord& g : r.generations)
    gens.push_back(Json::parse(skilldb::ToJson(g), nullptr, false));
  const std::string ctx = "writing distillation " + r.id;
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement s,
      db_->sql->Prepare(
          internal::DistillationsTable().Insert("INSERT OR REPLACE"), ctx));
  s.Text(1, r.id).Text(2, r.trajectory_id).Text(3, r.kind).Text(4, r.model);
  s.Int(5, r.started_ms).Int(6, r.finished_ms).Text(7, r.outcome);
  s.Text(8, r.skill_id).Int(9, static_cast<int64_t>(r.version));
  s.Text(10, r.proposal_id).Text(11, internal::Dump(Json(r.reasons)));
  r.candidate_json.empty() ? s.Null(12) : s.Text(12, r.candidate_json);
  r.report_json.empty() ? s.Null(13) : s.Text(13, r.report_json);
  s.Text(14, internal::Dump(gens)).Text(15, internal::Dump(Json(r.errors)));
  return s.Run(ctx);
}

Result<std::vector<DistillationRecord>> RolloutStore::Distillations(
    std::string_view trajectory_id) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string ctx = "reading distillations";
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement s,
      db_->sql->Prepare(internal::DistillationsTable().Select() +
                            " WHERE trajectory_id = ?1 ORDER BY started_ms, id",
                        ctx));
  s.Text(1, trajectory_id);
  std::vector<DistillationRecord> out;
  while (true) {
    SKILLDB_ASSIGN_OR_RETURN(bool row, s.Step(ctx));
    if (!row) break;
    DistillationRecord r;
    r.id = s.ColText(0);
    r.trajectory_id = s.ColText(1);
    r.kind = s.ColText(2);
    r.model = s.ColText(3);
    r.started_ms = s.ColInt(4);
    r.finished_ms = s.ColInt(5);
    r.outcome = s.ColText(6);
    r.skill_id = s.ColText(7);
    r.version = static_cast<Version>(s.ColInt(8));
    r.proposal_id = s.ColText(9);
    auto reasons = ReadArray<std::string>(s.ColText(10), "reasons");
    if (!reasons.ok()) return Corrupt(ctx, reasons.status());
    r.reasons = std::move(*reasons);
    r.candidate_json = s.ColText(11);
    r.report_json = s.ColText(12);
    auto gens = internal::ParseJson(s.ColText(13), "generations");
    if (!gens.ok() || !gens->is_array()) {
      return Status::Corruption("rollout store: distillation " + r.id +
                                " has unreadable generations");
    }
    for (const Json& g : *gens) {
      auto rec = FromJson<GenerationRecord>(internal::Dump(g));
      if (!rec.ok()) return Corrupt(ctx, rec.status());
      r.generations.push_back(std::move(*rec));
    }
    auto errors = ReadArray<std::string>(s.ColText(14), "errors");
    if (!errors.ok()) return Corrupt(ctx, errors.status());
    r.errors = std::move(*errors);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace skilldb::policy
