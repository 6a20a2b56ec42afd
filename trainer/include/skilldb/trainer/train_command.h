// `skilldb train ...`: argv[0] is the command's name, argv[1] the
// subcommand (demo, report) or --config. Returns the exit status: 0, 1 for
// a usage error (unknown flags included), 2 when the run failed.
#ifndef SKILLDB_TRAINER_TRAIN_COMMAND_H_
#define SKILLDB_TRAINER_TRAIN_COMMAND_H_

#include "skilldb/trainer/config.h"

namespace skilldb::trainer {

int TrainMain(int argc, char** argv);

// The co-evolution settings (`skilldb train demo --coevolve`; README,
// "Co-evolution"): skills in the policy prompt with their code pattern,
// a cold start that also shows reading a skill and the summary role, the
// family's short summary prompt, at most two distillations a step, greedy,
// two answers each, room for a skill's JSON.
void ApplyCoevolution(TrainConfig* config);

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_TRAIN_COMMAND_H_
