#include "skilldb/util/sqlite.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <climits>
#include <set>
#include <utility>

namespace skilldb::util {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The schema version in meta, or -1 when the store has no meta table.
Result<int> ReadVersion(const SqliteDb& db) {
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement has_meta,
      db.Prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                 "AND name = 'meta'",
                 db.name()));
  SKILLDB_ASSIGN_OR_RETURN(bool row, has_meta.Step(db.name()));
  if (!row || has_meta.ColInt(0) == 0) return -1;
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement version,
      db.Prepare("SELECT value FROM meta WHERE key = 'schema_version'",
                 db.name()));
  SKILLDB_ASSIGN_OR_RETURN(row, version.Step(db.name()));
  if (!row) return Status::Corruption(db.name() + " has no schema version");
  const std::string v = version.ColText(0);
  if (v.empty() || v.size() > 6 ||
      v.find_first_not_of("0123456789") != std::string::npos) {
    return Status::Corruption(db.name() + " has schema version '" + v + "'");
  }
  return std::stoi(v);
}

// Whether the file holds any table at all (a new, empty file holds none).
Result<bool> HasTables(const SqliteDb& db) {
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement s,
      db.Prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                 db.name()));
  SKILLDB_ASSIGN_OR_RETURN(bool row, s.Step(db.name()));
  return row && s.ColInt(0) > 0;
}

Result<std::unique_ptr<SqliteDb>> OpenConnection(
    const std::string& path, bool read_only, bool create, int busy_timeout_ms,
    const std::string& name,
    std::unique_ptr<SqliteDb> (*wrap)(std::string, std::string, sqlite3*)) {
  sqlite3* handle = nullptr;
  const int flags = (read_only ? SQLITE_OPEN_READONLY
                               : SQLITE_OPEN_READWRITE |
                                     (create ? SQLITE_OPEN_CREATE : 0)) |
                    SQLITE_OPEN_FULLMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &handle, flags, nullptr);
  std::unique_ptr<SqliteDb> db = wrap(path, name, handle);
  if (rc != SQLITE_OK) return SqliteError(handle, "opening " + name);
  sqlite3_busy_timeout(handle, busy_timeout_ms);
  return db;
}

}  // namespace

// SqliteTable -----------------------------------------------------------------

std::string SqliteTable::CreateSql() const {
  std::string sql = "CREATE TABLE IF NOT EXISTS " + name + "(";
  for (size_t i = 0; i < columns.size(); ++i) {
    sql += (i ? ", " : "") + columns[i].name + " " + columns[i].type;
  }
  if (!constraints.empty()) sql += ", " + constraints;
  sql += ")";
  if (!options.empty()) sql += " " + options;
  return sql + ";";
}

std::string SqliteTable::ColumnList() const {
  std::string out;
  for (size_t i = 0; i < columns.size(); ++i) {
    out += (i ? ", " : "") + columns[i].name;
  }
  return out;
}

std::string SqliteTable::Insert(std::string_view verb) const {
  std::string values;
  for (size_t i = 0; i < columns.size(); ++i) {
    values += (i ? ", ?" : "?") + std::to_string(i + 1);
  }
  return std::string(verb) + " INTO " + name + "(" + ColumnList() +
         ") VALUES(" + values + ")";
}

std::string SqliteTable::Select() const {
  return "SELECT " + ColumnList() + " FROM " + name;
}

int SqliteTable::Column(std::string_view column) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == column) return static_cast<int>(i);
  }
  return -1;
}

// SqliteDb --------------------------------------------------------------------

SqliteDb::SqliteDb(std::string path, std::string name, sqlite3* db)
    : path_(std::move(path)), name_(std::move(name)), db_(db) {}

SqliteDb::~SqliteDb() { sqlite3_close(db_); }

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(
    std::string_view path, const SqliteSchema& schema,
    const SqliteOpenOptions& options) {
  const std::string p(path);
  const std::string name = schema.store + " '" + p + "'";
  const bool create = options.create && !options.read_only;
  if (!create && !Exists(p)) {
    return Status::NotFound("no " + schema.store + " at '" + p + "'");
  }
  auto wrap = [](std::string a, std::string b, sqlite3* h) {
    return std::unique_ptr<SqliteDb>(new SqliteDb(std::move(a), std::move(b), h));
  };
  if (options.read_only) {
    // An older store is brought up to date by a writable connection first
    // when the file allows it: reads go on working across upgrades.
    SKILLDB_ASSIGN_OR_RETURN(
        auto probe, OpenConnection(p, true, false, options.busy_timeout_ms,
                                   name, wrap));
    SKILLDB_ASSIGN_OR_RETURN(int version, ReadVersion(*probe));
    if (version >= 0 && version < schema.version) {
      probe.reset();
      auto writer = OpenConnection(p, false, false, options.busy_timeout_ms,
                                   name, wrap);
      Status migrated = writer.ok() ? (*writer)->Migrate(schema, options)
                                    : writer.status();
      if (!migrated.ok()) {
        return Status::FailedPrecondition(
            name + " has schema version " + std::to_string(version) +
            ", older than this build's " + std::to_string(schema.version) +
            ", and cannot be upgraded here (" + migrated.message() +
            "); open it once with a writing command");
      }
    }
  }
  SKILLDB_ASSIGN_OR_RETURN(
      auto db, OpenConnection(p, options.read_only, create,
                              options.busy_timeout_ms, name, wrap));
  if (!options.read_only) {
    // WAL: one writer beside many readers, in this process and others.
    SKILLDB_RETURN_IF_ERROR(db->Exec(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", name));
    SKILLDB_RETURN_IF_ERROR(db->Migrate(schema, options));
  } else {
    SKILLDB_ASSIGN_OR_RETURN(int version, ReadVersion(*db));
    if (version < 0) {
      return Status::Corruption(name + " is not a " + schema.store +
                                " (it has no meta table)");
    }
    if (version > schema.version) {
      return Status::FailedPrecondition(
          name + " has schema version " + std::to_string(version) +
          ", newer than this build's " + std::to_string(schema.version));
    }
  }
  for (const SqliteTable& t : schema.tables) {
    SKILLDB_RETURN_IF_ERROR(db->CheckLayout(t));
  }
  return db;
}

// Creates a new store's tables, migrates an older one, refuses a newer one;
// all in one transaction, so concurrent opens see one or the other.
Status SqliteDb::Migrate(const SqliteSchema& schema,
                         const SqliteOpenOptions&) {
  SqliteTransaction tx(*this);
  SKILLDB_RETURN_IF_ERROR(tx.Begin());
  SKILLDB_ASSIGN_OR_RETURN(int version, ReadVersion(*this));
  if (version < 0) {
    SKILLDB_ASSIGN_OR_RETURN(bool has_tables, HasTables(*this));
    if (has_tables) {
      return Status::Corruption(name_ + " is not a " + schema.store +
                                " (it has tables but no meta table)");
    }
    SKILLDB_RETURN_IF_ERROR(Exec(
        "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT "
        "NOT NULL)",
        name_));
    SKILLDB_ASSIGN_OR_RETURN(
        SqliteStatement put,
        Prepare("INSERT INTO meta(key, value) VALUES('schema_version', ?1)",
                name_));
    SKILLDB_RETURN_IF_ERROR(
        put.Text(1, std::to_string(schema.version)).Run(name_));
    version = schema.version;
  }
  if (version > schema.version) {
    return Status::FailedPrecondition(
        name_ + " has schema version " + std::to_string(version) +
        ", newer than this build's " + std::to_string(schema.version));
  }
  for (const SqliteMigration& m : schema.migrations) {
    if (version >= schema.version) break;  // a new file, or up to date
    if (m.from < version) continue;
    if (m.from != version) break;
    SKILLDB_RETURN_IF_ERROR(
        Exec(m.sql, name_ + ": upgrading from schema version " +
                        std::to_string(m.from)));
    ++version;
  }
  if (version != schema.version) {
    return Status::FailedPrecondition(
        name_ + " has schema version " + std::to_string(version) +
        ", which this build cannot upgrade to " +
        std::to_string(schema.version));
  }
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement set,
      Prepare("UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
              name_));
  SKILLDB_RETURN_IF_ERROR(
      set.Text(1, std::to_string(schema.version)).Run(name_));
  for (const SqliteTable& t : schema.tables) {
    SKILLDB_RETURN_IF_ERROR(Exec(t.CreateSql(), name_));
  }
  for (const std::string& index : schema.indexes) {
    SKILLDB_RETURN_IF_ERROR(Exec(index, name_));
  }
  return tx.Commit();
}

Status SqliteDb::CheckLayout(const SqliteTable& table) const {
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement info,
      Prepare("SELECT name FROM pragma_table_info(?1)", name_));
  info.Text(1, table.name);
  std::vector<std::string> found;
  while (true) {
    SKILLDB_ASSIGN_OR_RETURN(bool row, info.Step(name_));
    if (!row) break;
    found.push_back(info.ColText(0));
  }
  std::vector<std::string> expected;
  for (const SqliteColumn& c : table.columns) expected.push_back(c.name);
  const std::set<std::string> a(found.begin(), found.end());
  const std::set<std::string> b(expected.begin(), expected.end());
  if (a == b) return Status::Ok();
  if (found.empty()) {
    return Status::Corruption(name_ + " has no table '" + table.name +
                              "'; this build expects (" + Join(expected) +
                              ")");
  }
  return Status::Corruption(name_ + ": table '" + table.name +
                            "' has columns (" + Join(found) +
                            "); this build expects (" + Join(expected) + ")");
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::Create(std::string_view path,
                                                   std::string_view what) {
  const std::string p(path);
  const std::string name = std::string(what) + " '" + p + "'";
  if (Exists(p)) return Status::AlreadyExists(name + " exists already");
  auto wrap = [](std::string a, std::string b, sqlite3* h) {
    return std::unique_ptr<SqliteDb>(new SqliteDb(std::move(a), std::move(b), h));
  };
  return OpenConnection(p, false, true, 10000, name, wrap);
}

Status SqliteDb::Exec(std::string_view sql, std::string_view context) const {
  const std::string text(sql);
  char* error = nullptr;
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error) ==
      SQLITE_OK) {
    return Status::Ok();
  }
  Status s = SqliteError(db_, context);
  sqlite3_free(error);
  return s;
}

Result<SqliteStatement> SqliteDb::Prepare(std::string_view sql,
                                          std::string_view context) const {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.data(),
                                    static_cast<int>(sql.size()), &stmt,
                                    nullptr);
  if (rc != SQLITE_OK || stmt == nullptr) {
    // The message is read now, before anything else can replace it.
    Status s = SqliteError(db_, context);
    sqlite3_finalize(stmt);
    if (rc == SQLITE_OK) s = Status::Internal(std::string(context) + ": empty statement");
    return Status(s.code() == StatusCode::kIOError ? StatusCode::kCorruption
                                                   : s.code(),
                  s.message() + " (in: " + std::string(sql.substr(0, 200)) +
                      ")");
  }
  return SqliteStatement(db_, stmt);
}

int64_t SqliteDb::Changes() const { return sqlite3_changes(db_); }

// SqliteStatement ---------------------------------------------------------------

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      bind_error_(std::move(other.bind_error_)) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    bind_error_ = std::move(other.bind_error_);
  }
  return *this;
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

void SqliteStatement::Bound(int rc, int i) {
  if (rc == SQLITE_OK || !bind_error_.ok()) return;
  bind_error_ = Status(rc == SQLITE_TOOBIG ? StatusCode::kInvalidArgument
                                           : StatusCode::kInternal,
                       "binding parameter " + std::to_string(i) + ": " +
                           sqlite3_errstr(rc));
}

SqliteStatement& SqliteStatement::Text(int i, std::string_view v) {
  if (v.size() > static_cast<size_t>(INT_MAX)) {
    Bound(SQLITE_TOOBIG, i);
    return *this;
  }
  // A null pointer would bind SQL NULL; empty text stays text.
  Bound(sqlite3_bind_text(stmt_, i, v.empty() ? "" : v.data(),
                          static_cast<int>(v.size()), SQLITE_TRANSIENT),
        i);
  return *this;
}

SqliteStatement& SqliteStatement::Int(int i, int64_t v) {
  Bound(sqlite3_bind_int64(stmt_, i, v), i);
  return *this;
}

SqliteStatement& SqliteStatement::Real(int i, double v) {
  Bound(sqlite3_bind_double(stmt_, i, v), i);
  return *this;
}

SqliteStatement& SqliteStatement::Null(int i) {
  Bound(sqlite3_bind_null(stmt_, i), i);
  return *this;
}

SqliteStatement& SqliteStatement::Blob(int i, const void* data, size_t size) {
  if (size > static_cast<size_t>(INT_MAX)) {
    Bound(SQLITE_TOOBIG, i);
    return *this;
  }
  Bound(sqlite3_bind_blob(stmt_, i, size == 0 ? "" : data,
                          static_cast<int>(size), SQLITE_TRANSIENT),
        i);
  return *this;
}

Result<bool> SqliteStatement::Step(std::string_view context) {
  if (!bind_error_.ok()) return bind_error_.WithContext(context);
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, context);
}

Status SqliteStatement::Run(std::string_view context) {
  while (true) {
    SKILLDB_ASSIGN_OR_RETURN(bool row, Step(context));
    if (!row) return Status::Ok();
  }
}

SqliteStatement& SqliteStatement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_error_ = Status::Ok();
  return *this;
}

std::string SqliteStatement::ColText(int i) const {
  const unsigned char* p = sqlite3_column_text(stmt_, i);
  const int n = sqlite3_column_bytes(stmt_, i);
  return p == nullptr ? std::string()
                      : std::string(reinterpret_cast<const char*>(p),
                                    static_cast<size_t>(n));
}

int64_t SqliteStatement::ColInt(int i) const {
  return sqlite3_column_int64(stmt_, i);
}

double SqliteStatement::ColReal(int i) const {
  return sqlite3_column_double(stmt_, i);
}

bool SqliteStatement::ColNull(int i) const {
  return sqlite3_column_type(stmt_, i) == SQLITE_NULL;
}

std::string SqliteStatement::ColBlob(int i) const {
  const void* p = sqlite3_column_blob(stmt_, i);
  const int n = sqlite3_column_bytes(stmt_, i);
  return p == nullptr ? std::string()
                      : std::string(static_cast<const char*>(p),
                                    static_cast<size_t>(n));
}

// SqliteTransaction -------------------------------------------------------------

SqliteTransaction::~SqliteTransaction() {
  if (open_) (void)db_.Exec("ROLLBACK", "rolling back");
}

Status SqliteTransaction::Begin() {
  SKILLDB_RETURN_IF_ERROR(db_.Exec("BEGIN IMMEDIATE", db_.name()));
  open_ = true;
  return Status::Ok();
}

Status SqliteTransaction::Commit() {
  SKILLDB_RETURN_IF_ERROR(db_.Exec("COMMIT", db_.name()));
  open_ = false;
  return Status::Ok();
}

// Free functions ----------------------------------------------------------------

Status SqliteError(sqlite3* db, std::string_view context) {
  const int code = db != nullptr ? sqlite3_extended_errcode(db) : SQLITE_CANTOPEN;
  std::string message = std::string(context) + ": " +
                        (db != nullptr ? sqlite3_errmsg(db) : "out of memory");
  switch (code & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::Corruption(std::move(message));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable(std::move(message));
    case SQLITE_READONLY:
      return Status::FailedPrecondition(std::move(message));
    case SQLITE_CONSTRAINT:
      if (code == SQLITE_CONSTRAINT_PRIMARYKEY ||
          code == SQLITE_CONSTRAINT_UNIQUE) {
        return Status::AlreadyExists(std::move(message));
      }
      return Status::Corruption(std::move(message));
    default:
      return Status::IOError(std::move(message));
  }
}

std::string SidecarPath(std::string_view library_path,
                        std::string_view suffix) {
  std::string p(library_path);
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p + std::string(suffix);
}

}  // namespace skilldb::util
