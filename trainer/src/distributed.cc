// c10d process groups (torch inside). The concrete ProcessGroupGloo /
// ProcessGroupNCCL types are held directly: in libtorch 1.13 they derive
// from c10d::ProcessGroup, in 2.x from c10d::Backend, and both versions
// give them the same allreduce / broadcast / barrier calls.
#include "skilldb/trainer/distributed.h"

#include <torch/torch.h>

#include <cstdlib>
#include <string>

#include "dist_internal.h"

// SKILLDB_TRAINER_NO_GLOO: a libtorch without gloo headers (CMake found
// no gloo/context.h): only the NCCL group, if built, can be had.
#ifndef SKILLDB_TRAINER_NO_GLOO
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>  // BroadcastOptions, in any build
#ifdef SKILLDB_TRAINER_NCCL
#ifndef USE_C10D_NCCL
#define USE_C10D_NCCL 1
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace skilldb::trainer {

class ProcessGroupHandle {
 public:
  DistEnv env;
  c10::intrusive_ptr<c10d::Store> store;
#ifndef SKILLDB_TRAINER_NO_GLOO
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
#endif
#ifdef SKILLDB_TRAINER_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;
#endif

  template <typename F>
  auto WithGroup(F&& f) {
#ifdef SKILLDB_TRAINER_NCCL
#ifdef SKILLDB_TRAINER_NO_GLOO
    return f(*nccl);
#else
    if (nccl) return f(*nccl);
#endif
#endif
#ifndef SKILLDB_TRAINER_NO_GLOO
    return f(*gloo);
#endif
  }
};

namespace {

Result<int> EnvInt(const char* name, int fallback, int lo, int hi) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < lo || x > hi) {
    return Status::InvalidArgument(std::string("environment: ") + name + "='" +
                                   v + "' is not an integer in [" +
                                   std::to_string(lo) + ", " +
                                   std::to_string(hi) + "]");
  }
  return static_cast<int>(x);
}

}  // namespace

Result<DistEnv> DistEnvFromEnvironment(const std::string& backend) {
  DistEnv env;
  env.backend = backend;
  SKILLDB_ASSIGN_OR_RETURN(env.world_size, EnvInt("WORLD_SIZE", 1, 1, 1 << 16));
  SKILLDB_ASSIGN_OR_RETURN(env.rank, EnvInt("RANK", 0, 0, env.world_size - 1));
  SKILLDB_ASSIGN_OR_RETURN(env.master_port,
                           EnvInt("MASTER_PORT", 29500, 1, 65535));
  if (const char* a = std::getenv("MASTER_ADDR"); a && *a) env.master_addr = a;
  SKILLDB_ASSIGN_OR_RETURN(
      env.collective_timeout_s,
      EnvInt("SKILLDB_DIST_TIMEOUT_S", env.collective_timeout_s, 1, 86400));
  return env;
}

Result<std::shared_ptr<ProcessGroupHandle>> InitProcessGroup(
    const DistEnv& env) {
  if (env.world_size < 1 || env.rank < 0 || env.rank >= env.world_size) {
    return Status::InvalidArgument(
        "distributed: rank " + std::to_string(env.rank) +
        " outside world size " + std::to_string(env.world_size));
  }
  auto h = std::make_shared<ProcessGroupHandle>();
  h->env = env;
  try {
    c10d::TCPStoreOptions opts;
    opts.port = static_cast<uint16_t>(env.master_port);
    opts.isServer = env.rank == 0;
    opts.numWorkers = static_cast<size_t>(env.world_size);
    opts.waitWorkers = true;
    opts.timeout = std::chrono::seconds(env.timeout_s);
    h->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, opts);
    if (env.backend == "gloo") {
#ifdef SKILLDB_TRAINER_NO_GLOO
      return Status::Unavailable(
          "distributed: this build's libtorch has no gloo headers");
#else
      auto o = c10d::ProcessGroupGloo::Options::create(
          std::chrono::seconds(env.collective_timeout_s));
      o->devices.push_back(
          c10d::ProcessGroupGloo::createDeviceForHostname(env.master_addr));
      h->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(h->store, env.rank,
                                                            env.world_size, o);
#endif
    } else if (env.backend == "nccl") {
#ifdef SKILLDB_TRAINER_NCCL
      h->nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(h->store, env.rank,
                                                            env.world_size);
#else
      return Status::Unavailable(
          "distributed: this build has no NCCL (built without "
          "SKILLDB_TRAINER_NCCL)");
#endif
    } else {
      return Status::InvalidArgument("distributed: unknown backend '" +
                                     env.backend + "' (gloo or nccl)");
    }
  } catch (const std::exception& e) {
    return Status::Unavailable(
        std::string("distributed: rendezvous at ") + env.master_addr + ":" +
        std::to_string(env.master_port) + " failed: " + e.what());
  }
  return h;
}

int Rank(const ProcessGroupHandle& group) { return group.env.rank; }
int WorldSize(const ProcessGroupHandle& group) { return group.env.world_size; }

Status AllReduceMeanTensor(ProcessGroupHandle& group, torch::Tensor& tensor) {
  try {
    std::vector<at::Tensor> v = {tensor};
    group.WithGroup([&](auto& pg) {
      pg.allreduce(v)->wait();
      return 0;
    });
    tensor.div_(static_cast<double>(group.env.world_size));
  } catch (const std::exception& e) {
    return Status::Unavailable(std::string("distributed: allreduce: ") +
                               e.what());
  }
  return Status::Ok();
}

Status BroadcastTensor(ProcessGroupHandle& group, torch::Tensor& tensor) {
  try {
    std::vector<at::Tensor> v = {tensor};
    c10d::BroadcastOptions o;
    o.rootRank = 0;
    group.WithGroup([&](auto& pg) {
      pg.broadcast(v, o)->wait();
      return 0;
    });
  } catch (const std::exception& e) {
    return Status::Unavailable(std::string("distributed: broadcast: ") +
                               e.what());
  }
  return Status::Ok();
}

Status AllReduceSum(ProcessGroupHandle& group, std::vector<double>& values) {
  if (values.empty()) return Status::Ok();
  try {
    torch::Tensor t = torch::tensor(values, torch::kFloat64);
#ifdef SKILLDB_TRAINER_NCCL
    if (group.nccl) t = t.to(torch::kCUDA);
#endif
    std::vector<at::Tensor> v = {t};
    group.WithGroup([&](auto& pg) {
      pg.allreduce(v)->wait();
      return 0;
    });
    t = v[0].to(torch::kCPU);
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] = t[static_cast<int64_t>(i)].item<double>();
    }
  } catch (const std::exception& e) {
    return Status::Unavailable(std::string("distributed: allreduce: ") +
                               e.what());
  }
  return Status::Ok();
}

Status Barrier(ProcessGroupHandle& group) {
  try {
    group.WithGroup([&](auto& pg) {
      pg.barrier()->wait();
      return 0;
    });
  } catch (const std::exception& e) {
    return Status::Unavailable(std::string("distributed: barrier: ") +
                               e.what());
  }
  return Status::Ok();
}

}  // namespace skilldb::trainer
