// CheckEndpoint: what `skilldb llm check` reports: whether an
// OpenAI-compatible endpoint answers, the models it lists, how long that
// took, and optionally how long a one-token generation takes.
//
// Stateless: safe to call from any thread.
#ifndef SKILLDB_LLM_CHECK_H_
#define SKILLDB_LLM_CHECK_H_

#include <optional>
#include <string>
#include <vector>

#include "skilldb/llm/client_config.h"
#include "skilldb/llm/openai_client.h"
#include "skilldb/status.h"

namespace skilldb::llm {

struct CheckOptions {
  // Also time a chat completion of probe_max_tokens tokens. Default: false.
  bool probe_generation = false;
  int probe_max_tokens = 1;  // Default: 1.
  // Keep the config's retries; by default a check tries once, so that an
  // unreachable server is reported at once. Default: false.
  bool retry = false;
};

struct CheckReport {
  std::string base_url;
  std::string model;  // configured, or the first listed when none was
  std::vector<ModelInfo> models;
  // The configured model is among those listed (true when none was
  // configured and the server lists at least one).
  bool model_listed = false;
  double models_latency_ms = 0.0;  // GET /v1/models, wall clock
  // When probe_generation: the probe's wall time if it generated
  // (generation_status OK), else unset with its error in
  // generation_status: one or the other, never both.
  std::optional<double> generation_latency_ms;
  Status generation_status;
};

// GETs /v1/models (and probes generation when asked). Errors: the listing's
// (Unavailable when nothing answers, DeadlineExceeded, the codes of a
// refused request, InvalidArgument for an unreadable list), each naming the
// URL.
// A failed generation probe is not an error: it is in generation_status.
Result<CheckReport> CheckEndpoint(const ClientConfig& config,
                                  const CheckOptions& options = CheckOptions());

// The report as one JSON object: {"base_url", "model", "models": [{"id",
// "owned_by", "max_model_len"}], "model_listed", "models_latency_ms", and
// "generation_latency_ms" or "generation_error" when probed}.
std::string CheckReportJson(const CheckReport& report);

}  // namespace skilldb::llm

#endif  // SKILLDB_LLM_CHECK_H_
