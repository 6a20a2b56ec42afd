// What the KernelBench test binaries share: whether this machine's Python
// can run them, and a main that reports them skipped (exit 77, their
// SKIP_RETURN_CODE in ctest) when it cannot. Test code only.
//
// REQUIRES: the including file defines DOCTEST_CONFIG_IMPLEMENT before its
// first include of doctest (this header calls doctest::Context).
#ifndef SKILLDB_VERIFY_KB_TEST_UTIL_H_
#define SKILLDB_VERIFY_KB_TEST_UTIL_H_

#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "subprocess.h"

namespace skilldb::verify::kb::testing {

// Whether `python -c code` exits 0 within two minutes.
inline bool PythonRuns(const std::string& python, const char* code) {
  verify::internal::RunOptions ro;
  ro.argv = {python, "-c", code};
  ro.timeout_s = 120;
  auto r = verify::internal::Run(ro);
  return r.ok() && r->ok();
}

// Runs this binary's doctest cases; or, when `python -c probe` fails,
// prints `skipped` and returns 77. Listing the cases (--list-..., -l...)
// needs no Python and is never skipped.
inline int RunUnlessSkipped(int argc, char** argv, const std::string& python,
                            const char* probe, const char* skipped) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--list", 6) == 0 ||
        std::strncmp(argv[i], "-l", 2) == 0) {
      listing = true;
    }
  }
  if (!listing && !PythonRuns(python, probe)) {
    std::printf("%s\n", skipped);
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}

}  // namespace skilldb::verify::kb::testing

#endif  // SKILLDB_VERIFY_KB_TEST_UTIL_H_
