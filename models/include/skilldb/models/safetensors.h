// Reading safetensors files without copying: a file is mapped (private,
// copy-on-write: writing to a tensor never reaches the file) and its tensors
// are views into the mapping. A checkpoint is one model.safetensors or the
// shards a model.safetensors.index.json names.
//
// The header is untrusted input: its size is bounded, every tensor's dtype,
// shape and offsets are checked (its bytes must be exactly shape x dtype
// size, the tensors must tile the data section without gaps or overlaps, as
// the safetensors library requires) before any view is handed out.
//
// Files and checkpoints are immutable after Open: safe for concurrent
// reads. A view stays valid while its SafetensorsFile lives.
#ifndef SKILLDB_MODELS_SAFETENSORS_H_
#define SKILLDB_MODELS_SAFETENSORS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::models {

// The element types of the format (names as in the header).
enum class DType { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool };

std::string_view DTypeName(DType dtype);  // "F32", "BF16", ...
size_t DTypeSize(DType dtype);            // bytes per element

// One tensor of a file: a view into the mapping.
struct TensorView {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;
  size_t size_bytes = 0;

  int64_t numel() const;
};

class SafetensorsFile {
 public:
  // The largest header accepted (the safetensors library's limit).
  static constexpr uint64_t kMaxHeaderBytes = 100'000'000;
  // JSON values a header may hold (about eight per tensor): a bound on the
  // memory its parse takes, far above any real checkpoint's.
  static constexpr size_t kMaxHeaderValues = size_t{2} << 20;

  // Maps `path` and validates its header. Errors: NotFound / IOError for
  // the file; InvalidArgument (a file the user named, not skilldb's own
  // store) for a malformed header (too short, too large, not JSON, a
  // repeated tensor name, bad dtype name, offsets outside the data or not
  // tiling it, byte counts that disagree with the shape); NotSupported for
  // a dtype this reader does not convert (F8 types, ...).
  static Result<std::shared_ptr<const SafetensorsFile>> Open(
      const std::string& path);
  // The same over bytes in memory (copied), `name` naming them in errors.
  static Result<std::shared_ptr<const SafetensorsFile>> FromBytes(
      std::string_view bytes, const std::string& name);

  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  // The tensors, sorted by name.
  const std::vector<TensorView>& tensors() const { return tensors_; }
  // nullptr when the file has no tensor `name`.
  const TensorView* Find(std::string_view name) const;
  // The header's __metadata__ (string to string).
  const std::map<std::string, std::string>& metadata() const {
    return metadata_;
  }

 private:
  SafetensorsFile() = default;
  Status Parse();

  std::string path_;
  void* mapping_ = nullptr;
  size_t mapping_bytes_ = 0;
  std::vector<TensorView> tensors_;  // sorted by name
  std::map<std::string, std::string> metadata_;
};

// The weights of a checkpoint directory: model.safetensors, or the shards
// named by model.safetensors.index.json (each shard opened once).
class CheckpointWeights {
 public:
  // Errors: NotFound when the directory has neither file (the message says
  // which were looked for), Corruption for a bad index or a shard whose
  // tensors disagree with it, and any error of SafetensorsFile::Open.
  static Result<CheckpointWeights> Open(const std::string& dir);

  // The tensor `name`, or NotFound naming it and the checkpoint.
  Result<const TensorView*> Get(std::string_view name) const;
  bool Contains(std::string_view name) const;
  // The file holding `name` (to keep its mapping alive); nullptr if none.
  std::shared_ptr<const SafetensorsFile> FileOf(std::string_view name) const;
  // Every tensor name, sorted.
  std::vector<std::string> Names() const;
  // The safetensors files, in index order (one for a single file).
  std::vector<std::string> Files() const;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::vector<std::shared_ptr<const SafetensorsFile>> files_;
  std::map<std::string, size_t, std::less<>> file_of_;  // name -> files_ index
};

}  // namespace skilldb::models

#endif  // SKILLDB_MODELS_SAFETENSORS_H_
