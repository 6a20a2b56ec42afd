// skilldb llm check: whether the OpenAI-compatible endpoint answers, the
// models it lists and how long that took (llm/check.h does the work).
#include "context.h"
#include "llm_options.h"
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
  llm::ClientConfig base;
  // A check answers quickly or says why not.
  base.request_timeout_ms = 30000;
  base.read_timeout_ms = 30000;
  auto config = ResolveLlmConfig(a.llm, base, io);
  if (!config.ok()) return Fail(g, io, config.status());
  llm::CheckOptions options;
  options.probe_generation = a.probe;
  auto report = llm::CheckEndpoint(*config, options);
  if (!report.ok()) return Fail(g, io, report.status());
  // A probe that did not generate fails the check, with its error's exit
  // status (its message on stderr).
  const bool probe_failed = a.probe && !report->generation_status.ok();
  if (g.json) {
    PrintJson(io, Json::parse(llm::CheckReportJson(*report)));
    return probe_failed ? Fail(g, io, report->generation_status.WithContext(
                                          "the generation probe"))
                        : kExitOk;
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
  }
  if (probe_failed) {
    return Fail(g, io,
                report->generation_status.WithContext("the generation probe"));
  }
  return kExitOk;
}

}  // namespace skilldb::cli
