#include "agent_setup.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "context.h"

namespace skilldb::cli {

std::string ResolveRolloutsPath(const GlobalArgs& g, const std::string& flag) {
  if (!flag.empty()) return flag;
  const char* env = std::getenv("SKILLDB_ROLLOUTS");
  if (env != nullptr && *env != '\0') return env;
  bool is_default = false;
  return policy::DefaultRolloutPath(ResolveDbPath(g, &is_default));
}

Result<std::unique_ptr<policy::RolloutStore>> OpenRollouts(
    const std::string& path, bool read_only) {
  policy::RolloutStoreOptions o;
  o.read_only = read_only;
  return policy::RolloutStore::Open(path, o);
}

Result<std::unique_ptr<llm::OpenAiClient>> MakeBackbone(const AgentLlmArgs& a) {
  llm::ClientFlags flags{a.url, a.model, a.key};
  SKILLDB_ASSIGN_OR_RETURN(llm::ClientConfig config,
                           llm::ResolveClientConfig(flags));
  if (a.max_in_flight > 0) config.max_in_flight = a.max_in_flight;
  config.request_token_ids = a.token_ids;
  return llm::OpenAiClient::Create(config);
}

Result<std::unique_ptr<verify::TaskVerifier>> MakeAgentVerifier(
    const std::string& backend, int workers) {
  SKILLDB_ASSIGN_OR_RETURN(verify::Backend b, verify::ParseBackend(backend));
  verify::VerifierOptions o = verify::DefaultOptions(b);
  if (b == verify::Backend::kHost) {
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    o.host_workers = workers > 0 ? workers : std::max(1, cores / 2);
  }
  return verify::MakeVerifier(o);
}

}  // namespace skilldb::cli
