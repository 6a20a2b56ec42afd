// What the agents' subcommands build from their flags: the backbone (the
// OpenAI-compatible client), the verifier, the rollout store.
#ifndef SKILLDB_CLI_AGENT_SETUP_H_
#define SKILLDB_CLI_AGENT_SETUP_H_

#include <memory>
#include <string>

#include "agent_commands.h"
#include "skilldb/llm/openai_client.h"
#include "skilldb/policy/rollout_store.h"
#include "skilldb/verify/verify.h"

namespace skilldb::cli {

// --rollouts PATH, else $SKILLDB_ROLLOUTS, else beside the library.
std::string ResolveRolloutsPath(const GlobalArgs& g, const std::string& flag);

// Opens the store at `path`: read-only, or writable (and created when
// `create`; a command that only reads what a store holds never creates
// one: a mistyped path is NotFound).
Result<std::unique_ptr<policy::RolloutStore>> OpenRollouts(
    const std::string& path, bool read_only, bool create = false);

// The client for the --llm-* options and the environment (waits reported
// on io.err).
Result<std::unique_ptr<llm::OpenAiClient>> MakeBackbone(const AgentLlmArgs& a,
                                                       const Io& io);

// The verifier for `backend` ("cuda" | "host") with `workers` host workers
// (0 = one per two cores).
Result<std::unique_ptr<verify::TaskVerifier>> MakeAgentVerifier(
    const std::string& backend, int workers);

}  // namespace skilldb::cli

#endif  // SKILLDB_CLI_AGENT_SETUP_H_
