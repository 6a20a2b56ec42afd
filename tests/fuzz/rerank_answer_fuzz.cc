// The Selection Agent's readings of model answers on arbitrary bytes: a
// listwise ranking (ParsePermutation) and a pointwise verdict (ReadVerdict
// over the alternatives of a chat answer). Never a crash, and what is read
// is well formed: a permutation of the candidates whose counts add up, a
// probability in [0, 1].
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "openai_protocol.h"
#include "skilldb/rerank/permutation.h"
#include "skilldb/rerank/pointwise.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t pick = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1,
                              size - 1);
  if (pick % 2 == 0) {
    const size_t n = 1 + (pick >> 1) % 40;
    auto parsed = skilldb::rerank::ParsePermutation(text, n);
    if (parsed.ok()) {
      if (parsed->order.size() != n || parsed->ranked + parsed->missing != n) {
        std::abort();
      }
      std::vector<bool> seen(n, false);
      for (size_t i : parsed->order) {
        if (i >= n || seen[i]) std::abort();
        seen[i] = true;
      }
    }
    bool unfinished = false;
    const std::string_view rest =
        skilldb::rerank::StripThinking(text, &unfinished);
    if (rest.size() > text.size()) std::abort();
    return 0;
  }
  // A pointwise answer as the client reads it from the wire.
  skilldb::llm::internal::HttpAnswer answer;
  answer.request = "POST http://fuzz:1/v1/chat/completions";
  answer.status = 200;
  answer.body = std::string(text);
  auto parsed = skilldb::llm::internal::ParseChatAnswer(answer, 1, 4096);
  if (!parsed.ok()) return 0;
  auto verdict = skilldb::rerank::ReadVerdict(parsed->samples.front());
  if (verdict && !(verdict->p_yes >= 0.0 && verdict->p_yes <= 1.0)) {
    std::abort();
  }
  return 0;
}
