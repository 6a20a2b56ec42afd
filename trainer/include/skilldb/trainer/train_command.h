// `skilldb train ...`: argv[0] is the command's name, argv[1] the
// subcommand (demo, report) or --config. Returns the exit status: 0, 1 for
// a usage error (unknown flags included), 2 when the run failed.
#ifndef SKILLDB_TRAINER_TRAIN_COMMAND_H_
#define SKILLDB_TRAINER_TRAIN_COMMAND_H_

#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"
#include "skilldb/trainer/config.h"

namespace skilldb::trainer {

int TrainMain(int argc, char** argv);

// The co-evolution settings (`skilldb train demo --coevolve`; README,
// "Co-evolution"): skills in the policy prompt with their code pattern,
// a cold start that also shows reading a skill and the summary role, the
// family's short summary prompt, at most two distillations a step, greedy,
// two answers each, room for a skill's JSON.
void ApplyCoevolution(TrainConfig* config);

// Applies `flags` (pairs: a --kb-* flag, then its value) to
// config->kernelbench, in order (a later flag wins), over whatever the
// config already holds (its JSON's "kernelbench" object, or the defaults):
//   --kb-store DIR        kernelbench.store (turns the task source on)
//   --kb-level N          kernelbench.level
//   --kb-train IDS        kernelbench.train, "1-20,33" (kernelbench run
//   --kb-heldout IDS      kernelbench.heldout   --problems' syntax)
//   --kb-format F         kernelbench.format: cpp | cuda | triton
//   --kb-families DIR     kernelbench.families
//   --kb-eval-every N     kernelbench.eval_every
//   --kb-python PATH      kernelbench.python
//   --kb-cache-dir DIR    kernelbench.cache_dir
//   --kb-answers A        kernelbench.answers: template | free
// then validates the whole config (ValidateTrainConfig). Errors:
// InvalidArgument naming the flag and what is wrong with its value (a
// malformed or empty id list, an unknown format, a number out of range, a
// flag without a value), or ValidateTrainConfig's with each key a flag set
// named as that flag (overlapping splits, a format the backend cannot
// run). REQUIRES: config != nullptr.
Status ApplyKernelBenchFlags(const std::vector<std::string>& flags,
                             TrainConfig* config);

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_TRAIN_COMMAND_H_
