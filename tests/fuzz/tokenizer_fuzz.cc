// tokenizer.json on arbitrary text: loading never crashes, and a tokenizer
// it accepts encodes text into ids of its vocabulary and decodes them back
// without reading outside it.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "skilldb/models/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using skilldb::models::Tokenizer;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto tokenizer = Tokenizer::FromJson(text);
  if (!tokenizer.ok()) return 0;
  const Tokenizer& t = **tokenizer;
  for (std::string_view sample :
       {std::string_view("Hello, world! __shfl_down_sync(0xffffffff)"),
        std::string_view("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80 \xff"),
        text.substr(0, 256)}) {
    const std::vector<int32_t> ids = t.Encode(sample, true);
    for (int32_t id : ids) {
      if (id < 0 || id >= t.vocab_size()) std::abort();
    }
    (void)t.Decode(ids, false);
  }
  // Ids the vocabulary does not have are skipped, never read.
  const int32_t odd[] = {-1, t.vocab_size(), 2147483647};
  (void)t.Decode(odd, true);
  return 0;
}
