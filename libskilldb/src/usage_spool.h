// One process's usage spool file (see usage.cc). Internal.
#ifndef SKILLDB_LIBSKILLDB_USAGE_SPOOL_H_
#define SKILLDB_LIBSKILLDB_USAGE_SPOOL_H_

#include <string>

#include "skilldb/status.h"

namespace skilldb::internal {

// A spool file created in `dir`, exclusively locked (flock) for as long as
// this object lives, so a folder can tell a live writer from a dead one.
class UsageSpool {
 public:
  UsageSpool() = default;
  UsageSpool(const UsageSpool&) = delete;
  UsageSpool& operator=(const UsageSpool&) = delete;
  ~UsageSpool();

  Status Open(const std::string& dir);
  // Appends one complete line with a single write(2).
  Status Append(const std::string& line);

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_USAGE_SPOOL_H_
