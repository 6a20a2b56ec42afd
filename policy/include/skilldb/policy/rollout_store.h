// The rollout store: every trajectory of the Policy Agent and every run of
// the Skill Summary Agent, in one SQLite database, for the trainer, the CLI
// (`skilldb rollouts list|show|export`) and plain SQL.
//
// Where it is: `--rollouts PATH`, else $SKILLDB_ROLLOUTS, else beside the
// library as "<library path>.rollouts.sqlite" (a sibling of the library's
// directory, never inside it: the library directory belongs to RocksDB).
// DefaultRolloutPath() computes the last.
//
// Schema (version 2; meta.schema_version; a version 1 store is upgraded
// when it is opened). Times are Unix milliseconds;
// *_json columns hold the compact JSON of the type named (trajectory.h,
// skilldb/json.h), each readable on its own:
//
//   meta(key TEXT PRIMARY KEY, value TEXT)
//   trajectories(id TEXT PRIMARY KEY, grp TEXT, task TEXT, backend TEXT,
//       model TEXT, library_version INTEGER, max_turns INTEGER,
//       samples_per_turn INTEGER, started_ms INTEGER, finished_ms INTEGER,
//       status TEXT,            -- running | finished | failed |
//                               -- interrupted (its writer died)
//       error TEXT, solved INTEGER, turns_done INTEGER,
//       best_turn INTEGER, best_sample INTEGER,   -- -1: none
//       best_reward REAL, best_speedup REAL,
//       owner TEXT,             -- "host:pid:starttime" of the writer
//       heartbeat_ms INTEGER)   -- the writer's last write
//   turns(trajectory_id TEXT, turn INTEGER, query TEXT,
//       library_version INTEGER,
//       prompt_json TEXT,       -- [ChatMessage] shared by the turn's samples
//       prompt_text TEXT, prompt_token_ids_json TEXT,  -- [int], may be []
//       selection_json TEXT,    -- SelectionRecord (rerank calls included)
//       best_sample INTEGER, reward REAL, times_json TEXT,  -- TurnTimes
//       PRIMARY KEY (trajectory_id, turn))
//   turn_skills(trajectory_id TEXT, turn INTEGER, role TEXT,  -- retrieved |
//       rank INTEGER,           -- 1-based             selected
//       skill_id TEXT, revision INTEGER, bm25_score REAL, score REAL,
//       PRIMARY KEY (trajectory_id, turn, role, rank))
//   samples(trajectory_id TEXT, turn INTEGER, sample INTEGER,
//       verdict TEXT,           -- SampleVerdictName
//       reward REAL, passed INTEGER, speedup REAL, ci_low REAL,
//       ci_high REAL, findings TEXT,  -- finding codes, comma-separated
//       language TEXT, source TEXT, extraction TEXT, feedback TEXT,
//       finish_reason TEXT, model TEXT, completion TEXT,
//       completion_token_ids_json TEXT, completion_logprobs_json TEXT,
//       report_json TEXT,       -- VerificationReport, NULL if not verified
//       times_json TEXT,        -- SampleTimes
//       PRIMARY KEY (trajectory_id, turn, sample))
//   distillations(id TEXT PRIMARY KEY, trajectory_id TEXT, kind TEXT,
//       -- skill | pitfalls
//       model TEXT, started_ms INTEGER, finished_ms INTEGER,
//       outcome TEXT,  -- accepted | rejected | aborted | invalid | error |
//                      -- attached | none | pending (stored before the
//                      -- library commit; replaced by the outcome)
//       skill_id TEXT, version INTEGER, proposal_id TEXT,
//       reasons_json TEXT,      -- [string]
//       candidate_json TEXT,    -- the Skill proposed (SkillToJson) or NULL
//       report_json TEXT,       -- the re-verification report or NULL
//       generations_json TEXT,  -- [GenerationRecord], one per attempt
//       errors_json TEXT)       -- [string] validation errors per attempt
//   indexes: trajectories(task, started_ms), turn_skills(skill_id),
//            distillations(trajectory_id)
//
// Every statement names its columns, and Open checks each table's columns
// against this layout: a file with another layout (an older store, a table
// re-created by hand) is refused with Corruption naming the table and the
// columns it has and should have, never read by position.
//
// The database runs in WAL mode with a busy timeout, so one process can
// write while others read (and several processes may write in turns). A
// RolloutStore is safe for concurrent use by multiple threads: writes are
// serialized on one connection, each a transaction.
#ifndef SKILLDB_POLICY_ROLLOUT_STORE_H_
#define SKILLDB_POLICY_ROLLOUT_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/generation.h"
#include "skilldb/policy/trajectory.h"
#include "skilldb/status.h"

namespace skilldb::policy {

inline constexpr int kRolloutSchemaVersion = 2;

// The error of a trajectory whose writer is gone (status "interrupted").
inline constexpr char kInterruptedError[] =
    "interrupted: the process writing it ended before the trajectory "
    "finished";

// "<library path without trailing slashes>.rollouts.sqlite".
std::string DefaultRolloutPath(std::string_view library_path);

struct RolloutStoreOptions {
  bool read_only = false;  // open without writing. Default: false.
  // A writable open creates a missing store (a read-only open never does;
  // commands that only read what a store holds open it without create,
  // so a mistyped path is NotFound, not a new empty file). Default: true.
  bool create = true;
  // Wait this long for another writer's lock. Default: 10000.
  int busy_timeout_ms = 10000;
};

// One row of trajectories (no turns).
struct TrajectorySummary {
  std::string id;
  std::string group;
  std::string task;
  std::string backend;
  std::string model;
  Version library_version = 0;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
  std::string status;
  std::string error;
  bool solved = false;
  int turns_done = 0;
  int samples_per_turn = 0;
  int best_turn = -1;
  int best_sample = -1;
  double best_reward = 0;
  double best_speedup = 0;  // the best sample's speedup point estimate
};

struct ListOptions {
  std::string task;            // "" = any task
  std::string group;           // "" = any group
  std::optional<bool> solved;  // unset = both
  size_t limit = 0;            // 0 = all; newest first
};

// One run of the Skill Summary Agent over a trajectory.
struct DistillationRecord {
  std::string id;  // "d-<ms hex>-<random hex>"
  std::string trajectory_id;
  std::string kind = "skill";  // "skill" | "pitfalls"
  std::string model;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
  // skill: accepted | rejected | aborted (gave up after conflicts) |
  // invalid (no valid skill after the retries) | error; pitfalls: attached
  // | none (nothing attached) | invalid | error. Both: pending, written
  // before the library commit and replaced by the outcome (a run that
  // died in between leaves it).
  std::string outcome;
  std::string skill_id;  // the skill written, or the candidate's id
  Version version = 0;   // the commit, when accepted or attached
  std::string proposal_id;
  std::vector<std::string> reasons;
  std::string candidate_json;  // SkillToJson of the candidate, or ""
  std::string report_json;     // ReportToJson of the evidence, or ""
  std::vector<GenerationRecord> generations;  // one per attempt
  std::vector<std::string> errors;  // validation error of each attempt
  bool operator==(const DistillationRecord&) const = default;
};

std::string ToJson(const DistillationRecord& record);

class RolloutStore {
 public:
  // Opens the store at `path` (creating it when writable and
  // options.create; its parent directory must exist), upgrading an older
  // schema, and marks "interrupted" the running trajectories whose writer
  // on this host is gone (writable opens). Errors: NotFound for a missing
  // store that is not to be created; FailedPrecondition for a schema newer
  // than this build; Corruption when a table's columns differ from the
  // layout above, naming it; IOError naming the path for other SQLite
  // failures.
  static Result<std::unique_ptr<RolloutStore>> Open(
      std::string_view path, const RolloutStoreOptions& options = {});
  ~RolloutStore();
  RolloutStore(const RolloutStore&) = delete;
  RolloutStore& operator=(const RolloutStore&) = delete;

  const std::string& path() const { return path_; }

  // Records a trajectory as it runs: its header (status "running"), then
  // each turn as it ends (the header's counters follow), then the final
  // header with every turn's final times. Put writes a whole trajectory at once, replacing one with its
  // id. Errors: IOError; FailedPrecondition when read-only; NotFound from
  // AppendTurn for an id never begun.
  Status BeginTrajectory(const Trajectory& trajectory);
  Status AppendTurn(const Trajectory& trajectory, const TurnRecord& turn);
  Status FinishTrajectory(const Trajectory& trajectory);
  Status PutTrajectory(const Trajectory& trajectory);

  // The whole trajectory (generations reassembled with their turn's
  // prompt). A "running" trajectory whose writer on this host is gone reads
  // as "interrupted". NotFound for an unknown id; Corruption for unreadable
  // JSON or indexes (best turn, best sample) that point nowhere.
  Result<Trajectory> LoadTrajectory(std::string_view id);
  Result<std::vector<TrajectorySummary>> List(const ListOptions& options);
  // Calls `fn` for every trajectory (oldest first) until it returns false.
  Status Scan(const ListOptions& options,
              const std::function<bool(const Trajectory&)>& fn);

  Status PutDistillation(const DistillationRecord& record);
  // The distillations of one trajectory, oldest first.
  Result<std::vector<DistillationRecord>> Distillations(
      std::string_view trajectory_id);

 private:
  struct Db;
  RolloutStore(std::string path, std::unique_ptr<Db> db, bool read_only);
  Status WriteTurnLocked(const Trajectory& t, const TurnRecord& turn);
  Status WriteHeaderLocked(const Trajectory& t, bool insert);
  Status MarkInterruptedLocked();
  Result<Trajectory> LoadLocked(std::string_view id);

  const std::string path_;
  const bool read_only_;
  std::mutex mu_;
  std::unique_ptr<Db> db_;  // GUARDED_BY(mu_)
};

}  // namespace skilldb::policy

#endif  // SKILLDB_POLICY_ROLLOUT_STORE_H_
