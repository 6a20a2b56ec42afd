// A minimal PNG writer and line-chart rasterizer for the training report
// (no image library in the dependency set): 8-bit RGB, one IDAT holding a
// zlib stream of stored (uncompressed) deflate blocks, CRC-32 per chunk and
// Adler-32 over the image data, as RFC 1950/1951 and the PNG spec define.
#ifndef SKILLDB_TRAINER_PNG_H_
#define SKILLDB_TRAINER_PNG_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace skilldb::trainer {

uint32_t Crc32(const uint8_t* data, size_t size, uint32_t crc = 0);
uint32_t Adler32(const uint8_t* data, size_t size, uint32_t adler = 1);

struct Image {
  Image(int w, int h, uint32_t background = 0xffffff);
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;                // row-major, 3 bytes a pixel
  void Set(int x, int y, uint32_t color);  // clipped
  uint32_t Get(int x, int y) const;
  void Line(int x0, int y0, int x1, int y1, uint32_t color, int thickness = 1);
  void Rect(int x0, int y0, int x1, int y1, uint32_t color);  // filled
};

// The PNG file's bytes.
std::string EncodePng(const Image& image);

struct Series {
  std::string name;
  uint32_t color = 0x1f77b4;                      // 0xRRGGBB
  std::vector<std::pair<double, double>> points;  // (x, y), any order in x
  bool bars = false;  // vertical bars at each x instead of a line
};

// The data ranges a chart was drawn over (for the HTML legend).
struct ChartRange {
  double x_min = 0, x_max = 1, y_min = 0, y_max = 1;
};

struct ChartOptions {
  int width = 640;          // Default: 640.
  int height = 320;         // Default: 320.
  bool y_from_zero = true;  // include 0 on the y axis. Default: true.
};

// Axes, a light grid at tenths, and each series (lines with point markers,
// or bars). Non-finite points are skipped.
Image LineChart(const std::vector<Series>& series, const ChartOptions& options,
                ChartRange* range = nullptr);

std::string Base64(const std::string& bytes);

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_PNG_H_
