#include "agent_setup.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "context.h"
#include "llm_options.h"

namespace skilldb::cli {

std::string ResolveRolloutsPath(const GlobalArgs& g, const std::string& flag) {
  return SidecarStorePath(g, flag, "SKILLDB_ROLLOUTS", ".rollouts.sqlite");
}

Result<std::unique_ptr<policy::RolloutStore>> OpenRollouts(
    const std::string& path, bool read_only, bool create) {
  policy::RolloutStoreOptions o;
  o.read_only = read_only;
  o.create = create;
  auto store = policy::RolloutStore::Open(path, o);
  if (!store.ok() && store.status().code() == StatusCode::kNotFound) {
    return Status::NotFound(store.status().message() +
                            " (give --rollouts PATH or set SKILLDB_ROLLOUTS; "
                            "skilldb solve creates one)");
  }
  return store;
}

Result<std::unique_ptr<llm::OpenAiClient>> MakeBackbone(const AgentLlmArgs& a,
                                                       const Io& io) {
  SKILLDB_ASSIGN_OR_RETURN(llm::ClientConfig config,
                           ResolveLlmConfig(a, llm::ClientConfig(), io));
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
