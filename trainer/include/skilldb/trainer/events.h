// TensorBoard event files: scalars of a run written as TensorBoard reads
// them (a TFRecord file of tensorflow.Event protocol buffers, each record
// framed by its length and masked CRC-32C checksums), so `tensorboard
// --logdir RUN_DIR` plots a training run and TensorBoard's own reader
// (EventAccumulator) reads it back. No TensorFlow or protobuf library: the
// few fields written (wall_time, step, file_version, summary.value's tag
// and simple_value) are encoded here.
//
// An EventWriter is not thread-safe: one thread writes a run's events.
#ifndef SKILLDB_TRAINER_EVENTS_H_
#define SKILLDB_TRAINER_EVENTS_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::trainer {

// CRC-32C (Castagnoli) of `data`, as TFRecord frames use it (before
// masking).
uint32_t Crc32c(std::string_view data);

// One TFRecord frame around `payload`: length (uint64, little-endian), its
// masked CRC-32C, the payload, its masked CRC-32C.
std::string TfRecord(std::string_view payload);

// An Event with `wall_time`, `step` and a Summary of scalar values (tag,
// simple_value), encoded as a protocol buffer.
std::string ScalarEvent(double wall_time, int64_t step,
                        const std::vector<std::pair<std::string, double>>&
                            scalars);

class EventWriter {
 public:
  // Creates DIR/events.out.tfevents.<seconds>.<host>.<pid> (a new file per
  // writer: TensorBoard reads every event file of a folder, so a resumed
  // run adds one) and writes the file_version event. IOError when the
  // file cannot be created.
  static Result<std::unique_ptr<EventWriter>> Open(const std::string& dir);
  ~EventWriter();

  // Appends one event of `scalars` at `step` and flushes it (a reader sees
  // every step written). Non-finite values are skipped.
  Status AddScalars(int64_t step,
                    const std::vector<std::pair<std::string, double>>& scalars);

  const std::string& path() const { return path_; }

 private:
  EventWriter(FILE* f, std::string path) : f_(f), path_(std::move(path)) {}
  Status Write(const std::string& payload);

  FILE* f_;
  std::string path_;
};

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_EVENTS_H_
