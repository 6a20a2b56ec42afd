#include "skilldb/util/sqlite.h"

#include <doctest/doctest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace skilldb::util {
namespace {

// A path in the temporary directory, removed (with its WAL files) at the
// end of the test.
struct TempPath {
  std::string path = "/tmp/skilldb-sqlite-test-" + std::to_string(::getpid()) +
                     "-" + std::to_string(++counter) + ".sqlite";
  static inline int counter = 0;
  ~TempPath() {
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::remove((path + suffix).c_str());
    }
  }
};

// Runs `sql` on `path` with SQLite itself, as a user with the sqlite3 shell
// would.
void Raw(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  INFO(sql << ": " << (error ? error : ""));
  sqlite3_free(error);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

SqliteSchema Schema(int version = 2) {
  SqliteSchema s;
  s.store = "test store";
  s.version = version;
  s.tables = {{"items",
               {{"id", "TEXT PRIMARY KEY"},
                {"value", "INTEGER NOT NULL"},
                {"note", "TEXT NOT NULL DEFAULT ''"}},
               "",
               ""}};
  s.migrations = {
      {1, "ALTER TABLE items ADD COLUMN note TEXT NOT NULL DEFAULT '';"}};
  if (version == 1) s.tables[0].columns.pop_back();
  return s;
}

TEST_CASE("a store is created only when asked, and a read never creates one") {
  TempPath t;
  CHECK(SqliteDb::Open(t.path, Schema(), {}).status().code() ==
        StatusCode::kNotFound);
  CHECK(SqliteDb::Open(t.path, Schema(), {.read_only = true, .create = true})
            .status()
            .code() == StatusCode::kNotFound);
  CHECK(::access(t.path.c_str(), F_OK) != 0);
  auto db = SqliteDb::Open(t.path, Schema(), {.create = true});
  REQUIRE_MESSAGE(db.ok(), db.status().ToString());
  CHECK(::access(t.path.c_str(), F_OK) == 0);
}

TEST_CASE("statements name their columns, so a reordered table reads right") {
  TempPath t;
  // The same columns in another order, as a table re-created by hand.
  Raw(t.path,
      "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
      "INSERT INTO meta VALUES('schema_version', '2');"
      "CREATE TABLE items(note TEXT NOT NULL DEFAULT '', value INTEGER NOT "
      "NULL, id TEXT PRIMARY KEY);");
  auto db = SqliteDb::Open(t.path, Schema(), {});
  REQUIRE_MESSAGE(db.ok(), db.status().ToString());
  const SqliteSchema schema = Schema();
  const SqliteTable& items = schema.tables[0];
  auto put = (*db)->Prepare(items.Insert(), "put");
  REQUIRE(put.ok());
  REQUIRE(put->Text(1, "a").Int(2, 7).Text(3, "n").Run("put").ok());
  auto get = (*db)->Prepare(items.Select(), "get");
  REQUIRE(get.ok());
  REQUIRE(*get->Step("get"));
  CHECK(get->ColText(items.Column("id")) == "a");
  CHECK(get->ColInt(items.Column("value")) == 7);
  CHECK(get->ColText(items.Column("note")) == "n");
}

TEST_CASE("a table with other columns is refused naming store, table, layout") {
  TempPath t;
  Raw(t.path,
      "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
      "INSERT INTO meta VALUES('schema_version', '2');"
      "CREATE TABLE items(id TEXT PRIMARY KEY, amount INTEGER);");
  for (bool read_only : {false, true}) {
    auto db = SqliteDb::Open(t.path, Schema(), {.read_only = read_only});
    REQUIRE_FALSE(db.ok());
    CHECK(db.status().code() == StatusCode::kCorruption);
    const std::string& m = db.status().message();
    CHECK(m.find("test store '" + t.path + "'") != std::string::npos);
    CHECK(m.find("table 'items' has columns (id, amount)") !=
          std::string::npos);
    CHECK(m.find("expects (id, value, note)") != std::string::npos);
  }
}

TEST_CASE("a statement that does not prepare is an error, never a crash") {
  TempPath t;
  auto db = SqliteDb::Open(t.path, Schema(), {.create = true});
  REQUIRE(db.ok());
  auto s = (*db)->Prepare("SELECT missing_column FROM items", "reading");
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kCorruption);
  CHECK(s.status().message().find("no such column") != std::string::npos);
}

TEST_CASE("a failed bind stops the write it belongs to") {
  TempPath t;
  auto db = SqliteDb::Open(t.path, Schema(), {.create = true});
  REQUIRE(db.ok());
  auto s = (*db)->Prepare(Schema().tables[0].Insert(), "put");
  REQUIRE(s.ok());
  s->Text(1, "a").Int(2, 1).Text(3, "n").Int(9, 5);  // no parameter 9
  CHECK_FALSE(s->Run("put").ok());
  auto n = (*db)->Prepare("SELECT count(*) FROM items", "count");
  REQUIRE(n.ok());
  REQUIRE(*n->Step("count"));
  CHECK(n->ColInt(0) == 0);
}

TEST_CASE("an older store is migrated on open, read-only opens included") {
  TempPath t;
  {
    auto v1 = SqliteDb::Open(t.path, Schema(1), {.create = true});
    REQUIRE_MESSAGE(v1.ok(), v1.status().ToString());
    auto put = (*v1)->Prepare(Schema(1).tables[0].Insert(), "put");
    REQUIRE(put.ok());
    REQUIRE(put->Text(1, "a").Int(2, 3).Run("put").ok());
  }
  auto ro = SqliteDb::Open(t.path, Schema(2), {.read_only = true});
  REQUIRE_MESSAGE(ro.ok(), ro.status().ToString());
  auto get = (*ro)->Prepare(Schema(2).tables[0].Select(), "get");
  REQUIRE(get.ok());
  REQUIRE(*get->Step("get"));
  CHECK(get->ColInt(1) == 3);
  CHECK(get->ColText(2).empty());
  auto version = (*ro)->Prepare(
      "SELECT value FROM meta WHERE key = 'schema_version'", "version");
  REQUIRE(version.ok());
  REQUIRE(*version->Step("version"));
  CHECK(version->ColText(0) == "2");
}

TEST_CASE("a newer store or an unreadable version is refused") {
  TempPath t;
  Raw(t.path,
      "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
      "INSERT INTO meta VALUES('schema_version', '3');");
  CHECK(SqliteDb::Open(t.path, Schema(), {}).status().code() ==
        StatusCode::kFailedPrecondition);
  Raw(t.path, "UPDATE meta SET value = '99999999999999999999'");
  CHECK(SqliteDb::Open(t.path, Schema(), {}).status().code() ==
        StatusCode::kCorruption);
  TempPath other;
  Raw(other.path, "CREATE TABLE unrelated(x);");
  CHECK(SqliteDb::Open(other.path, Schema(), {}).status().code() ==
        StatusCode::kCorruption);
}

TEST_CASE("a store sits beside its library") {
  CHECK(SidecarPath("/data/lib/", ".rollouts.sqlite") ==
        "/data/lib.rollouts.sqlite");
  CHECK(SidecarPath("lib", ".embeddings.sqlite") == "lib.embeddings.sqlite");
}

}  // namespace
}  // namespace skilldb::util
