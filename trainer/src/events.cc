// TensorBoard event files (see events.h). The encodings follow
// tensorflow/core/util/event.proto (Event: 1 wall_time double, 2 step
// int64, 3 file_version string, 5 summary), summary.proto (Summary: 1
// repeated Value; Value: 1 tag string, 2 simple_value float) and
// tensorflow/core/lib/io/record_writer.cc (the TFRecord frame, the CRC
// mask).
#include "skilldb/trainer/events.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

namespace skilldb::trainer {
namespace {

// Table of the reflected Castagnoli polynomial 0x82F63B78.
struct Crc32cTable {
  uint32_t t[256];
  Crc32cTable() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
  }
};

uint32_t MaskedCrc(std::string_view data) {
  const uint32_t crc = Crc32c(data);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

void PutFixed32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

void PutFixed64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// A length-delimited field (wire type 2).
void PutBytes(std::string* out, int field, std::string_view bytes) {
  PutVarint(out, (static_cast<uint64_t>(field) << 3) | 2);
  PutVarint(out, bytes.size());
  out->append(bytes);
}

std::string EventHeader(double wall_time, int64_t step) {
  std::string e;
  uint64_t bits;
  std::memcpy(&bits, &wall_time, sizeof bits);
  e.push_back(static_cast<char>((1 << 3) | 1));  // wall_time, 64-bit
  PutFixed64(&e, bits);
  PutVarint(&e, (2 << 3) | 0);  // step, varint
  PutVarint(&e, static_cast<uint64_t>(step));
  return e;
}

double WallTime() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

uint32_t Crc32c(std::string_view data) {
  static const Crc32cTable table;
  uint32_t c = 0xffffffffu;
  for (unsigned char b : data) c = table.t[(c ^ b) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

std::string TfRecord(std::string_view payload) {
  std::string out;
  std::string len;
  PutFixed64(&len, payload.size());
  out += len;
  PutFixed32(&out, MaskedCrc(len));
  out.append(payload);
  PutFixed32(&out, MaskedCrc(payload));
  return out;
}

std::string ScalarEvent(
    double wall_time, int64_t step,
    const std::vector<std::pair<std::string, double>>& scalars) {
  std::string summary;
  for (const auto& [tag, value] : scalars) {
    if (!std::isfinite(value)) continue;
    std::string v;
    PutBytes(&v, 1, tag);
    const float f = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    v.push_back(static_cast<char>((2 << 3) | 5));  // simple_value, 32-bit
    PutFixed32(&v, bits);
    PutBytes(&summary, 1, v);
  }
  std::string e = EventHeader(wall_time, step);
  PutBytes(&e, 5, summary);
  return e;
}

Result<std::unique_ptr<EventWriter>> EventWriter::Open(const std::string& dir) {
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  const std::string path =
      dir + "/events.out.tfevents." +
      std::to_string(static_cast<int64_t>(WallTime())) + "." + host + "." +
      std::to_string(::getpid());
  FILE* f = std::fopen(path.c_str(), "ab");
  if (f == nullptr) return Status::IOError(path + ": " + std::strerror(errno));
  std::unique_ptr<EventWriter> w(new EventWriter(f, path));
  std::string first = EventHeader(WallTime(), 0);
  PutBytes(&first, 3, "brain.Event:2");
  SKILLDB_RETURN_IF_ERROR(w->Write(first));
  return w;
}

EventWriter::~EventWriter() { std::fclose(f_); }

Status EventWriter::Write(const std::string& payload) {
  const std::string frame = TfRecord(payload);
  if (std::fwrite(frame.data(), 1, frame.size(), f_) != frame.size() ||
      std::fflush(f_) != 0) {
    return Status::IOError(path_ + ": write failed");
  }
  return Status::Ok();
}

Status EventWriter::AddScalars(
    int64_t step, const std::vector<std::pair<std::string, double>>& scalars) {
  return Write(ScalarEvent(WallTime(), step, scalars));
}

}  // namespace skilldb::trainer
