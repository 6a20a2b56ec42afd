// A fresh directory under $TMPDIR for one test, removed with everything in
// it when the test ends (also when it fails). Test-only.
#ifndef SKILLDB_TRAINER_TEST_DIR_H_
#define SKILLDB_TRAINER_TEST_DIR_H_

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace skilldb::trainer {

class ScopedTempDir {
 public:
  // `prefix` names the directory: $TMPDIR/<prefix>_XXXXXX.
  explicit ScopedTempDir(const std::string& prefix) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~ScopedTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_TEST_DIR_H_
