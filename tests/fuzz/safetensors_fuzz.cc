// The safetensors header reader on arbitrary bytes: it never crashes, and
// what it accepts is what it promises (safetensors.h): the tensors tile the
// data section, each holds exactly numel x the dtype's size bytes, and each
// lies inside the file.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "skilldb/models/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using skilldb::models::SafetensorsFile;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto file = SafetensorsFile::FromBytes(bytes, "fuzz.safetensors");
  if (!file.ok()) return 0;
  size_t total = 0;
  for (const auto& t : (*file)->tensors()) {
    int64_t numel = 1;
    for (int64_t d : t.shape) {
      if (d < 0) std::abort();
      numel *= d;
    }
    if (static_cast<size_t>(numel) * skilldb::models::DTypeSize(t.dtype) !=
        t.size_bytes) {
      std::abort();
    }
    if ((*file)->Find(t.name) != &t) std::abort();
    total += t.size_bytes;
  }
  if (total > size) std::abort();
  return 0;
}
