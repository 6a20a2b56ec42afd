// skilldb_models_bench: generation and training throughput of the libtorch
// decoder on a checkpoint, and the GPU sanity checks of generation.
//
//   skilldb_models_bench --checkpoint DIR --prompts prompts.json
//       [--device cuda] [--dtype bf16] [--batches 1,64] [--new-tokens 128]
//       [--reps 3] [--train-batch 8] [--train-seq 512] [--train-steps 5]
//       [--modes generate,train,check] [--graphs 1|0] [--json OUT.json]
//
// prompts.json (written by bench_transformers.py, so both sides run the same
// prompts) is {"prompt_tokens": P, "rows": [[ids...], ...]}.
// Modes:
//   generate  greedy generation of exactly --new-tokens tokens (EOS
//             ignored) per batch size: tokens/s = batch x new tokens / wall
//             time of the whole call (prefill included), peak GPU memory
//   train     forward + backward of the mean token NLL over batch x seq
//             tokens (bf16 weights trained directly, as transformers'
//             model.to(bf16) is): tokens/s and peak memory
//   check     greedy tokens with CUDA graphs equal those without (batch 64
//             and 1), and bf16 greedy tokens against fp32 ones (agreement
//             of the first tokens)
// Prints one JSON object (also written to --json).
#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#ifdef SKILLDB_MODELS_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

#include "skilldb/models/decoder.h"

namespace {

using nlohmann::json;
using skilldb::models::DecoderModel;
using skilldb::models::DecoderOptions;
using skilldb::models::GenerationOptions;
using Clock = std::chrono::steady_clock;

std::map<std::string, std::string> ParseFlags(int argc, char** argv) {
  std::map<std::string, std::string> flags = {{"device", "cuda"},
                                              {"dtype", "bf16"},
                                              {"batches", "1,64"},
                                              {"new-tokens", "128"},
                                              {"reps", "3"},
                                              {"train-batch", "8"},
                                              {"train-seq", "512"},
                                              {"train-steps", "5"},
                                              {"modes", "generate,train,check"},
                                              {"json", ""},
                                              {"graphs", "1"},
                                              {"prompts", ""},
                                              {"checkpoint", ""}};
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    if (key.rfind("--", 0) != 0 || !flags.count(key.substr(2))) {
      std::cerr << "unknown flag " << key << "\n";
      std::exit(2);
    }
    flags[key.substr(2)] = argv[i + 1];
  }
  if (flags["checkpoint"].empty() || flags["prompts"].empty()) {
    std::cerr << "usage: skilldb_models_bench --checkpoint DIR --prompts FILE "
                 "[...]\n";
    std::exit(2);
  }
  return flags;
}

std::vector<int> IntList(const std::string& s) {
  std::vector<int> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::stoi(item));
  return out;
}

bool Has(const std::string& list, const std::string& mode) {
  return ("," + list + ",").find("," + mode + ",") != std::string::npos;
}

void Sync(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

#ifdef SKILLDB_MODELS_CUDA
// The allocator's statistics take an ordinal: "cuda" without one means the
// current device.
c10::DeviceIndex Ordinal(const torch::Device& device) {
  return device.has_index() ? device.index() : c10::cuda::current_device();
}
#endif

void ResetPeak(const torch::Device& device) {
#ifdef SKILLDB_MODELS_CUDA
  if (device.is_cuda())
    c10::cuda::CUDACachingAllocator::resetPeakStats(Ordinal(device));
#else
  (void)device;
#endif
}

double PeakGiB(const torch::Device& device) {
#ifdef SKILLDB_MODELS_CUDA
  if (device.is_cuda()) {
    auto stats =
        c10::cuda::CUDACachingAllocator::getDeviceStats(Ordinal(device));
    return static_cast<double>(stats.allocated_bytes[0].peak) / (1 << 30);
  }
#else
  (void)device;
#endif
  return 0;
}

std::shared_ptr<DecoderModel> Load(const std::string& dir,
                                   const torch::Device& device,
                                   torch::Dtype dtype, bool graphs,
                                   bool trainable) {
  DecoderOptions o;
  o.device = device;
  o.dtype = dtype;
  o.cuda_graphs = graphs;
  o.trainable = trainable;
  auto model = DecoderModel::Load(dir, o);
  if (!model.ok()) {
    std::cerr << model.status().ToString() << "\n";
    std::exit(1);
  }
  return *model;
}

std::vector<std::vector<int32_t>> Rows(const json& prompts, int batch) {
  std::vector<std::vector<int32_t>> rows;
  for (int i = 0; i < batch; ++i) {
    rows.push_back(prompts["rows"][i % prompts["rows"].size()]
                       .get<std::vector<int32_t>>());
  }
  return rows;
}

std::vector<std::vector<int32_t>> Greedy(
    DecoderModel& model, const std::vector<std::vector<int32_t>>& rows,
    int new_tokens) {
  GenerationOptions g;
  g.temperature = 0;
  g.max_new_tokens = new_tokens;
  g.ignore_eos = true;
  auto out = model.Generate(rows, g);
  if (!out.ok()) {
    std::cerr << out.status().ToString() << "\n";
    std::exit(1);
  }
  std::vector<std::vector<int32_t>> ids;
  for (const auto& o : *out) ids.push_back(o.token_ids);
  return ids;
}

json BenchGenerate(DecoderModel& model, const json& prompts,
                   const std::vector<int>& batches, int new_tokens, int reps) {
  json out = json::array();
  const torch::Device device = model.device();
  for (int batch : batches) {
    const auto rows = Rows(prompts, batch);
    Greedy(model, rows,
           new_tokens);  // warm-up: graphs captured, kernels loaded
    Sync(device);
    ResetPeak(device);
    double best = 1e30, total = 0;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = Clock::now();
      Greedy(model, rows, new_tokens);
      Sync(device);
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      best = std::min(best, s);
      total += s;
    }
    out.push_back({{"batch", batch},
                   {"prompt_tokens", prompts["prompt_tokens"]},
                   {"new_tokens", new_tokens},
                   {"seconds_best", best},
                   {"seconds_mean", total / reps},
                   {"tokens_per_s", batch * new_tokens / best},
                   {"peak_gib", PeakGiB(device)}});
    std::cerr << "generate batch " << batch << ": " << batch * new_tokens / best
              << " tok/s\n";
  }
  return out;
}

json BenchTrain(DecoderModel& model, int batch, int seq, int steps) {
  const torch::Device device = model.device();
  const int64_t V = model.config().vocab_size;
  torch::Tensor ids =
      torch::randint(V, {batch, seq},
                     torch::TensorOptions().dtype(torch::kInt64))
          .to(device);
  torch::Tensor mask = torch::ones_like(ids);
  torch::Tensor target = torch::ones_like(ids);
  model.module().train();
  auto step = [&] {
    model.module().zero_grad();
    torch::Tensor logp = model.TokenLogprobs(ids, mask, target);
    torch::Tensor loss = -logp.narrow(1, 1, seq - 1).mean();
    loss.backward();
    return loss.item<double>();
  };
  step();  // warm-up
  Sync(device);
  ResetPeak(device);
  const auto t0 = Clock::now();
  double loss = 0;
  for (int i = 0; i < steps; ++i) loss = step();
  Sync(device);
  const double s =
      std::chrono::duration<double>(Clock::now() - t0).count() / steps;
  model.module().eval();
  std::cerr << "train: " << batch * seq / s << " tok/s\n";
  return {{"batch", batch},
          {"seq", seq},
          {"steps", steps},
          {"seconds_per_step", s},
          {"tokens_per_s", batch * seq / s},
          {"peak_gib", PeakGiB(device)},
          {"loss", loss}};
}

json Check(const std::string& dir, const json& prompts,
           const torch::Device& device, torch::Dtype dtype, int new_tokens) {
  json out;
  auto graphs = Load(dir, device, dtype, true, false);
  auto eager = Load(dir, device, dtype, false, false);
  for (int batch : {64, 1}) {
    const auto rows = Rows(prompts, batch);
    const auto a = Greedy(*graphs, rows, new_tokens);
    const auto b = Greedy(*eager, rows, new_tokens);
    int same = 0;
    for (size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
    out["graphs_equal_eager_batch" + std::to_string(batch)] =
        std::to_string(same) + "/" + std::to_string(a.size());
  }
  eager.reset();
  auto fp32 = Load(dir, device, torch::kFloat32, false, false);
  const auto rows = Rows(prompts, 16);
  const auto a = Greedy(*graphs, rows, 32);
  const auto b = Greedy(*fp32, rows, 32);
  int agree = 0, total = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    // Tokens agree up to the first divergence (bf16 rounding then moves the
    // greedy path elsewhere, which is expected of a random model).
    size_t k = 0;
    while (k < a[i].size() && a[i][k] == b[i][k]) ++k;
    agree += static_cast<int>(k);
    total += static_cast<int>(a[i].size());
  }
  out["bf16_vs_fp32_greedy_prefix_agreement"] =
      static_cast<double>(agree) / total;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  auto flags = ParseFlags(argc, argv);
  const torch::Device device(flags["device"]);
  const torch::Dtype dtype =
      flags["dtype"] == "fp32" ? torch::kFloat32 : torch::kBFloat16;
  std::ifstream in(flags["prompts"]);
  const json prompts = json::parse(in);
  json result = {{"implementation", "skilldb (libtorch " TORCH_VERSION ")"},
                 {"device", flags["device"]},
                 {"dtype", flags["dtype"]}};
  try {
    if (Has(flags["modes"], "generate")) {
      auto model = Load(flags["checkpoint"], device, dtype,
                        flags["graphs"] == "1", false);
      result["generate"] = BenchGenerate(
          *model, prompts, IntList(flags["batches"]),
          std::stoi(flags["new-tokens"]), std::stoi(flags["reps"]));
    }
    if (Has(flags["modes"], "train")) {
      auto model = Load(flags["checkpoint"], device, dtype, false, true);
      result["train"] = BenchTrain(*model, std::stoi(flags["train-batch"]),
                                   std::stoi(flags["train-seq"]),
                                   std::stoi(flags["train-steps"]));
    }
    if (Has(flags["modes"], "check")) {
      result["check"] = Check(flags["checkpoint"], prompts, device, dtype, 64);
    }
  } catch (const std::exception& e) {
    std::cerr << "bench failed: " << e.what() << "\n";
    return 1;
  }
  std::cout << result.dump(1) << "\n";
  if (!flags["json"].empty())
    std::ofstream(flags["json"]) << result.dump(1) << "\n";
  return 0;
}
