// Usage counters per skill (usage.cc): merges into the store in the process
// that writes the library, spool files from read-only processes, folded in
// by the writer. Internal.
#ifndef SKILLDB_LIBSKILLDB_USAGE_STORE_H_
#define SKILLDB_LIBSKILLDB_USAGE_STORE_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "skilldb/library.h"
#include "storage.h"

namespace skilldb::internal {

class UsageSpool;

// Owns the usage column family's writes and this process's spool file.
// Thread-safe.
class UsageStore {
 public:
  // REQUIRES: `storage` outlives this.
  explicit UsageStore(Storage& storage);
  ~UsageStore();
  UsageStore(const UsageStore&) = delete;
  UsageStore& operator=(const UsageStore&) = delete;

  // Adds `records` stamped with `head` (the version they were used at): in
  // one batch of merges when the library is writable, else as lines of this
  // process's spool file (created on first use). REQUIRES: the records were
  // validated (live skill ids, known events, counts within kMaxUsageCount).
  Status Record(const std::vector<UsageRecord>& records, Version head);
  // The counters of each id (stored plus spooled, not yet folded), in order.
  Result<std::vector<UsageCounters>> Of(
      const std::vector<std::string>& ids) const;
  // Calls `fn` on the counters of every id with any, in id order, until it
  // returns false.
  Status Scan(const std::function<bool(const std::string& id,
                                       const UsageCounters& counters)>& fn)
      const;
  // Folds every spool file into the store (a writer's open); deletes those
  // whose writer is gone once fully folded. Nothing when read-only.
  Status FoldSpools();

 private:
  std::string SpoolDir() const;
  // Spooled lines not yet folded, summed by id.
  Result<std::map<std::string, UsageCounters>> PendingSpool() const;

  Storage& storage_;
  std::mutex spool_mu_;
  std::unique_ptr<UsageSpool> spool_;  // guarded by spool_mu_
};

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_USAGE_STORE_H_
