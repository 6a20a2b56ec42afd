// The options the crash test's writer (crash_writer.cc) and checker
// (crash_test.cc) open the library with.
#ifndef SKILLDB_TESTS_CRASH_WRITER_H_
#define SKILLDB_TESTS_CRASH_WRITER_H_

#include <cstddef>

#include "skilldb/options.h"

namespace skilldb::testing {

inline Options CrashOptions(size_t stage_bytes) {
  Options o;
  o.create_if_missing = true;
  o.analyzer = Analyzer::kWhitespace;
  o.sync_commits = true;  // acknowledged means durable
  o.merge_factor = 3;     // merges happen often
  o.stage_bytes = stage_bytes;
  return o;
}

}  // namespace skilldb::testing

#endif  // SKILLDB_TESTS_CRASH_WRITER_H_
