#include "sqlite_util.h"

namespace skilldb::policy::internal {

Status SqliteError(sqlite3* db, std::string_view context) {
  const int code = sqlite3_extended_errcode(db);
  std::string message = std::string(context) + ": " + sqlite3_errmsg(db);
  if ((code & 0xff) == SQLITE_CONSTRAINT) {
    return Status::AlreadyExists(std::move(message));
  }
  return Status::IOError(std::move(message));
}

Status Exec(sqlite3* db, const char* sql, std::string_view context) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) == SQLITE_OK) {
    return Status::Ok();
  }
  std::string message = std::string(context) + ": " +
                        (error != nullptr ? error : sqlite3_errmsg(db));
  sqlite3_free(error);
  return Status::IOError(std::move(message));
}

Stmt::Stmt(sqlite3* db, const char* sql) : db_(db) {
  prepare_rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
}

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

Status Stmt::status(std::string_view context) const {
  if (prepare_rc_ == SQLITE_OK) return Status::Ok();
  return SqliteError(db_, context);
}

Stmt& Stmt::Text(int i, std::string_view v) {
  // A null pointer would bind SQL NULL; empty text stays text.
  sqlite3_bind_text(stmt_, i, v.empty() ? "" : v.data(),
                    static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}

Stmt& Stmt::Int(int i, int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}

Stmt& Stmt::Real(int i, double v) {
  sqlite3_bind_double(stmt_, i, v);
  return *this;
}

Stmt& Stmt::Null(int i) {
  sqlite3_bind_null(stmt_, i);
  return *this;
}

Result<bool> Stmt::Step(std::string_view context) {
  if (prepare_rc_ != SQLITE_OK) return SqliteError(db_, context);
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, context);
}

Status Stmt::Run(std::string_view context) {
  while (true) {
    SKILLDB_ASSIGN_OR_RETURN(bool row, Step(context));
    if (!row) return Status::Ok();
  }
}

Stmt& Stmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  return *this;
}

std::string Stmt::ColText(int i) const {
  const unsigned char* p = sqlite3_column_text(stmt_, i);
  const int n = sqlite3_column_bytes(stmt_, i);
  return p == nullptr ? std::string()
                      : std::string(reinterpret_cast<const char*>(p), n);
}

int64_t Stmt::ColInt(int i) const { return sqlite3_column_int64(stmt_, i); }
double Stmt::ColReal(int i) const { return sqlite3_column_double(stmt_, i); }
bool Stmt::ColNull(int i) const {
  return sqlite3_column_type(stmt_, i) == SQLITE_NULL;
}

Transaction::~Transaction() {
  if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

Status Transaction::Begin() {
  SKILLDB_RETURN_IF_ERROR(
      Exec(db_, "BEGIN IMMEDIATE", "beginning a transaction"));
  open_ = true;
  return Status::Ok();
}

Status Transaction::Commit() {
  SKILLDB_RETURN_IF_ERROR(Exec(db_, "COMMIT", "committing"));
  open_ = false;
  return Status::Ok();
}

}  // namespace skilldb::policy::internal
