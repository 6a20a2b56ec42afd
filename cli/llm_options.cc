#include "llm_options.h"

#include <mutex>
#include <ostream>

#include "text.h"

namespace skilldb::cli {

Result<llm::ClientConfig> ResolveLlmConfig(const LlmClientArgs& args,
                                           const llm::ClientConfig& base,
                                           const Io& io) {
  llm::ClientFlags flags;
  flags.url = args.url;
  flags.model = args.model;
  flags.key = args.key;
  if (args.timeout_s > 0) flags.timeout_s = args.timeout_s;
  flags.retries = args.retries;
  if (args.native_n == "true") flags.native_n = true;
  if (args.native_n == "false") flags.native_n = false;
  SKILLDB_ASSIGN_OR_RETURN(
      llm::ClientConfig config,
      llm::ResolveClientConfig(flags, llm::ProcessEnvironment(), base));
  if (args.max_in_flight > 0) config.max_in_flight = args.max_in_flight;
  if (args.token_ids) config.request_token_ids = true;
  // The notices come from the transport's threads: one line at a time.
  static std::mutex mu;
  std::ostream* err = io.err;
  config.on_wait = [err](std::string_view line) {
    std::lock_guard<std::mutex> lock(mu);
    *err << "skilldb: " << EscapeLine(line) << "\n";
  };
  return config;
}

}  // namespace skilldb::cli
