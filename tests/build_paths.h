// The paths a test or tool program was built with (the seed, test data, the
// programs it starts), absolute at run time. The build passes each as NAME_REL,
// relative to the program's own directory (skilldb_test_paths in
// cmake/skilldb.cmake), so that compiling the program is the same in any
// clone; this header defines NAME as that path resolved against the
// directory of the running executable. Include it before using NAME.
//
// Thread-safe: BesideProgram may be called from any thread.
#ifndef SKILLDB_TESTS_BUILD_PATHS_H_
#define SKILLDB_TESTS_BUILD_PATHS_H_

#include <unistd.h>

#include <climits>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>

namespace skilldb::testing {

// `relative` resolved against the directory of this executable. The result
// lives as long as the program.
inline const char* BesideProgram(const char* relative) {
  static std::mutex mu;
  static auto* resolved = new std::map<std::string, std::string>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = resolved->find(relative);
  if (it == resolved->end()) {
    char self[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    const std::filesystem::path dir =
        n > 0 ? std::filesystem::path(std::string(self, static_cast<size_t>(n)))
                    .parent_path()
              : std::filesystem::current_path();
    it = resolved
             ->emplace(relative, (dir / relative).lexically_normal().string())
             .first;
  }
  return it->second.c_str();
}

}  // namespace skilldb::testing

#define SKILLDB_BESIDE_PROGRAM(rel) ::skilldb::testing::BesideProgram(rel)
#ifdef SKILLDB_SEED_DIR_REL
#define SKILLDB_SEED_DIR SKILLDB_BESIDE_PROGRAM(SKILLDB_SEED_DIR_REL)
#endif
#ifdef SKILLDB_RELEVANCE_QUERIES_REL
#define SKILLDB_RELEVANCE_QUERIES SKILLDB_BESIDE_PROGRAM(SKILLDB_RELEVANCE_QUERIES_REL)
#endif
#ifdef SKILLDB_CLI_PATH_REL
#define SKILLDB_CLI_PATH SKILLDB_BESIDE_PROGRAM(SKILLDB_CLI_PATH_REL)
#endif
#ifdef SKILLDB_VERIFY_SOURCE_DIR_REL
#define SKILLDB_VERIFY_SOURCE_DIR SKILLDB_BESIDE_PROGRAM(SKILLDB_VERIFY_SOURCE_DIR_REL)
#endif
#ifdef SKILLDB_VERIFY_STATIC_RUNTIME_WORKER_REL
#define SKILLDB_VERIFY_STATIC_RUNTIME_WORKER \
  SKILLDB_BESIDE_PROGRAM(SKILLDB_VERIFY_STATIC_RUNTIME_WORKER_REL)
#endif
#ifdef SKILLDB_MINILM_DIR_REL
#define SKILLDB_MINILM_DIR SKILLDB_BESIDE_PROGRAM(SKILLDB_MINILM_DIR_REL)
#endif
#ifdef SKILLDB_MODELS_TESTDATA_REL
#define SKILLDB_MODELS_TESTDATA SKILLDB_BESIDE_PROGRAM(SKILLDB_MODELS_TESTDATA_REL)
#endif
#ifdef SKILLDB_RERANK_TESTDATA_REL
#define SKILLDB_RERANK_TESTDATA SKILLDB_BESIDE_PROGRAM(SKILLDB_RERANK_TESTDATA_REL)
#endif
#ifdef SKILLDB_LIBRARY_WORKER_REL
#define SKILLDB_LIBRARY_WORKER SKILLDB_BESIDE_PROGRAM(SKILLDB_LIBRARY_WORKER_REL)
#endif
#ifdef SKILLDB_CRASH_WRITER_REL
#define SKILLDB_CRASH_WRITER SKILLDB_BESIDE_PROGRAM(SKILLDB_CRASH_WRITER_REL)
#endif
#ifdef SKILLDB_ML_REL
#define SKILLDB_ML SKILLDB_BESIDE_PROGRAM(SKILLDB_ML_REL)
#endif
#ifdef SKILLDB_TRAINER_TASKS_REL
#define SKILLDB_TRAINER_TASKS SKILLDB_BESIDE_PROGRAM(SKILLDB_TRAINER_TASKS_REL)
#endif
#ifdef SKILLDB_TRAINER_TOOLS_REL
#define SKILLDB_TRAINER_TOOLS SKILLDB_BESIDE_PROGRAM(SKILLDB_TRAINER_TOOLS_REL)
#endif
#ifdef SKILLDB_PYDEPS_TB_REL
#define SKILLDB_PYDEPS_TB SKILLDB_BESIDE_PROGRAM(SKILLDB_PYDEPS_TB_REL)
#endif
#ifdef TRAINER_DIST_CHECK_REL
#define TRAINER_DIST_CHECK SKILLDB_BESIDE_PROGRAM(TRAINER_DIST_CHECK_REL)
#endif

#endif  // SKILLDB_TESTS_BUILD_PATHS_H_
