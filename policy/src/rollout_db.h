// The rollout store's connection, shared by its write and read halves
// (rollout_store.cc, rollout_store_read.cc). Internal.
#ifndef SKILLDB_POLICY_ROLLOUT_DB_H_
#define SKILLDB_POLICY_ROLLOUT_DB_H_

#include <sqlite3.h>

#include "skilldb/policy/rollout_store.h"
#include "sqlite_util.h"

namespace skilldb::policy {

struct RolloutStore::Db {
  sqlite3* handle = nullptr;
  ~Db() { sqlite3_close(handle); }
};

}  // namespace skilldb::policy

#endif  // SKILLDB_POLICY_ROLLOUT_DB_H_
