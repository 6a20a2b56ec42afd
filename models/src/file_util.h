// Small file helpers for reading checkpoints: whole-file reads with Status
// errors, existence checks. Stateless: safe from any thread.
#ifndef SKILLDB_MODELS_SRC_FILE_UTIL_H_
#define SKILLDB_MODELS_SRC_FILE_UTIL_H_

#include <string>

#include "skilldb/status.h"

namespace skilldb::models::internal {

// The bytes of `path`. NotFound when it does not exist, IOError otherwise.
Result<std::string> ReadFile(const std::string& path);
bool IsDirectory(const std::string& path);
bool IsRegularFile(const std::string& path);

}  // namespace skilldb::models::internal

#endif  // SKILLDB_MODELS_SRC_FILE_UTIL_H_
