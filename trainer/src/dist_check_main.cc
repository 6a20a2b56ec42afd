// trainer_dist_check: one rank of the data-parallel check (the CI test
// launches two with RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT). Each
// rank trains on its own batch (different prompts and advantages per rank)
// for a few steps; with gradients all-reduced the parameters stay
// identical. Writes the flat parameters to OUT_DIR/params.rankR.bin.
// --no-allreduce trains without the group (the control: they diverge).
// --empty-step: rank 1's second batch has no completion tokens (its
// rollouts all failed): it still joins the step's all-reduce, with a zero
// gradient, and the parameters stay identical.
// --stagger S: rank 0 sleeps S seconds before its second step (a rank that
// falls behind, as rank 0 does while it distills and evaluates).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "skilldb/trainer/distributed.h"
#include "skilldb/trainer/learner.h"
#include "skilldb/trainer/report.h"

using namespace skilldb;
using namespace skilldb::trainer;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: trainer_dist_check MODEL_DIR OUT_DIR [--no-allreduce] "
                 "[--empty-step] [--stagger S]\n");
    return 1;
  }
  bool allreduce = true, empty_step = false;
  int stagger_s = 0;
  for (int i = 3; i < argc; ++i) {
    allreduce &= std::strcmp(argv[i], "--no-allreduce") != 0;
    empty_step |= std::strcmp(argv[i], "--empty-step") == 0;
    if (std::strcmp(argv[i], "--stagger") == 0 && i + 1 < argc) {
      stagger_s = std::atoi(argv[++i]);
    }
  }
  auto env = DistEnvFromEnvironment("gloo");
  if (!env.ok()) {
    std::fprintf(stderr, "%s\n", env.status().ToString().c_str());
    return 1;
  }
  auto group = InitProcessGroup(*env);
  if (!group.ok()) {
    std::fprintf(stderr, "%s\n", group.status().ToString().c_str());
    return 1;
  }
  LearnerOptions o;
  o.optim.lr = 1e-2;
  o.optim.warmup_steps = 0;
  o.optim.micro_batch = 2;
  o.seed = 1 + env->rank;  // ranks start from different generators
  if (allreduce) o.process_group = *group;
  auto l = Learner::Create(argv[1], o);
  if (!l.ok()) {
    std::fprintf(stderr, "%s\n", l.status().ToString().c_str());
    return 1;
  }
  if (!(*l)->BroadcastParameters().ok()) return 1;
  for (int step = 0; step < 3; ++step) {
    if (step == 1 && env->rank == 0 && stagger_s > 0) sleep(stagger_s);
    std::vector<TrainSequence> batch;
    for (int i = 0; i < 3; ++i) {
      TrainSequence s;
      s.agent = "policy";
      s.prompt_ids =
          (*l)->EncodePrompt({{"user", "rank " + std::to_string(env->rank) +
                                           " item " + std::to_string(i)}})
              .value();
      s.completion_ids =
          (*l)->EncodeText("tile=" + std::to_string(16 << (i + env->rank)))
              .value();
      s.advantage = env->rank == 0 ? 1.0 : -0.5 + i;
      if (empty_step && env->rank == 1 && step == 1) s.completion_ids.clear();
      batch.push_back(std::move(s));
    }
    auto st = (*l)->Step(batch);
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.status().ToString().c_str());
      return 1;
    }
  }
  std::vector<double> probe = {1.0};
  if (!AllReduceSum(**group, probe).ok() || probe[0] != env->world_size)
    return 1;
  auto p = (*l)->FlatParameters();
  std::string bytes(reinterpret_cast<const char*>(p.data()),
                    p.size() * sizeof(float));
  const std::string path = std::string(argv[2]) + "/params.rank" +
                           std::to_string(env->rank) + ".bin";
  if (!WriteFile(path, bytes).ok()) return 1;
  if (!Barrier(**group).ok()) return 1;
  return 0;
}
