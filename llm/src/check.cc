#include "skilldb/llm/check.h"

#include <algorithm>
#include <chrono>

#include "json_util.h"

namespace skilldb::llm {
namespace {

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

Result<CheckReport> CheckEndpoint(const ClientConfig& config,
                                  const CheckOptions& options) {
  ClientConfig c = config;
  if (!options.retry) c.retry.max_retries = 0;
  SKILLDB_ASSIGN_OR_RETURN(auto client, OpenAiClient::Create(c));
  CheckReport report;
  report.base_url = c.base_url;
  const auto start = std::chrono::steady_clock::now();
  SKILLDB_ASSIGN_OR_RETURN(report.models, client->ListModels());
  report.models_latency_ms = MillisecondsSince(start);
  report.model = c.model;
  if (report.model.empty() && !report.models.empty()) {
    report.model = report.models.front().id;
  }
  for (const ModelInfo& m : report.models) {
    if (m.id == report.model) report.model_listed = true;
  }
  if (options.probe_generation) {
    SamplingOptions probe;
    probe.max_tokens = std::max(options.probe_max_tokens, 1);
    probe.temperature = 0.0;
    probe.logprobs = false;
    const auto gen_start = std::chrono::steady_clock::now();
    auto generated = client->Generate({{{"user", "Say OK."}}}, probe);
    // A latency only for a generation that worked: a failure is its error.
    if (generated.ok()) {
      report.generation_latency_ms = MillisecondsSince(gen_start);
    } else {
      report.generation_status = generated.status();
    }
  }
  return report;
}

std::string CheckReportJson(const CheckReport& r) {
  using internal::json;
  json models = json::array();
  for (const ModelInfo& m : r.models) {
    models.push_back({{"id", m.id},
                      {"owned_by", m.owned_by},
                      {"max_model_len", m.max_model_len}});
  }
  json out = {{"base_url", r.base_url},
              {"model", r.model},
              {"models", std::move(models)},
              {"model_listed", r.model_listed},
              {"models_latency_ms", r.models_latency_ms}};
  if (r.generation_latency_ms) {
    out["generation_latency_ms"] = *r.generation_latency_ms;
  }
  if (!r.generation_status.ok()) {
    out["generation_error"] = r.generation_status.ToString();
  }
  return internal::Dump(out);
}

}  // namespace skilldb::llm
