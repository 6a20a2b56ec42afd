// The rollout store's schema and connection, shared by its write and read
// halves (rollout_store.cc, rollout_store_read.cc). Internal.
#ifndef SKILLDB_POLICY_ROLLOUT_DB_H_
#define SKILLDB_POLICY_ROLLOUT_DB_H_

#include <memory>
#include <string>

#include "skilldb/policy/rollout_store.h"
#include "skilldb/util/sqlite.h"

namespace skilldb::policy {

struct RolloutStore::Db {
  std::unique_ptr<util::SqliteDb> sql;
};

namespace internal {

// The schema (rollout_store.h describes it), version kRolloutSchemaVersion,
// with the migrations from version 1.
const util::SqliteSchema& RolloutSchema();
// Its tables, by name.
const util::SqliteTable& TrajectoriesTable();
const util::SqliteTable& TurnsTable();
const util::SqliteTable& TurnSkillsTable();
const util::SqliteTable& SamplesTable();
const util::SqliteTable& DistillationsTable();

// "host:pid:starttime" of this process: who is writing a running
// trajectory (the start time tells a reused pid from the writer).
std::string ThisProcessOwner();
// Whether `owner` (ThisProcessOwner's format) names a process of this
// host that no longer runs. An owner of another host, or "" (a store of
// schema version 1), is never known to be gone.
bool OwnerIsGone(const std::string& owner);

}  // namespace internal
}  // namespace skilldb::policy

#endif  // SKILLDB_POLICY_ROLLOUT_DB_H_
