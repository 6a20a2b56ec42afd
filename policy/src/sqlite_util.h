// A thin RAII layer over the SQLite C API for the rollout store: prepared
// statements with typed binds and reads, and errors as Status. Internal.
#ifndef SKILLDB_POLICY_SQLITE_UTIL_H_
#define SKILLDB_POLICY_SQLITE_UTIL_H_

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "skilldb/status.h"

namespace skilldb::policy::internal {

// IOError "`context`: <sqlite message>" (AlreadyExists for a constraint).
Status SqliteError(sqlite3* db, std::string_view context);

// Runs `sql` (one or more statements without results).
Status Exec(sqlite3* db, const char* sql, std::string_view context);

// One prepared statement. Binds are 1-based, columns 0-based.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // OK, or the preparation's error.
  Status status(std::string_view context) const;

  Stmt& Text(int i, std::string_view v);
  Stmt& Int(int i, int64_t v);
  Stmt& Real(int i, double v);
  Stmt& Null(int i);

  // Steps once: true with a row, false when done; errors as Status.
  Result<bool> Step(std::string_view context);
  // Steps to the end (for writes).
  Status Run(std::string_view context);
  Stmt& Reset();

  std::string ColText(int i) const;
  int64_t ColInt(int i) const;
  double ColReal(int i) const;
  bool ColNull(int i) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int prepare_rc_ = SQLITE_OK;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back when not committed.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {}
  ~Transaction();
  Status Begin();
  Status Commit();

 private:
  sqlite3* db_;
  bool open_ = false;
};

}  // namespace skilldb::policy::internal

#endif  // SKILLDB_POLICY_SQLITE_UTIL_H_
