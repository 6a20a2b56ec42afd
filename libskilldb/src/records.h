// Encodings of commit records and the small meta values. Internal.
#ifndef SKILLDB_LIBSKILLDB_RECORDS_H_
#define SKILLDB_LIBSKILLDB_RECORDS_H_

#include <string>
#include <string_view>

#include "skilldb/library.h"

namespace skilldb::internal {

std::string EncodeCommit(const CommitInfo& commit);
Result<CommitInfo> DecodeCommit(std::string_view value);

// Change kinds stored in the changes column family. Never renumber.
char EncodeChangeKind(ChangeKind kind);
Result<ChangeKind> DecodeChangeKind(std::string_view value);

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_RECORDS_H_
