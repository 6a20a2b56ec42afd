// SQLite the way skilldb's side stores use it (the rollout store, the
// embedding store, `skilldb export --sqlite`): a connection that knows its
// schema, prepared statements whose failures cannot go unnoticed, and the
// "<library>.<name>.sqlite" path beside a library. Part of the helpers
// skilldb's modules share (skilldb/util/); its implementation is the
// skilldb_sqlite target (api/CMakeLists.txt), built only where SQLite is
// found: the standalone verify/, models/ and trainer/ builds have no SQLite
// and never include this header. No SQLite type appears here.
//
// A store's schema is one description (SqliteSchema): the CREATE TABLE
// statements, every INSERT and SELECT column list, and the layout check on
// open all come from it, so a statement never reads or writes columns by
// the file's positions and a file with another layout (an older store, a
// table re-created by hand) is refused with a message naming the store, the
// table, the columns it has and the ones this build expects.
//
// Thread safety: a SqliteDb is opened in serialized mode (SQLite's own
// mutex); a SqliteStatement belongs to one thread at a time.
#ifndef SKILLDB_UTIL_SQLITE_H_
#define SKILLDB_UTIL_SQLITE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace skilldb::util {

struct SqliteColumn {
  std::string name;
  std::string type;  // "TEXT NOT NULL", "INTEGER NOT NULL DEFAULT 0", "BLOB"
};

// One table a store owns. Its column order is the order of every INSERT
// and SELECT list made from it (Insert(), Select()), so readers index
// columns by this order, never by the file's.
struct SqliteTable {
  std::string name;
  std::vector<SqliteColumn> columns;
  // Table constraints after the columns, e.g. "PRIMARY KEY (a, b)".
  std::string constraints;
  std::string options;  // after the closing parenthesis: "WITHOUT ROWID"

  // CREATE TABLE IF NOT EXISTS name(columns..., constraints) options.
  std::string CreateSql() const;
  // "a, b, c".
  std::string ColumnList() const;
  // "<verb> INTO name(a, b, c) VALUES(?1, ?2, ?3)"; verb "INSERT" or
  // "INSERT OR REPLACE".
  std::string Insert(std::string_view verb = "INSERT") const;
  // "SELECT a, b, c FROM name".
  std::string Select() const;
  // The position of column `name` in this description. REQUIRES: it is one.
  int Column(std::string_view name) const;
};

// Upgrades a store from schema version `from` to `from + 1`: statements
// run inside the open's transaction (e.g. ALTER TABLE ... ADD COLUMN).
struct SqliteMigration {
  int from = 0;
  std::string sql;
};

struct SqliteSchema {
  std::string store;  // names the store in messages: "rollout store"
  int version = 1;    // this build's; kept in meta(key, value) as
                      // 'schema_version'
  std::vector<SqliteTable> tables;
  // Run after the tables are created or checked: CREATE INDEX IF NOT
  // EXISTS ...
  std::vector<std::string> indexes;
  // One per version step from the oldest readable one, in order.
  std::vector<SqliteMigration> migrations;
};

struct SqliteOpenOptions {
  bool read_only = false;  // open without writing. Default: false.
  // Create the file when it does not exist (writable opens only). A read
  // never creates a file. Default: false.
  bool create = false;
  // Wait this long for another connection's lock. Default: 10000.
  int busy_timeout_ms = 10000;
};

class SqliteStatement;

class SqliteDb {
 public:
  // Opens the store at `path` (WAL mode, a busy timeout) and brings it to
  // `schema`: a new file gets every table; an older version is migrated
  // (a read-only open migrates through a short writable connection when
  // the file allows it, and is refused otherwise); then every table's
  // columns are checked against the schema. Errors:
  // NotFound for a missing file unless options.create (and always when
  // read-only); FailedPrecondition for a schema version newer than
  // schema.version, or older on a read-only open; Corruption when the file
  // is not this kind of store, its version is unreadable, or a table's
  // columns differ from the schema's (naming store, table, the columns
  // found and expected); IOError for other SQLite failures. Messages name
  // the store and path.
  static Result<std::unique_ptr<SqliteDb>> Open(std::string_view path,
                                                const SqliteSchema& schema,
                                                const SqliteOpenOptions& options);
  // A fresh database at `path` with no schema management (the caller runs
  // its own CREATE statements): `skilldb export --sqlite`'s output. It must
  // not exist yet. `what` names it in messages.
  static Result<std::unique_ptr<SqliteDb>> Create(std::string_view path,
                                                  std::string_view what);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  const std::string& path() const { return path_; }
  // "<store> '<path>'", for messages.
  const std::string& name() const { return name_; }
  sqlite3* handle() const { return db_; }

  // Runs `sql` (statements without results). Errors as SqliteError's.
  Status Exec(std::string_view sql, std::string_view context) const;
  // Prepares one statement. A statement that does not prepare (a table or
  // column the file lacks) is an error here, never a null statement used
  // later. Errors as SqliteError's, with the statement's text.
  Result<SqliteStatement> Prepare(std::string_view sql,
                                  std::string_view context) const;
  // The rows changed by the last INSERT, UPDATE or DELETE.
  int64_t Changes() const;

 private:
  SqliteDb(std::string path, std::string name, sqlite3* db);
  Status Migrate(const SqliteSchema& schema, const SqliteOpenOptions& options);
  Status CheckLayout(const SqliteTable& table) const;

  std::string path_;
  std::string name_;
  sqlite3* db_;
};

// One prepared statement; binds are 1-based, columns 0-based. A bind that
// fails (an index out of range, a value too large) is remembered and
// returned by the next Step, so no write goes ahead with a value missing.
class SqliteStatement {
 public:
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  ~SqliteStatement();

  SqliteStatement& Text(int i, std::string_view v);
  SqliteStatement& Int(int i, int64_t v);
  SqliteStatement& Real(int i, double v);
  SqliteStatement& Null(int i);
  SqliteStatement& Blob(int i, const void* data, size_t size);

  // Steps once: true with a row, false when done. Errors: the remembered
  // bind error, else SqliteError's for the step.
  Result<bool> Step(std::string_view context);
  // Steps to the end (writes).
  Status Run(std::string_view context);
  // Ready to run again: reset, bindings cleared, bind error forgotten.
  SqliteStatement& Reset();

  std::string ColText(int i) const;  // whole, NUL bytes included
  int64_t ColInt(int i) const;
  double ColReal(int i) const;
  bool ColNull(int i) const;
  std::string ColBlob(int i) const;

 private:
  friend class SqliteDb;
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  void Bound(int rc, int i);

  sqlite3* db_;
  sqlite3_stmt* stmt_;
  Status bind_error_;
};

// BEGIN IMMEDIATE ... COMMIT on `db`, rolled back when not committed.
class SqliteTransaction {
 public:
  explicit SqliteTransaction(const SqliteDb& db) : db_(db) {}
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;
  Status Begin();
  Status Commit();

 private:
  const SqliteDb& db_;
  bool open_ = false;
};

// The Status for SQLite's current error on `db`, "`context`: <message>":
// Corruption for a damaged file or one that is not a database, Unavailable
// for a lock held too long, FailedPrecondition for a read-only file,
// AlreadyExists for a primary key or unique constraint, Corruption for any
// other constraint (a layout this build did not write), IOError otherwise.
Status SqliteError(sqlite3* db, std::string_view context);

// "<library path without trailing slashes><suffix>": a store beside a
// library (a sibling of its directory, never inside it: the directory
// belongs to RocksDB). suffix e.g. ".rollouts.sqlite".
std::string SidecarPath(std::string_view library_path, std::string_view suffix);

}  // namespace skilldb::util

#endif  // SKILLDB_UTIL_SQLITE_H_
