// The crash test's writer: commits the model's script forever,
// acknowledging each durable commit by writing its version to a file
// descriptor, until it is killed. Usage: crash_writer PATH FD STAGE_BYTES
// IMPORT_SIZE. Exits 2 on bad arguments, 3 if the library does not open, 4
// if a commit fails (saying why on stderr), 5 if the acknowledgement cannot
// be written.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "crash_writer.h"
#include "model.h"
#include "skilldb/library.h"

int main(int argc, char** argv) {
  using namespace skilldb;
  if (argc != 5) return 2;
  const std::string path = argv[1];
  const int fd = std::atoi(argv[2]);
  const size_t stage_bytes = std::strtoull(argv[3], nullptr, 10);
  const int import_size = std::atoi(argv[4]);
  if (fd < 0 || import_size <= 0) return 2;
  auto opened = Library::Open(testing::CrashOptions(stage_bytes), path);
  if (!opened.ok()) return 3;
  Library& lib = **opened;
  testing::ModelState state = testing::ModelAt(lib.CurrentVersion(), import_size);
  while (true) {
    const Version v = lib.CurrentVersion() + 1;
    auto commit = testing::Script(v, state, import_size);
    auto done = lib.Commit(commit.puts, commit.deletes);
    if (!done.ok() || *done != v) {
      // Why, on stderr (the test's output): a failed commit is a bug to find.
      const std::string why =
          "crash_writer: commit of version " + std::to_string(v) + " " +
          (done.ok() ? "returned version " + std::to_string(*done)
                     : "failed: " + done.status().ToString()) +
          "\n";
      static_cast<void>(write(2, why.data(), why.size()));
      _exit(4);
    }
    testing::ApplyScript(commit, &state);
    const uint64_t ack = v;
    if (write(fd, &ack, sizeof(ack)) != sizeof(ack)) _exit(5);
  }
}
