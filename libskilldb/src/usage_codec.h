// The stored form of usage counters and the RocksDB merge operator that adds
// them, so increments from many threads are blind writes (no read-modify-
// write) that RocksDB combines in compaction and at read time. Internal.
#ifndef SKILLDB_LIBSKILLDB_USAGE_CODEC_H_
#define SKILLDB_LIBSKILLDB_USAGE_CODEC_H_

#include <rocksdb/merge_operator.h>

#include <memory>
#include <string>
#include <string_view>

#include "skilldb/maintenance.h"

namespace skilldb::internal {

// 6 little-endian u64: the five event counts, then the last-used version.
std::string EncodeUsage(const UsageCounters& counters);
// False if `value` is not 48 bytes.
bool DecodeUsage(std::string_view value, UsageCounters* counters);
// Adds b into a (counts summed, last-used version maxed).
void AddUsage(UsageCounters* a, const UsageCounters& b);

std::shared_ptr<rocksdb::MergeOperator> NewUsageMergeOperator();

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_USAGE_CODEC_H_
