#include "skilldb/rerank/embedding_store.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <set>
#include <utility>

#include "skilldb/util/sqlite.h"

namespace skilldb::rerank {
namespace {

using util::SqliteStatement;
using util::SqliteTransaction;

// Vectors are stored as float32 in the host's byte order; the store
// refuses to open on a big-endian host rather than misread them.
util::SqliteSchema MakeSchema() {
  util::SqliteSchema s;
  s.store = "embedding store";
  s.version = 1;
  s.tables = {
      {"model",
       {{"weights", "TEXT PRIMARY KEY"},
        {"model_id", "TEXT NOT NULL"},
        {"dimension", "INTEGER NOT NULL"}},
       "",
       ""},
      {"embedding",
       {{"weights", "TEXT NOT NULL"},
        {"id", "TEXT NOT NULL"},
        {"revision", "INTEGER NOT NULL"},
        {"vector", "BLOB NOT NULL"}},
       "PRIMARY KEY(weights, id, revision)",
       "WITHOUT ROWID"},
  };
  return s;
}

const util::SqliteSchema& Schema() {
  static const util::SqliteSchema schema = MakeSchema();
  return schema;
}

bool AllFinite(const std::vector<float>& v) {
  for (float x : v) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

bool LittleEndian() {
  const uint32_t one = 1;
  unsigned char b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

}  // namespace

struct EmbeddingStore::Db {
  std::unique_ptr<util::SqliteDb> sql;
};

std::string DefaultEmbeddingStorePath(std::string_view library_path) {
  return util::SidecarPath(library_path, ".embeddings.sqlite");
}

EmbeddingStore::EmbeddingStore(std::string path, std::unique_ptr<Db> db,
                               bool read_only)
    : path_(std::move(path)), read_only_(read_only), db_(std::move(db)) {}

EmbeddingStore::~EmbeddingStore() = default;

Result<std::unique_ptr<EmbeddingStore>> EmbeddingStore::Open(
    std::string_view path, const EmbeddingStoreOptions& options) {
  if (!LittleEndian()) {
    return Status::NotSupported("embedding store '" + std::string(path) +
                                "': big-endian hosts are not supported");
  }
  auto db = std::make_unique<Db>();
  auto opened = util::SqliteDb::Open(
      path, Schema(),
      {.read_only = options.read_only,
       .create = options.create,
       .busy_timeout_ms = options.busy_timeout_ms});
  if (!opened.ok()) {
    if (opened.status().code() == StatusCode::kNotFound) {
      return Status::NotFound(opened.status().message() +
                              " (skilldb embed computes one)");
    }
    return opened.status();
  }
  db->sql = std::move(*opened);
  return std::unique_ptr<EmbeddingStore>(
      new EmbeddingStore(std::string(path), std::move(db), options.read_only));
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
  const std::string what = "registering a model in " + ctx;
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement s, db_->sql->Prepare(Schema().tables[0].Insert(), what));
  s.Text(1, model.weights_sha256).Text(2, model.model_id);
  s.Int(3, model.dimension);
  return s.Run(what);
}

Result<std::vector<EmbeddingModel>> EmbeddingStore::Models() {
  const std::string ctx = "reading models of embedding store '" + path_ + "'";
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement s,
      db_->sql->Prepare(Schema().tables[0].Select() + " ORDER BY weights", ctx));
  std::vector<EmbeddingModel> out;
  while (true) {
    SKILLDB_ASSIGN_OR_RETURN(bool row, s.Step(ctx));
    if (!row) break;
    const int64_t dimension = s.ColInt(2);
    if (dimension < 1 || dimension > INT_MAX) {
      return Status::Corruption(ctx + ": model " + s.ColText(0) +
                                " has dimension " + std::to_string(dimension));
    }
    out.push_back({s.ColText(0), s.ColText(1), static_cast<int>(dimension)});
  }
  return out;
}

Result<std::vector<std::optional<std::vector<float>>>> EmbeddingStore::Get(
    std::string_view weights_sha256, const std::vector<RevisionKey>& keys,
    size_t* unusable) {
  const std::string ctx = "reading embedding store '" + path_ + "'";
  // The registered dimension: a stored vector of another length is not
  // one of these weights' (a torn or hand-edited row).
  SKILLDB_ASSIGN_OR_RETURN(std::vector<EmbeddingModel> models, Models());
  size_t dimension = 0;
  for (const EmbeddingModel& m : models) {
    if (m.weights_sha256 == weights_sha256) {
      dimension = static_cast<size_t>(m.dimension);
    }
  }
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement s,
      db_->sql->Prepare("SELECT vector FROM embedding WHERE weights = ?1 AND "
                        "id = ?2 AND revision = ?3",
                        ctx));
  std::vector<std::optional<std::vector<float>>> out(keys.size());
  if (unusable != nullptr) *unusable = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    s.Reset().Text(1, weights_sha256).Text(2, keys[i].id);
    s.Int(3, static_cast<int64_t>(keys[i].revision));
    SKILLDB_ASSIGN_OR_RETURN(bool row, s.Step(ctx));
    if (!row) continue;
    const std::string bytes = s.ColBlob(0);
    std::vector<float> v(bytes.size() / sizeof(float));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    // Never returned: a cosine with NaN is NaN, and NaN breaks every sort
    // the scores go through. Unset, so readers embed the revision again
    // (and writers overwrite the row).
    if (bytes.size() % sizeof(float) != 0 || v.empty() ||
        (dimension != 0 && v.size() != dimension) || !AllFinite(v)) {
      if (unusable != nullptr) ++*unusable;
      continue;
    }
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
    if (!AllFinite(e.vector)) {
      return Status::InvalidArgument("the embedding of " + e.key.id +
                                     " has a non-finite value");
    }
  }
  SqliteTransaction tx(*db_->sql);
  SKILLDB_RETURN_IF_ERROR(tx.Begin());
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement s,
      db_->sql->Prepare(Schema().tables[1].Insert("INSERT OR REPLACE"), ctx));
  for (const StoredEmbedding& e : embeddings) {
    s.Reset().Text(1, weights_sha256).Text(2, e.key.id);
    s.Int(3, static_cast<int64_t>(e.key.revision));
    s.Blob(4, e.vector.data(), e.vector.size() * sizeof(float));
    SKILLDB_RETURN_IF_ERROR(s.Run(ctx));
  }
  return tx.Commit();
}

Result<uint64_t> EmbeddingStore::Count(std::string_view weights_sha256) {
  const std::string ctx = "counting embedding store '" + path_ + "'";
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement s,
      db_->sql->Prepare("SELECT count(*) FROM embedding WHERE weights = ?1",
                        ctx));
  SKILLDB_ASSIGN_OR_RETURN(bool row, s.Text(1, weights_sha256).Step(ctx));
  return row ? static_cast<uint64_t>(std::max<int64_t>(0, s.ColInt(0))) : 0;
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
    SKILLDB_ASSIGN_OR_RETURN(
        SqliteStatement s,
        db_->sql->Prepare(
            "SELECT id, revision FROM embedding WHERE weights = ?1", ctx));
    s.Text(1, weights_sha256);
    while (true) {
      SKILLDB_ASSIGN_OR_RETURN(bool row, s.Step(ctx));
      if (!row) break;
      RevisionKey k{s.ColText(0), static_cast<Version>(s.ColInt(1))};
      if (!kept.count({k.id, k.revision})) drop.push_back(std::move(k));
    }
  }
  if (drop.empty()) return 0;
  SqliteTransaction tx(*db_->sql);
  SKILLDB_RETURN_IF_ERROR(tx.Begin());
  SKILLDB_ASSIGN_OR_RETURN(
      SqliteStatement d,
      db_->sql->Prepare("DELETE FROM embedding WHERE weights = ?1 AND id = ?2 "
                        "AND revision = ?3",
                        ctx));
  for (const RevisionKey& k : drop) {
    d.Reset().Text(1, weights_sha256).Text(2, k.id);
    d.Int(3, static_cast<int64_t>(k.revision));
    SKILLDB_RETURN_IF_ERROR(d.Run(ctx));
  }
  SKILLDB_RETURN_IF_ERROR(tx.Commit());
  return static_cast<uint64_t>(drop.size());
}

}  // namespace skilldb::rerank
