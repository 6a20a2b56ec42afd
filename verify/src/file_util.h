// The verifier's names for the file helpers every module shares
// (skilldb/util/file.h holds the one implementation): verify's sources call
// them unqualified inside skilldb::verify::internal.
#ifndef SKILLDB_VERIFY_FILE_UTIL_H_
#define SKILLDB_VERIFY_FILE_UTIL_H_

#include "skilldb/util/file.h"

namespace skilldb::verify::internal {

using util::FileExists;
using util::JoinPath;
using util::MakeDirs;
using util::MakeTempDir;
using util::ReadFile;
using util::RemoveTree;
using util::WriteFileAtomic;

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_FILE_UTIL_H_
