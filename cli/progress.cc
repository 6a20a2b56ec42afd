#include "progress.h"

#include <cstdio>

namespace skilldb::cli {
namespace {

std::string Seconds(std::chrono::steady_clock::duration d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.0f s",
                std::chrono::duration<double>(d).count());
  return buf;
}

}  // namespace

Progress::Progress(ProgressMode mode, std::ostream* err, std::string what,
                   std::string unit)
    : mode_(mode),
      err_(err),
      what_(std::move(what)),
      unit_(std::move(unit)),
      interval_(mode == ProgressMode::kTerminal
                    ? Clock::duration(std::chrono::milliseconds(100))
                    : Clock::duration(std::chrono::seconds(5))),
      last_print_(start_) {}

Progress::~Progress() { Finish(); }

void Progress::Update(uint64_t done, uint64_t total) {
  if (mode_ == ProgressMode::kOff) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  done_ = done;
  total_ = total;
  counted_ = true;
  if (DueLocked()) PrintLocked(false);
}

void Progress::StartTicking() {
  if (mode_ == ProgressMode::kOff || ticker_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    if (DueLocked()) PrintLocked(false);
  }
  ticker_ = std::thread([this] { TickLoop(); });
}

void Progress::TickLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!finished_) {
    wake_.wait_for(lock, interval_);
    if (!finished_ && DueLocked()) PrintLocked(false);
  }
}

void Progress::Finish() {
  if (mode_ == ProgressMode::kOff) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    finished_ = true;
    // On a terminal, a line for the end only where one was shown (work
    // that took longer than the first delay), so quick commands stay quiet.
    if (printed_) PrintLocked(true);
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

bool Progress::DueLocked() const {
  const Clock::time_point now = Clock::now();
  if (mode_ == ProgressMode::kLines) {
    // A log gets the start at once, then a line per interval.
    return !printed_ || now - last_print_ >= interval_;
  }
  // A terminal shows nothing for the first half second (quick commands
  // stay quiet), then redraws at most every interval.
  return now - start_ >= std::chrono::milliseconds(500) &&
         now - last_print_ >= interval_;
}

void Progress::PrintLocked(bool final) {
  std::string line = "skilldb: " + what_;
  if (counted_) {
    line += ": " + std::to_string(done_);
    if (total_ > 0) line += "/" + std::to_string(total_);
    line += " " + unit_;
    if (total_ > 0) {
      line += " (" + std::to_string(done_ * 100 / total_) + "%)";
    }
    line += ",";
  } else {
    line += "...";
  }
  line += " " + Seconds(Clock::now() - start_);
  if (final) line += ", done";
  if (mode_ == ProgressMode::kTerminal) {
    // \r and "erase to end of line": the line is rewritten in place.
    *err_ << "\r" << line << "\x1b[K" << (final ? "\n" : "") << std::flush;
  } else {
    *err_ << line << "\n" << std::flush;
  }
  printed_ = true;
  last_print_ = Clock::now();
}

}  // namespace skilldb::cli
