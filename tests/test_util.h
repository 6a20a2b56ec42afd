// Helpers shared by skilldb tests: temporary directories and libraries.
#ifndef SKILLDB_TESTS_TEST_UTIL_H_
#define SKILLDB_TESTS_TEST_UTIL_H_

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "skilldb/library.h"

namespace skilldb::testing {

// A fresh directory under $TMPDIR, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "skilldb-test-XXXXXX")
            .string();
    char* made = mkdtemp(pattern.data());
    REQUIRE(made != nullptr);
    path_ = made;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A library in a temporary directory; `lib->` reaches the Library.
class TempLibrary {
 public:
  explicit TempLibrary(Options options = DefaultOptions()) : options_(options) {
    Reopen();
  }
  static Options DefaultOptions() {
    Options o;
    o.create_if_missing = true;
    o.sync_commits = false;  // tests that need durability set it
    return o;
  }
  void Reopen() {
    library_.reset();
    auto opened = Library::Open(options_, path());
    REQUIRE_MESSAGE(opened.ok(), opened.status().ToString());
    library_ = std::move(opened).value();
  }
  void Close() { library_.reset(); }
  std::string path() const { return dir_.Sub("lib"); }
  Library* operator->() { return library_.get(); }
  Library& operator*() { return *library_; }

 private:
  TempDir dir_;
  Options options_;
  std::unique_ptr<Library> library_;
};

}  // namespace skilldb::testing

#endif  // SKILLDB_TESTS_TEST_UTIL_H_
