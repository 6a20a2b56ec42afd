#include "usage_codec.h"

#include <algorithm>
#include <cstring>

namespace skilldb {

namespace internal {
namespace {

class UsageMergeOperator : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice& /*key*/, const rocksdb::Slice* existing,
             const rocksdb::Slice& value, std::string* new_value,
             rocksdb::Logger* /*logger*/) const override {
    UsageCounters sum;
    if (existing != nullptr &&
        !DecodeUsage(std::string_view(existing->data(), existing->size()),
                     &sum)) {
      return false;  // corruption: RocksDB reports it
    }
    UsageCounters add;
    if (!DecodeUsage(std::string_view(value.data(), value.size()), &add))
      return false;
    AddUsage(&sum, add);
    *new_value = EncodeUsage(sum);
    return true;
  }
  const char* Name() const override { return "skilldb.UsageAdd"; }
};

}  // namespace

std::string EncodeUsage(const UsageCounters& c) {
  std::string out(48, '\0');
  for (int i = 0; i < kNumUsageEvents; ++i) {
    std::memcpy(out.data() + size_t{8} * i, &c.counts[i], 8);
  }
  std::memcpy(out.data() + 40, &c.last_used_version, 8);
  return out;
}

bool DecodeUsage(std::string_view value, UsageCounters* c) {
  if (value.size() != 48) return false;
  for (int i = 0; i < kNumUsageEvents; ++i) {
    std::memcpy(&c->counts[i], value.data() + size_t{8} * i, 8);
  }
  std::memcpy(&c->last_used_version, value.data() + 40, 8);
  return true;
}

void AddUsage(UsageCounters* a, const UsageCounters& b) {
  for (int i = 0; i < kNumUsageEvents; ++i) a->counts[i] += b.counts[i];
  a->last_used_version = std::max(a->last_used_version, b.last_used_version);
}

std::shared_ptr<rocksdb::MergeOperator> NewUsageMergeOperator() {
  return std::make_shared<UsageMergeOperator>();
}

}  // namespace internal
}  // namespace skilldb
