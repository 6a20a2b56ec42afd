#include "skilldb/rerank/embedding_store.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <set>
#include <utility>

namespace skilldb::rerank {
namespace {

constexpr int kSchemaVersion = 1;

// Vectors are stored as float32 in the host's byte order; the store
// refuses to open on a big-endian host rather than misread them.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS model(
  weights TEXT PRIMARY KEY, model_id TEXT NOT NULL, dimension INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS embedding(
  weights TEXT NOT NULL, id TEXT NOT NULL, revision INTEGER NOT NULL,
  vector BLOB NOT NULL, PRIMARY KEY(weights, id, revision)) WITHOUT ROWID;
)sql";

Status Error(sqlite3* db, const std::string& what) {
  const int code = db ? sqlite3_errcode(db) : SQLITE_CANTOPEN;
  const std::string msg = what + ": " + (db ? sqlite3_errmsg(db) : "no handle");
  switch (code) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::Corruption(msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable(msg);
    case SQLITE_READONLY:
      return Status::FailedPrecondition(msg);
    default:
      return Status::IOError(msg);
  }
}

// A prepared statement, finalized on destruction.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
      stmt_ = nullptr;
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  void Text(int i, std::string_view v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()),
                      SQLITE_TRANSIENT);
  }
  void Int(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void Blob(int i, const void* p, size_t n) {
    sqlite3_bind_blob(stmt_, i, p, static_cast<int>(n), SQLITE_TRANSIENT);
  }
  // SQLITE_ROW -> true, SQLITE_DONE -> false, otherwise an error.
  Result<bool> Step(const std::string& what) {
    if (!stmt_) return Error(db_, what);
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return Error(db_, what);
  }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string ColText(int i) {
    const auto* p = sqlite3_column_text(stmt_, i);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  int64_t ColInt(int i) { return sqlite3_column_int64(stmt_, i); }
  std::pair<const void*, size_t> ColBlob(int i) {
    return {sqlite3_column_blob(stmt_, i),
            static_cast<size_t>(sqlite3_column_bytes(stmt_, i))};
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

Status Exec(sqlite3* db, const char* sql, const std::string& what) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    Status s = Error(db, what);
    sqlite3_free(err);
    return s;
  }
  return Status::Ok();
}

bool LittleEndian() {
  const uint32_t one = 1;
  unsigned char b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

}  // namespace

struct EmbeddingStore::Db {
  sqlite3* handle = nullptr;
  ~Db() { sqlite3_close(handle); }
};

std::string DefaultEmbeddingStorePath(std::string_view library_path) {
  std::string p(library_path);
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p + ".embeddings.sqlite";
}

EmbeddingStore::EmbeddingStore(std::string path, std::unique_ptr<Db> db,
                               bool read_only)
    : path_(std::move(path)), read_only_(read_only), db_(std::move(db)) {}

EmbeddingStore::~EmbeddingStore() = default;

Result<std::unique_ptr<EmbeddingStore>> EmbeddingStore::Open(
    std::string_view path, const EmbeddingStoreOptions& options) {
  const std::string p(path);
  const std::string ctx = "embedding store '" + p + "'";
  if (!LittleEndian()) {
    return Status::NotSupported(ctx + ": big-endian hosts are not supported");
  }
  struct stat st;
  if (options.read_only && ::stat(p.c_str(), &st) != 0) {
    return Status::NotFound("no embedding store at '" + p +
                            "' (skilldb embed computes one)");
  }
  auto db = std::make_unique<Db>();
  const int flags =
      (options.read_only ? SQLITE_OPEN_READONLY
                         : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
      SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(p.c_str(), &db->handle, flags, nullptr) != SQLITE_OK) {
    return Error(db->handle, "opening " + ctx);
  }
  sqlite3_busy_timeout(db->handle, options.busy_timeout_ms);
  if (!options.read_only) {
    SKILLDB_RETURN_IF_ERROR(
        Exec(db->handle, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
             ctx));
    SKILLDB_RETURN_IF_ERROR(Exec(db->handle, kSchema, ctx));
    Statement meta(db->handle,
                   "INSERT OR IGNORE INTO meta(key, value) "
                   "VALUES('schema_version', ?)");
    meta.Text(1, std::to_string(kSchemaVersion));
    SKILLDB_RETURN_IF_ERROR(meta.Step(ctx).status());
  }
  Statement version(db->handle,
                    "SELECT value FROM meta WHERE key = 'schema_version'");
  if (!version.ok()) {
    return Status::Corruption(
        ctx + " is not an embedding store: " + sqlite3_errmsg(db->handle));
  }
  SKILLDB_ASSIGN_OR_RETURN(bool row, version.Step(ctx));
  if (!row) return Status::Corruption(ctx + " has no schema version");
  const std::string v = version.ColText(0);
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) {
    return Status::Corruption(ctx + " has schema version '" + v + "'");
  }
  if (std::stoll(v) > kSchemaVersion) {
    return Status::FailedPrecondition(ctx + " has schema version " + v +
                                      ", newer than this build's " +
                                      std::to_string(kSchemaVersion));
  }
  return std::unique_ptr<EmbeddingStore>(
      new EmbeddingStore(p, std::move(db), options.read_only));
}

Status EmbeddingStore::RegisterModel(const EmbeddingModel& model) {
  const std::string ctx = "embedding store '" + path_ + "'";
  if (model.dimension <= 0) {
    return Status::InvalidArgument("model '" + model.model_id +
                                   "' has dimension " +
                                   std::to_string(model.dimension));
  }
  if (model.weights_sha256.empty()) {
    return Status::InvalidArgument("model '" + model.model_id +
                                   "' has no weights hash");
  }
  SKILLDB_ASSIGN_OR_RETURN(std::vector<EmbeddingModel> models, Models());
  for (const EmbeddingModel& m : models) {
    if (m.weights_sha256 != model.weights_sha256) continue;
    if (m.dimension != model.dimension) {
      return Status::InvalidArgument(ctx + " holds weights " +
                                     m.weights_sha256 + " with dimension " +
                                     std::to_string(m.dimension) + ", not " +
                                     std::to_string(model.dimension));
    }
    return Status::Ok();
  }
  if (read_only_) {
    return Status::FailedPrecondition(ctx + " is open read-only");
  }
  Statement s(db_->handle,
              "INSERT INTO model(weights, model_id, dimension) VALUES(?,?,?)");
  s.Text(1, model.weights_sha256);
  s.Text(2, model.model_id);
  s.Int(3, model.dimension);
  return s.Step("registering a model in " + ctx).status();
}

Result<std::vector<EmbeddingModel>> EmbeddingStore::Models() {
  const std::string ctx = "reading models of embedding store '" + path_ + "'";
  Statement s(
      db_->handle,
      "SELECT weights, model_id, dimension FROM model ORDER BY weights");
  std::vector<EmbeddingModel> out;
  while (true) {
    SKILLDB_ASSIGN_OR_RETURN(bool row, s.Step(ctx));
    if (!row) break;
    out.push_back({s.ColText(0), s.ColText(1), static_cast<int>(s.ColInt(2))});
  }
  return out;
}

Result<std::vector<std::optional<std::vector<float>>>> EmbeddingStore::Get(
    std::string_view weights_sha256, const std::vector<RevisionKey>& keys) {
  const std::string ctx = "reading embedding store '" + path_ + "'";
  Statement s(db_->handle,
              "SELECT vector FROM embedding WHERE weights = ? AND id = ? "
              "AND revision = ?");
  std::vector<std::optional<std::vector<float>>> out(keys.size());
  size_t dimension = 0;  // the first vector's: all must agree
  for (size_t i = 0; i < keys.size(); ++i) {
    s.Reset();
    s.Text(1, weights_sha256);
    s.Text(2, keys[i].id);
    s.Int(3, static_cast<int64_t>(keys[i].revision));
    SKILLDB_ASSIGN_OR_RETURN(bool row, s.Step(ctx));
    if (!row) continue;
    auto [p, n] = s.ColBlob(0);
    if (n == 0 || n % sizeof(float) != 0 ||
        (dimension != 0 && n / sizeof(float) != dimension)) {
      return Status::Corruption(ctx + ": the embedding of " + keys[i].id +
                                " at revision " +
                                std::to_string(keys[i].revision) + " has " +
                                std::to_string(n) + " bytes");
    }
    dimension = n / sizeof(float);
    std::vector<float> v(dimension);
    std::memcpy(v.data(), p, n);
    out[i] = std::move(v);
  }
  return out;
}

Status EmbeddingStore::Put(std::string_view weights_sha256,
                           const std::vector<StoredEmbedding>& embeddings) {
  const std::string ctx = "writing embedding store '" + path_ + "'";
  if (read_only_) {
    return Status::FailedPrecondition("embedding store '" + path_ +
                                      "' is open read-only");
  }
  SKILLDB_ASSIGN_OR_RETURN(std::vector<EmbeddingModel> models, Models());
  int dimension = 0;
  for (const EmbeddingModel& m : models) {
    if (m.weights_sha256 == weights_sha256) dimension = m.dimension;
  }
  if (dimension == 0) {
    return Status::InvalidArgument("weights " + std::string(weights_sha256) +
                                   " are not registered in embedding store '" +
                                   path_ + "'");
  }
  for (const StoredEmbedding& e : embeddings) {
    if (e.vector.size() != static_cast<size_t>(dimension)) {
      return Status::InvalidArgument("the embedding of " + e.key.id + " has " +
                                     std::to_string(e.vector.size()) +
                                     " values, the model " +
                                     std::to_string(dimension));
    }
    for (float x : e.vector) {
      if (!std::isfinite(x)) {
        return Status::InvalidArgument("the embedding of " + e.key.id +
                                       " has a non-finite value");
      }
    }
  }
  SKILLDB_RETURN_IF_ERROR(Exec(db_->handle, "BEGIN IMMEDIATE", ctx));
  Statement s(db_->handle,
              "INSERT OR REPLACE INTO embedding(weights, id, revision, vector) "
              "VALUES(?,?,?,?)");
  for (const StoredEmbedding& e : embeddings) {
    s.Reset();
    s.Text(1, weights_sha256);
    s.Text(2, e.key.id);
    s.Int(3, static_cast<int64_t>(e.key.revision));
    s.Blob(4, e.vector.data(), e.vector.size() * sizeof(float));
    auto r = s.Step(ctx);
    if (!r.ok()) {
      (void)Exec(db_->handle, "ROLLBACK", ctx);
      return r.status();
    }
  }
  Status c = Exec(db_->handle, "COMMIT", ctx);
  if (!c.ok()) (void)Exec(db_->handle, "ROLLBACK", ctx);
  return c;
}

Result<uint64_t> EmbeddingStore::Count(std::string_view weights_sha256) {
  Statement s(db_->handle, "SELECT count(*) FROM embedding WHERE weights = ?");
  s.Text(1, weights_sha256);
  SKILLDB_ASSIGN_OR_RETURN(bool row,
                           s.Step("counting embedding store '" + path_ + "'"));
  return row ? static_cast<uint64_t>(s.ColInt(0)) : 0;
}

Result<uint64_t> EmbeddingStore::Prune(std::string_view weights_sha256,
                                       const std::vector<RevisionKey>& keep) {
  const std::string ctx = "pruning embedding store '" + path_ + "'";
  if (read_only_) {
    return Status::FailedPrecondition("embedding store '" + path_ +
                                      "' is open read-only");
  }
  std::set<std::pair<std::string, Version>> kept;
  for (const RevisionKey& k : keep) kept.emplace(k.id, k.revision);
  std::vector<RevisionKey> drop;
  {
    Statement s(db_->handle,
                "SELECT id, revision FROM embedding WHERE weights = ?");
    s.Text(1, weights_sha256);
    while (true) {
      SKILLDB_ASSIGN_OR_RETURN(bool row, s.Step(ctx));
      if (!row) break;
      RevisionKey k{s.ColText(0), static_cast<Version>(s.ColInt(1))};
      if (!kept.count({k.id, k.revision})) drop.push_back(std::move(k));
    }
  }
  if (drop.empty()) return 0;
  SKILLDB_RETURN_IF_ERROR(Exec(db_->handle, "BEGIN IMMEDIATE", ctx));
  Statement d(db_->handle,
              "DELETE FROM embedding WHERE weights = ? AND id = ? AND "
              "revision = ?");
  for (const RevisionKey& k : drop) {
    d.Reset();
    d.Text(1, weights_sha256);
    d.Text(2, k.id);
    d.Int(3, static_cast<int64_t>(k.revision));
    auto r = d.Step(ctx);
    if (!r.ok()) {
      (void)Exec(db_->handle, "ROLLBACK", ctx);
      return r.status();
    }
  }
  Status c = Exec(db_->handle, "COMMIT", ctx);
  if (!c.ok()) {
    (void)Exec(db_->handle, "ROLLBACK", ctx);
    return c;
  }
  return static_cast<uint64_t>(drop.size());
}

}  // namespace skilldb::rerank
