// What an OpenAI-compatible server answers, on arbitrary bytes: chat and
// completion answers, echoed scoring answers, /v1/models and the rerank
// endpoints (Cohere and TEI shapes). The first byte picks the reader and
// its arguments, the rest is the body. Never a crash or an exception, and
// what is accepted keeps the readers' promises: n samples, finite
// logprobs, echo spans inside the text, rerank indices in range and once.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "openai_protocol.h"
#include "rerank_protocol.h"

namespace {

using skilldb::Result;
using namespace skilldb::llm;
using namespace skilldb::llm::internal;

void CheckSamples(const Result<ParsedSamples>& parsed, int n) {
  if (!parsed.ok()) return;
  if (static_cast<int>(parsed->samples.size()) != n) std::abort();
  for (const Sample& s : parsed->samples) {
    for (double lp : s.token_logprobs) {
      if (!std::isfinite(lp)) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t pick = data[0];
  HttpAnswer answer;
  answer.request = "POST http://fuzz:1/v1/x";
  answer.status = 200;
  answer.body.assign(reinterpret_cast<const char*>(data) + 1, size - 1);
  const int n = 1 + (pick >> 4) % 4;
  switch (pick % 6) {
    case 0:
      CheckSamples(ParseChatAnswer(answer, n, 4096), n);
      break;
    case 1:
      CheckSamples(ParseCompletionAnswer(answer, n, 4096), n);
      break;
    case 2: {
      UsageCounts usage;
      const std::string sent = "P: ab";
      auto echoed = ParseEchoAnswer(answer, sent, &usage, 4096);
      if (!echoed.ok()) break;
      if (echoed->starts.size() != echoed->tokens.size() ||
          echoed->ends.size() != echoed->tokens.size()) {
        std::abort();
      }
      for (size_t i = 0; i < echoed->starts.size(); ++i) {
        if (echoed->starts[i] > echoed->ends[i] ||
            echoed->ends[i] > echoed->text.size()) {
          std::abort();
        }
      }
      (void)ScoreFromEcho(*echoed, 3, echoed->text.size());
      break;
    }
    case 3:
      (void)ParseModelsAnswer(answer);
      break;
    default: {
      const size_t count = 1 + (pick >> 4);
      uint64_t tokens = 0;
      auto scores = ParseRerankAnswer(
          answer, pick % 6 == 4 ? RerankApi::kCohere : RerankApi::kTei, count,
          &tokens);
      if (!scores.ok()) break;
      std::set<size_t> seen;
      for (const RerankScore& s : *scores) {
        if (s.index >= count || !seen.insert(s.index).second ||
            !std::isfinite(s.score)) {
          std::abort();
        }
      }
      break;
    }
  }
  return 0;
}
