// EmbeddingStore: skill embeddings per skill revision, beside a library
// (LIBRARY.embeddings.sqlite by default), keyed by (weights, skill id,
// revision). A revision's content never changes, so its embedding under
// given weights never does either: a query as of version V reads the
// embeddings of the revisions live at V, and commits never wait for the
// store (it is a separate file with its own transactions; the library is
// only read). Embeddings of different weights are never mixed.
//
// Thread safety: one EmbeddingStore may be used from several threads
// (SQLite's serialized mode); several processes may share the file (WAL
// mode, writers wait up to busy_timeout_ms for each other).
#ifndef SKILLDB_RERANK_EMBEDDING_STORE_H_
#define SKILLDB_RERANK_EMBEDDING_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/options.h"
#include "skilldb/status.h"

namespace skilldb::rerank {

// LIBRARY.embeddings.sqlite for the library directory LIBRARY (trailing
// slashes dropped).
std::string DefaultEmbeddingStorePath(std::string_view library_path);

// The weights an embedding was computed with.
struct EmbeddingModel {
  std::string weights_sha256;  // the key (lower-case hex)
  std::string model_id;        // for people
  int dimension = 0;
  bool operator==(const EmbeddingModel&) const = default;
};

// One revision's key.
struct RevisionKey {
  std::string id;
  Version revision = 0;
  bool operator==(const RevisionKey&) const = default;
};

struct StoredEmbedding {
  RevisionKey key;
  std::vector<float> vector;  // EmbeddingModel::dimension floats
};

struct EmbeddingStoreOptions {
  bool read_only = false;       // Default: read-write.
  // A writable open creates a missing store; a query that may keep what it
  // embeds opens without create, so it never leaves a new file behind.
  // Read-only opens never create. Default: true.
  bool create = true;
  int busy_timeout_ms = 10000;  // Default: 10 s.
};

class EmbeddingStore {
 public:
  // Opens the store at `path` (read-write with options.create: creates
  // it). NotFound for a missing file not to be created; IOError naming the
  // path when SQLite cannot open it; Corruption when the file is not an
  // embedding store or a table's columns differ from this build's (naming
  // the table); FailedPrecondition for a newer schema than this build's.
  static Result<std::unique_ptr<EmbeddingStore>> Open(
      std::string_view path, const EmbeddingStoreOptions& options = {});
  ~EmbeddingStore();
  EmbeddingStore(const EmbeddingStore&) = delete;
  EmbeddingStore& operator=(const EmbeddingStore&) = delete;

  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }

  // Records `model` (idempotent). InvalidArgument when the same weights
  // were recorded with another dimension, or dimension is not positive;
  // FailedPrecondition when read-only.
  Status RegisterModel(const EmbeddingModel& model);
  // Every model recorded, by weights.
  Result<std::vector<EmbeddingModel>> Models();

  // The stored embedding of each key under `weights_sha256`, in order:
  // unset where none is stored, and where the stored one is unusable (its
  // size is not the registered dimension, or a value is NaN or infinite: a
  // torn or hand-edited row). Unusable rows are never returned (they would
  // score NaN); `unusable`, when given, receives how many there were, so a
  // writer can embed them again and overwrite them.
  Result<std::vector<std::optional<std::vector<float>>>> Get(
      std::string_view weights_sha256, const std::vector<RevisionKey>& keys,
      size_t* unusable = nullptr);
  // Stores `embeddings` in one transaction (all or none; existing keys
  // are overwritten). REQUIRES: the model registered. InvalidArgument for
  // a vector of the wrong size or a non-finite value; FailedPrecondition
  // when read-only.
  Status Put(std::string_view weights_sha256,
             const std::vector<StoredEmbedding>& embeddings);
  // How many embeddings are stored under `weights_sha256`.
  Result<uint64_t> Count(std::string_view weights_sha256);
  // Deletes the embeddings under `weights_sha256` whose key is not in
  // `keep` (revisions the library no longer retains); returns how many.
  Result<uint64_t> Prune(std::string_view weights_sha256,
                         const std::vector<RevisionKey>& keep);

 private:
  struct Db;
  EmbeddingStore(std::string path, std::unique_ptr<Db> db, bool read_only);
  std::string path_;
  bool read_only_;
  std::unique_ptr<Db> db_;
};

}  // namespace skilldb::rerank

#endif  // SKILLDB_RERANK_EMBEDDING_STORE_H_
