// SQLite FTS5 driver: a contentless table (content='', so no copy of the
// text is stored; the columnsize table that bm25() needs is kept) with the
// 'ascii' tokenizer (the corpus is pre-tokenized to [a-z0-9]+ terms), rowid =
// line number + 1, one transaction, then 'optimize' (merge to one b-tree).
// detail=full is kept: with detail=none/column FTS5 has no term frequencies
// and bm25() degrades. Query: `"t1" OR "t2" ...` ranked by bm25() (k1 1.2,
// b 0.75; FTS5's idf is ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6, and
// its tf part carries (k1 + 1)): ORDER BY rank LIMIT k. FTS5 scores every
// matching row before taking the top k (no dynamic pruning).
#include <sqlite3.h>

#include <filesystem>
#include <memory>
#include <string>

#include "bench_common.h"

namespace skilldb::bench {
namespace {

void Check(int rc, sqlite3* db, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    Die(std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "?"));
  }
}

void Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err ? err : "?";
    sqlite3_free(err);
    Die(std::string(sql) + ": " + m);
  }
}

std::string MatchExpr(const Query& q) {
  std::string m;
  for (const auto& t : q.terms) {
    if (!m.empty()) m += " OR ";
    m += "\"" + t + "\"";  // terms are [a-z0-9]+: no quote escaping needed
  }
  return m;
}

std::string DbPath(const std::string& dir) { return dir + "/fts5.db"; }

class Fts5Searcher : public Searcher {
 public:
  explicit Fts5Searcher(const std::string& dir) {
    Check(sqlite3_open_v2(DbPath(dir).c_str(), &db_,
                          SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr),
          db_, "open");
    // Read through mmap, like Lucene's MMapDirectory.
    Exec(db_, "PRAGMA mmap_size=68719476736");
    Check(sqlite3_prepare_v2(db_,
                             "SELECT rowid, bm25(docs) FROM docs WHERE docs "
                             "MATCH ?1 ORDER BY rank LIMIT ?2",
                             -1, &stmt_, nullptr),
          db_, "prepare");
  }
  ~Fts5Searcher() override {
    sqlite3_finalize(stmt_);
    sqlite3_close(db_);
  }
  void Search(const Query& q, size_t k) override {
    rows_.clear();
    std::string m = MatchExpr(q);
    sqlite3_bind_text(stmt_, 1, m.c_str(), static_cast<int>(m.size()),
                      SQLITE_TRANSIENT);
    sqlite3_bind_int64(stmt_, 2, static_cast<sqlite3_int64>(k));
    int rc;
    while ((rc = sqlite3_step(stmt_)) == SQLITE_ROW) {
      rows_.push_back({sqlite3_column_int64(stmt_, 0),
                       -sqlite3_column_double(stmt_, 1)});
    }
    Check(rc, db_, "step");
    sqlite3_reset(stmt_);
  }
  void Hits(std::vector<Hit>* hits) override {
    hits->clear();
    for (auto& [rowid, score] : rows_) hits->push_back({"", rowid - 1, score});
  }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::vector<std::pair<int64_t, double>> rows_;
};

class Fts5Engine : public Engine {
 public:
  std::string name() const override { return "sqlite-fts5"; }
  std::string notes() const override {
    return "contentless, tokenize=ascii, detail=full (positions kept: FTS5 "
           "needs them for tf), optimize after load; bm25() idf "
           "ln((N-n+.5)/(n+.5)) floored; no top-k pruning";
  }
  void Build(const std::string& dir,
             const std::function<void(const DocFn&)>& docs,
             std::map<std::string, std::string>*) override {
    std::filesystem::create_directories(dir);
    sqlite3* db = nullptr;
    Check(sqlite3_open(DbPath(dir).c_str(), &db), db, "create");
    Exec(db, "PRAGMA journal_mode=OFF");
    Exec(db, "PRAGMA synchronous=OFF");
    Exec(db, "PRAGMA cache_size=-262144");  // 256 MiB, as our block cache
    Exec(db,
         "CREATE VIRTUAL TABLE docs USING fts5(body, content='', "
         "tokenize='ascii', detail=full)");
    Exec(db, "BEGIN");
    sqlite3_stmt* ins = nullptr;
    Check(sqlite3_prepare_v2(db, "INSERT INTO docs(rowid, body) VALUES(?1, ?2)",
                             -1, &ins, nullptr),
          db, "prepare insert");
    docs([&](int64_t docno, std::string_view, std::string_view text) {
      sqlite3_bind_int64(ins, 1, docno + 1);
      sqlite3_bind_text(ins, 2, text.data(), static_cast<int>(text.size()),
                        SQLITE_STATIC);
      Check(sqlite3_step(ins), db, "insert");
      sqlite3_reset(ins);
    });
    sqlite3_finalize(ins);
    Exec(db, "COMMIT");
    Exec(db, "INSERT INTO docs(docs) VALUES('optimize')");
    Exec(db, "VACUUM");
    sqlite3_close(db);
  }
  void Open(const std::string& dir) override {
    dir_ = dir;
    first_ = std::make_unique<Fts5Searcher>(dir);  // open + schema + prepare
  }
  std::unique_ptr<Searcher> NewSearcher() override {
    if (first_) return std::move(first_);
    return std::make_unique<Fts5Searcher>(dir_);
  }

 private:
  std::string dir_;
  std::unique_ptr<Fts5Searcher> first_;
};

}  // namespace
}  // namespace skilldb::bench

int main(int argc, char** argv) {
  skilldb::bench::Fts5Engine engine;
  return skilldb::bench::Main(argc, argv, &engine);
}
