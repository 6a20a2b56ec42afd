// The client configuration of every command that talks to a model (query
// --rerank, llm check, solve, distill): the --llm-* options over the
// environment over a command's own defaults, and the client's notices of
// long waits printed on stderr.
#ifndef SKILLDB_CLI_LLM_OPTIONS_H_
#define SKILLDB_CLI_LLM_OPTIONS_H_

#include "commands.h"
#include "skilldb/llm/client_config.h"

namespace skilldb::cli {

// llm::ResolveClientConfig over `args` and the process environment, with
// `base` for what neither sets; the client's waits ("waiting for POST
// ...: 20.0 s so far", retries) go to io.err. max_in_flight and token_ids
// apply when given. Errors: InvalidArgument naming the option or variable.
Result<llm::ClientConfig> ResolveLlmConfig(const LlmClientArgs& args,
                                           const llm::ClientConfig& base,
                                           const Io& io);

}  // namespace skilldb::cli

#endif  // SKILLDB_CLI_LLM_OPTIONS_H_
