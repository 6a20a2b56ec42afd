// Small file and path helpers shared by the verifier's modules.
// Thread-safe (no shared state) apart from what the file system shares.
#ifndef SKILLDB_VERIFY_FILE_UTIL_H_
#define SKILLDB_VERIFY_FILE_UTIL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "skilldb/status.h"

namespace skilldb::verify::internal {

// Reads the whole file. NotFound if it does not exist, IOError otherwise;
// InvalidArgument if it is larger than `max_bytes`.
Result<std::string> ReadFile(const std::string& path,
                             int64_t max_bytes = int64_t{1} << 30);

// Writes `data` to `path` atomically (temporary file in the same directory,
// then rename). IOError on failure.
Status WriteFileAtomic(const std::string& path, std::string_view data);

// Creates `path` and its missing parents (mode 0755). IOError on failure.
Status MakeDirs(const std::string& path);

// Creates a fresh directory "<parent>/<prefix>XXXXXX". IOError on failure.
Result<std::string> MakeTempDir(const std::string& parent,
                                const std::string& prefix);

// Removes `path` recursively; missing paths are fine. Best effort.
void RemoveTree(const std::string& path);

bool FileExists(const std::string& path);

// Joins two path pieces with exactly one '/'.
std::string JoinPath(std::string_view a, std::string_view b);

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_FILE_UTIL_H_
