// Files and the standard streams, with the reason for every failure kept:
// each error names the file (or stdout) and the system's errno text, and a
// failed write of the output is an error rather than a short output with
// exit code 0 (`skilldb export > /dev/full`).
//
// A FdStreamBuf or OutputFile is used by one thread at a time.
#ifndef SKILLDB_CLI_FILES_H_
#define SKILLDB_CLI_FILES_H_

#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

#include "skilldb/status.h"

namespace skilldb::cli {

// A buffered output stream buffer over a file descriptor that records the
// errno of the first failed write. After a failure every further write
// fails too, so an ostream over it goes bad and loops that check `good()`
// stop early.
class FdStreamBuf : public std::streambuf {
 public:
  // Does not take ownership of `fd`.
  explicit FdStreamBuf(int fd);
  // Flushes what is buffered; a failure here is lost (call pubsync first).
  ~FdStreamBuf() override;
  FdStreamBuf(const FdStreamBuf&) = delete;
  FdStreamBuf& operator=(const FdStreamBuf&) = delete;

  // 0 while every write has succeeded; else the errno of the first failure.
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  bool Drain();  // writes the buffer out; false (error_ set) on failure
  bool WriteAll(const char* data, size_t size);

  int fd_;
  int error_ = 0;
  std::unique_ptr<char[]> buffer_;
};

// Flushes `out` and says whether everything written to it arrived:
// IOError "cannot write to NAME: REASON" (REASON from the errno a
// FdStreamBuf recorded, when `out` writes through one) if not.
Status StreamStatus(std::ostream& out, std::string_view name);

// A file created (or truncated) for writing, through a FdStreamBuf.
class OutputFile {
 public:
  // Opens `path`. IOError naming it and the errno text on failure.
  static Result<std::unique_ptr<OutputFile>> Create(const std::string& path);
  ~OutputFile();  // closes the file if Close was not called
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return stream_; }
  // Flushes, syncs to disk and closes. IOError naming the file and the
  // errno text if any write, the sync or the close failed.
  Status Close();

 private:
  OutputFile(std::string path, int fd);
  std::string path_;
  int fd_;
  FdStreamBuf buf_;
  std::ostream stream_;
};

// A file opened for reading, read a buffer at a time.
class InputFile {
 public:
  // Opens `path`. NotFound if it does not exist, InvalidArgument for a
  // directory, IOError with the errno text otherwise; each names the file.
  static Result<std::unique_ptr<InputFile>> Open(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // Reads up to `size` bytes into `data`; 0 at the end of the file. IOError
  // naming the file and the errno text on failure.
  Result<size_t> Read(char* data, size_t size);
  // The file's size when it is a regular file, else 0 (a pipe).
  uint64_t size() const { return size_; }

 private:
  InputFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  std::string path_;
  int fd_;
  uint64_t size_;
};

// The errno text ("No space left on device").
std::string ErrnoText(int err);

}  // namespace skilldb::cli

#endif  // SKILLDB_CLI_FILES_H_
