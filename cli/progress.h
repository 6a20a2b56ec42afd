// Progress of long work (import, export, compact, gc, batch queries,
// verification) on stderr, so that a 40-second import is not silent.
//
// Shown on a terminal as one line rewritten in place ("skilldb: importing:
// 120000/200000 skills (60%)"), elsewhere (with --progress into a log) as a
// line every few seconds; never on stdout, so it cannot mix with the output.
//
// A Progress is safe to update from several threads (an engine callback may
// report from a worker).
#ifndef SKILLDB_CLI_PROGRESS_H_
#define SKILLDB_CLI_PROGRESS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

namespace skilldb::cli {

// Whether and how progress is shown (GlobalArgs::progress): off, rewritten
// in place on a terminal, or as plain lines.
enum class ProgressMode { kOff, kTerminal, kLines };

class Progress {
 public:
  // Reports `what` ("importing") counted in `unit` ("skills") on `err`.
  // With ProgressMode::kOff every call does nothing.
  Progress(ProgressMode mode, std::ostream* err, std::string what,
           std::string unit);
  // Finish().
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` of `total` units (total 0 = unknown). Cheap to call often: on a
  // terminal it prints nothing for the first 0.5 s, then at most every
  // 100 ms; as lines, at once and then every 5 s.
  void Update(uint64_t done, uint64_t total = 0);

  // Work with no count of its own (a compaction): from now until Finish, a
  // background thread shows the elapsed seconds.
  void StartTicking();

  // Prints the final state, ends the line and stops the ticker. Idempotent.
  void Finish();

 private:
  using Clock = std::chrono::steady_clock;
  bool DueLocked() const;        // REQUIRES: mu_ held
  void PrintLocked(bool final);  // REQUIRES: mu_ held
  void TickLoop();

  const ProgressMode mode_;
  std::ostream* const err_;
  const std::string what_;
  const std::string unit_;
  const Clock::time_point start_ = Clock::now();
  const Clock::duration interval_;

  std::mutex mu_;
  std::condition_variable wake_;  // ends the ticker early on Finish
  uint64_t done_ = 0;             // GUARDED_BY(mu_)
  uint64_t total_ = 0;            // GUARDED_BY(mu_)
  bool counted_ = false;          // GUARDED_BY(mu_): Update was called
  bool finished_ = false;         // GUARDED_BY(mu_)
  bool printed_ = false;          // GUARDED_BY(mu_): a line is on screen
  Clock::time_point last_print_;  // GUARDED_BY(mu_)
  std::thread ticker_;
};

}  // namespace skilldb::cli

#endif  // SKILLDB_CLI_PROGRESS_H_
