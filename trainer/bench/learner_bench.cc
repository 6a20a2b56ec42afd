// trainer_learner_bench: training-step and generation throughput of the
// learner on one checkpoint (bench/train_gpu.sh runs it on the H200).
// Prints one JSON object: per configuration the step seconds (median of
// --steps after one warmup step), training tokens/s (prompt + completion
// positions through forward and backward) and generation tokens/s through
// the shared backbone. With --group G, the rows are prompts of G samples
// each (as a step's rollout groups are), and the step is timed again with
// share_prefix off in the same run: `share_prefix_speedup` is the ratio of
// the two medians.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "skilldb/trainer/learner.h"

using namespace skilldb;
using namespace skilldb::trainer;

int main(int argc, char** argv) {
  std::string model, device = "cpu";
  int batch = 16, prompt = 256, completion = 256, steps = 3, micro = 16;
  int gen_rows = 16, gen_tokens = 128, group = 1;
  bool autocast = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(1);
      }
      return argv[++i];
    };
    if (a == "--model")
      model = next();
    else if (a == "--device")
      device = next();
    else if (a == "--batch")
      batch = std::atoi(next());
    else if (a == "--prompt-len")
      prompt = std::atoi(next());
    else if (a == "--completion-len")
      completion = std::atoi(next());
    else if (a == "--steps")
      steps = std::atoi(next());
    else if (a == "--micro-batch")
      micro = std::atoi(next());
    else if (a == "--gen-rows")
      gen_rows = std::atoi(next());
    else if (a == "--gen-tokens")
      gen_tokens = std::atoi(next());
    else if (a == "--group")
      group = std::atoi(next());
    else if (a == "--no-autocast")
      autocast = false;
    else {
      std::fprintf(stderr, "unknown argument '%s'\n", a.c_str());
      return 1;
    }
  }
  if (model.empty() || batch < 1 || prompt < 1 || completion < 1 || steps < 1 ||
      micro < 1 || group < 1) {
    std::fprintf(stderr,
                 "usage: trainer_learner_bench --model DIR [--device cuda] "
                 "[--batch B] [--prompt-len P] [--completion-len C] "
                 "[--steps N] [--micro-batch M] [--gen-rows R] "
                 "[--gen-tokens T] [--group G] [--no-autocast]\n");
    return 1;
  }
  LearnerOptions o;
  o.device = device;
  o.optim.micro_batch = micro;
  o.optim.bf16_autocast = autocast;
  o.optim.lr = 1e-5;
  o.cpu_threads = 0;
  auto l = Learner::Create(model, o);
  if (!l.ok()) {
    std::fprintf(stderr, "%s\n", l.status().ToString().c_str());
    return 2;
  }
  std::vector<TrainSequence> seqs(batch);
  uint32_t x = 12345;
  std::vector<int32_t> prompt_ids;
  for (int i = 0; i < batch; ++i) {
    TrainSequence& s = seqs[i];
    s.agent = "policy";
    if (i % group == 0) {
      prompt_ids.clear();
      for (int t = 0; t < prompt; ++t)
        prompt_ids.push_back((x = x * 1664525 + 1013904223) % 1000);
    }
    s.prompt_ids = prompt_ids;
    for (int t = 0; t < completion; ++t)
      s.completion_ids.push_back((x = x * 1664525 + 1013904223) % 1000);
    s.advantage = ((x >> 8) % 3) - 1.0;
  }
  // Median step seconds over `steps` steps after one warmup step.
  auto time_steps = [&](Learner& on, StepStats* last) -> double {
    std::vector<double> secs;
    for (int i = 0; i <= steps; ++i) {
      auto st = on.Step(seqs);
      if (!st.ok()) {
        std::fprintf(stderr, "%s\n", st.status().ToString().c_str());
        std::exit(2);
      }
      if (i > 0) secs.push_back(st->seconds);
      *last = *st;
    }
    std::sort(secs.begin(), secs.end());
    return secs[secs.size() / 2];
  };
  StepStats last;
  const double median = time_steps(**l, &last);
  double whole_median = 0;
  if (group > 1) {
    o.optim.share_prefix = false;
    auto whole = Learner::Create(model, o);
    if (!whole.ok()) {
      std::fprintf(stderr, "%s\n", whole.status().ToString().c_str());
      return 2;
    }
    StepStats ignored;
    whole_median = time_steps(**whole, &ignored);
  }
  const double positions = static_cast<double>(batch) * (prompt + completion);

  // Generation through the shared backbone (the agents' path).
  llm::SamplingOptions so;
  so.n = gen_rows;
  so.max_tokens = gen_tokens;
  so.temperature = 1.0;
  so.seed = 1;
  llm::Chat chat = {{"user", "Write the kernel parameters."}};
  double gen_s = 0, gen_tok = 0;
  for (int rep = 0; rep < 2; ++rep) {
    const auto before = (*l)->backbone().Usage();
    const auto t0 = std::chrono::steady_clock::now();
    auto g = (*l)->backbone().Generate({chat}, so);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    if (!g.ok()) {
      std::fprintf(stderr, "%s\n", g.status().ToString().c_str());
      return 2;
    }
    gen_s = s;  // the second (warm) call
    gen_tok = static_cast<double>((*l)->backbone().Usage().completion_tokens -
                                  before.completion_tokens);
  }
  nlohmann::json j = {
      {"model", model},
      {"device", device},
      {"parameters", (*l)->NumParameters()},
      {"batch", batch},
      {"prompt_len", prompt},
      {"completion_len", completion},
      {"micro_batch", micro},
      {"group", group},
      {"shared_positions", last.shared_positions},
      {"bf16_autocast", autocast},
      {"step_seconds_median", median},
      {"train_tokens_per_s", positions / median},
      {"completion_tokens_per_s", batch * completion / median},
      {"loss", last.loss},
      {"step_seconds_median_share_prefix_off", whole_median},
      {"share_prefix_speedup", whole_median > 0 ? whole_median / median : 0},
      {"grad_norm", last.grad_norm},
      {"gen_rows", gen_rows},
      {"gen_seconds", gen_s},
      {"gen_tokens", gen_tok},
      {"gen_tokens_per_s", gen_s > 0 ? gen_tok / gen_s : 0},
  };
  std::printf("%s\n", j.dump().c_str());
  return 0;
}
