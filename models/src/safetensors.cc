#include "skilldb/models/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "skilldb/util/file.h"
#include "skilldb/util/json.h"

namespace skilldb::models {
namespace {

using Json = nlohmann::json;

struct DTypeInfo {
  std::string_view name;
  DType dtype;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {"F64", DType::kF64, 8},   {"F32", DType::kF32, 4}, {"F16", DType::kF16, 2},
    {"BF16", DType::kBF16, 2}, {"I64", DType::kI64, 8}, {"I32", DType::kI32, 4},
    {"I16", DType::kI16, 2},   {"I8", DType::kI8, 1},   {"U8", DType::kU8, 1},
    {"BOOL", DType::kBool, 1},
};
// Names the format defines that this reader does not convert.
constexpr std::string_view kKnownUnsupported[] = {
    "F8_E4M3", "F8_E5M2", "F8_E8M0", "F6_E2M3", "F6_E3M2",
    "F4",      "U64",     "U32",     "U16",     "C64"};

Status Bad(const std::string& path, const std::string& what) {
  return Status::InvalidArgument(path + ": malformed safetensors header: " +
                                 what);
}

// a * b, or false on overflow of size_t.
bool MulOk(size_t a, size_t b, size_t* out) {
  if (a != 0 && b > std::numeric_limits<size_t>::max() / a) return false;
  *out = a * b;
  return true;
}

}  // namespace

std::string_view DTypeName(DType dtype) {
  for (const auto& d : kDTypes) {
    if (d.dtype == dtype) return d.name;
  }
  return "?";
}

size_t DTypeSize(DType dtype) {
  for (const auto& d : kDTypes) {
    if (d.dtype == dtype) return d.size;
  }
  return 0;
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

SafetensorsFile::~SafetensorsFile() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_bytes_);
}

Result<std::shared_ptr<const SafetensorsFile>> SafetensorsFile::Open(
    const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::IOError(path + ": " + std::strerror(err));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::IOError(path + ": " + std::strerror(err));
  }
  std::shared_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->path_ = path;
  if (st.st_size < 8) {
    ::close(fd);
    return Bad(path, "file of " + std::to_string(st.st_size) +
                         " bytes has no header length");
  }
  file->mapping_bytes_ = static_cast<size_t>(st.st_size);
  // Private and writable: a tensor built on the mapping may be updated in
  // place (an optimizer step) without the file changing.
  void* m = ::mmap(nullptr, file->mapping_bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);
  if (m == MAP_FAILED)
    return Status::IOError(path + ": mmap: " + std::strerror(err));
  file->mapping_ = m;
  SKILLDB_RETURN_IF_ERROR(file->Parse());
  return std::shared_ptr<const SafetensorsFile>(std::move(file));
}

Result<std::shared_ptr<const SafetensorsFile>> SafetensorsFile::FromBytes(
    std::string_view bytes, const std::string& name) {
  std::shared_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->path_ = name;
  if (bytes.size() < 8) {
    return Bad(name, std::to_string(bytes.size()) +
                         " bytes hold no header length");
  }
  // An anonymous mapping, so the file owns it as Open's does.
  file->mapping_bytes_ = bytes.size();
  void* m = ::mmap(nullptr, bytes.size(), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    return Status::IOError(name + ": mmap: " + std::strerror(errno));
  }
  file->mapping_ = m;
  std::memcpy(m, bytes.data(), bytes.size());
  SKILLDB_RETURN_IF_ERROR(file->Parse());
  return std::shared_ptr<const SafetensorsFile>(std::move(file));
}

Status SafetensorsFile::Parse() {
  const auto* bytes = static_cast<const uint8_t*>(mapping_);
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | bytes[i];
  if (header_bytes > kMaxHeaderBytes) {
    return Bad(path_, "header length " + std::to_string(header_bytes) +
                          " exceeds the limit of " +
                          std::to_string(kMaxHeaderBytes));
  }
  if (header_bytes > mapping_bytes_ - 8) {
    return Bad(path_, "header length " + std::to_string(header_bytes) +
                          " runs past the end of the file");
  }
  const uint8_t* data = bytes + 8 + header_bytes;
  const size_t data_bytes = mapping_bytes_ - 8 - header_bytes;
  auto parsed = util::ParseUntrustedJson(
      std::string_view(reinterpret_cast<const char*>(bytes + 8),
                       static_cast<size_t>(header_bytes)),
      "header", {.max_bytes = kMaxHeaderBytes, .max_depth = 16,
                 .max_values = kMaxHeaderValues});
  if (!parsed.ok()) return Bad(path_, parsed.status().message());
  const Json header = std::move(*parsed);
  if (!header.is_object()) return Bad(path_, "not a JSON object");
  try {
    for (const auto& [name, entry] : header.items()) {
      if (name == "__metadata__") {
        if (!entry.is_object()) return Bad(path_, "__metadata__ not an object");
        for (const auto& [k, v] : entry.items()) {
          if (!v.is_string())
            return Bad(path_, "__metadata__ value not a string");
          metadata_[k] = v.get<std::string>();
        }
        continue;
      }
      if (!entry.is_object() || !entry.contains("dtype") ||
          !entry.contains("shape") || !entry.contains("data_offsets")) {
        return Bad(path_,
                   "tensor '" + name + "' lacks dtype, shape or data_offsets");
      }
      if (!entry["dtype"].is_string() || !entry["shape"].is_array()) {
        return Bad(path_, "tensor '" + name +
                              "' dtype is not a string or shape not a list");
      }
      const std::string dtype = entry["dtype"].get<std::string>();
      const DTypeInfo* info = nullptr;
      for (const auto& d : kDTypes) {
        if (d.name == dtype) info = &d;
      }
      if (info == nullptr) {
        for (std::string_view u : kKnownUnsupported) {
          if (u == dtype) {
            return Status::NotSupported(path_ + ": tensor '" + name +
                                        "' has dtype " + dtype +
                                        ", which this reader does not convert");
          }
        }
        return Bad(path_,
                   "tensor '" + name + "' has unknown dtype '" + dtype + "'");
      }
      TensorView view;
      view.name = name;
      view.dtype = info->dtype;
      size_t expected = info->size;
      for (const Json& d : entry["shape"]) {
        if (!d.is_number_unsigned() &&
            !(d.is_number_integer() && d.get<int64_t>() >= 0)) {
          return Bad(path_, "tensor '" + name +
                                "' has a negative or non-integer dimension");
        }
        const uint64_t dim = d.get<uint64_t>();
        if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
            !MulOk(expected, static_cast<size_t>(dim), &expected)) {
          return Bad(path_, "tensor '" + name + "' is too large");
        }
        view.shape.push_back(static_cast<int64_t>(dim));
      }
      const Json& offsets = entry["data_offsets"];
      if (!offsets.is_array() || offsets.size() != 2 ||
          !offsets[0].is_number_unsigned() ||
          !offsets[1].is_number_unsigned()) {
        return Bad(path_,
                   "tensor '" + name + "' data_offsets is not [begin, end]");
      }
      const uint64_t begin = offsets[0].get<uint64_t>();
      const uint64_t end = offsets[1].get<uint64_t>();
      if (begin > end || end > data_bytes) {
        return Bad(path_,
                   "tensor '" + name + "' offsets [" + std::to_string(begin) +
                       ", " + std::to_string(end) + ") fall outside the " +
                       std::to_string(data_bytes) + "-byte data section");
      }
      if (end - begin != expected) {
        return Bad(path_,
                   "tensor '" + name + "' has " + std::to_string(end - begin) +
                       " bytes, its shape needs " + std::to_string(expected));
      }
      view.data = data + begin;
      view.size_bytes = static_cast<size_t>(end - begin);
      tensors_.push_back(std::move(view));
    }
  } catch (const Json::exception& e) {
    return Bad(path_, e.what());
  }
  // The tensors must tile the data section exactly: no gaps, no overlaps.
  std::vector<const TensorView*> by_offset;
  for (const TensorView& t : tensors_) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const TensorView* a, const TensorView* b) {
              return a->data != b->data ? a->data < b->data
                                        : a->size_bytes < b->size_bytes;
            });
  const uint8_t* cursor = data;
  for (const TensorView* t : by_offset) {
    if (t->data != cursor) {
      return Bad(path_, "tensor '" + t->name +
                            "' does not start where the previous one ends "
                            "(gap or overlap)");
    }
    cursor += t->size_bytes;
  }
  if (cursor != data + data_bytes) {
    return Bad(path_, "the tensors do not cover the data section");
  }
  std::sort(
      tensors_.begin(), tensors_.end(),
      [](const TensorView& a, const TensorView& b) { return a.name < b.name; });
  return Status::Ok();
}

const TensorView* SafetensorsFile::Find(std::string_view name) const {
  auto it = std::lower_bound(
      tensors_.begin(), tensors_.end(), name,
      [](const TensorView& t, std::string_view n) { return t.name < n; });
  return (it != tensors_.end() && it->name == name) ? &*it : nullptr;
}

// CheckpointWeights
// -------------------------------------------------------------

Result<CheckpointWeights> CheckpointWeights::Open(const std::string& dir) {
  CheckpointWeights w;
  w.dir_ = dir;
  const std::string single = dir + "/model.safetensors";
  const std::string index = dir + "/model.safetensors.index.json";
  std::vector<std::string> shard_names;
  Json weight_map;
  if (util::IsRegularFile(index)) {
    SKILLDB_ASSIGN_OR_RETURN(std::string text, util::ReadFile(index));
    SKILLDB_ASSIGN_OR_RETURN(Json root, util::ParseUntrustedJson(text, index));
    if (!root.is_object() || !root.contains("weight_map") ||
        !root["weight_map"].is_object()) {
      return Status::InvalidArgument(index + ": no \"weight_map\" object");
    }
    weight_map = root["weight_map"];
    for (const auto& [tensor, shard] : weight_map.items()) {
      if (!shard.is_string()) {
        return Status::InvalidArgument(index + ": the shard of '" + tensor +
                                       "' is not a file name");
      }
      const std::string s = shard.get<std::string>();
      if (s.empty() || s.find('/') != std::string::npos || s == "..") {
        return Status::InvalidArgument(index + ": shard name '" + s +
                                       "' is not a file name");
      }
      if (std::find(shard_names.begin(), shard_names.end(), s) ==
          shard_names.end()) {
        shard_names.push_back(s);
      }
    }
    std::sort(shard_names.begin(), shard_names.end());
  } else if (util::IsRegularFile(single)) {
    shard_names.push_back("model.safetensors");
  } else {
    return Status::NotFound(dir +
                            ": neither model.safetensors nor "
                            "model.safetensors.index.json");
  }
  for (const std::string& name : shard_names) {
    SKILLDB_ASSIGN_OR_RETURN(auto file,
                             SafetensorsFile::Open(dir + "/" + name));
    for (const TensorView& t : file->tensors()) {
      if (!w.file_of_.emplace(t.name, w.files_.size()).second) {
        return Status::InvalidArgument(dir + ": tensor '" + t.name +
                                       "' is in more than one shard");
      }
      if (!weight_map.is_null() &&
          (!weight_map.contains(t.name) || weight_map[t.name] != name)) {
        return Status::InvalidArgument(index + ": tensor '" + t.name +
                                       "' is in " + name +
                                       ", which the index does not say");
      }
    }
    w.files_.push_back(std::move(file));
  }
  if (!weight_map.is_null()) {
    for (const auto& [tensor, shard] : weight_map.items()) {
      if (!w.file_of_.count(tensor)) {
        return Status::InvalidArgument(index + ": tensor '" + tensor +
                                       "' is not in its shard " +
                                       shard.get<std::string>());
      }
    }
  }
  return w;
}

Result<const TensorView*> CheckpointWeights::Get(std::string_view name) const {
  auto it = file_of_.find(name);
  if (it == file_of_.end()) {
    return Status::NotFound(dir_ + ": the checkpoint has no tensor '" +
                            std::string(name) + "'");
  }
  return files_[it->second]->Find(name);
}

bool CheckpointWeights::Contains(std::string_view name) const {
  return file_of_.find(name) != file_of_.end();
}

std::shared_ptr<const SafetensorsFile> CheckpointWeights::FileOf(
    std::string_view name) const {
  auto it = file_of_.find(name);
  return it == file_of_.end() ? nullptr : files_[it->second];
}

std::vector<std::string> CheckpointWeights::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, index] : file_of_) names.push_back(name);
  return names;
}

std::vector<std::string> CheckpointWeights::Files() const {
  std::vector<std::string> paths;
  for (const auto& f : files_) paths.push_back(f->path());
  return paths;
}

}  // namespace skilldb::models
