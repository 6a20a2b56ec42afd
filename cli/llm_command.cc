// skilldb llm check: whether the OpenAI-compatible endpoint answers, the
// models it lists and how long that took (llm/check.h does the work).
#include "context.h"
#include "skilldb/llm/check.h"
#include "skilldb/llm/client_config.h"

namespace skilldb::cli {

int RunLlm(const GlobalArgs& g, const LlmArgs& a, const Io& io) {
  if (a.action != "check") {
    return Fail(
        g, io,
        Status::InvalidArgument("unknown llm action '" + EscapeLine(a.action) +
                                "' (expected check)"));
  }
  llm::ClientFlags flags;
  if (!a.llm_url.empty()) flags.url = a.llm_url;
  if (!a.llm_model.empty()) flags.model = a.llm_model;
  auto config = llm::ResolveClientConfig(flags);
  if (!config.ok()) return Fail(g, io, config.status());
  llm::CheckOptions options;
  options.probe_generation = a.probe;
  auto report = llm::CheckEndpoint(*config, options);
  if (!report.ok()) return Fail(g, io, report.status());
  if (g.json) {
    PrintJson(io, Json::parse(llm::CheckReportJson(*report)));
    return kExitOk;
  }
  *io.out << EscapeLine(report->base_url) << ": " << report->models.size()
          << (report->models.size() == 1 ? " model" : " models") << " in "
          << FormatScore(report->models_latency_ms) << " ms\n";
  for (const llm::ModelInfo& m : report->models) {
    *io.out << "  " << EscapeLine(m.id);
    if (m.max_model_len > 0) *io.out << "  context " << m.max_model_len;
    *io.out << "\n";
  }
  if (!report->model.empty()) {
    *io.out << "model " << EscapeLine(report->model)
            << (report->model_listed ? " is listed" : " is NOT listed") << "\n";
  }
  if (report->generation_latency_ms) {
    *io.out << "one-token generation: "
            << FormatScore(*report->generation_latency_ms) << " ms\n";
  } else if (a.probe) {
    *io.out << "generation probe failed: "
            << EscapeLine(report->generation_status.ToString()) << "\n";
  }
  return kExitOk;
}

}  // namespace skilldb::cli
