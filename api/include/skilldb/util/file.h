// Files and directories as every module reads and writes them: whole-file
// reads with a size bound and Status errors, atomic replacement, directory
// creation. Part of the helpers skilldb's modules share (skilldb/util/),
// compiled into skilldb_api. Thread-safe (no shared state) apart from what
// the file system shares.
#ifndef SKILLDB_UTIL_FILE_H_
#define SKILLDB_UTIL_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "skilldb/status.h"

namespace skilldb::util {

inline constexpr int64_t kDefaultMaxFileBytes = int64_t{1} << 30;  // 1 GiB

// The bytes of the file at `path`, read whole. NotFound when it does not
// exist, InvalidArgument when it is a directory or larger than `max_bytes`
// (checked while reading, so a file growing under the reader is bounded
// too), IOError otherwise. Messages name the path.
Result<std::string> ReadFile(const std::string& path,
                             int64_t max_bytes = kDefaultMaxFileBytes);

// Writes `data` to `path` atomically: a temporary file in the same
// directory, then rename, so a reader sees the old bytes or the new ones,
// never a part. IOError naming the path on failure.
Status WriteFileAtomic(const std::string& path, std::string_view data);

// Creates `path` and its missing parents (mode 0755). InvalidArgument for
// an empty path, IOError on failure.
Status MakeDirs(const std::string& path);

// Creates a fresh directory "<parent>/<prefix>XXXXXX" (parent created if
// missing) and returns its path. IOError on failure.
Result<std::string> MakeTempDir(const std::string& parent,
                                const std::string& prefix);

// Removes `path` recursively; a missing path is fine. Best effort.
void RemoveTree(const std::string& path);

bool FileExists(const std::string& path);
bool IsDirectory(const std::string& path);
bool IsRegularFile(const std::string& path);

// Joins two path pieces with exactly one '/'.
std::string JoinPath(std::string_view a, std::string_view b);

}  // namespace skilldb::util

#endif  // SKILLDB_UTIL_FILE_H_
