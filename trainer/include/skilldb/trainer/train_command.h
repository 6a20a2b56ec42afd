// `skilldb train ...`: argv[0] is the command's name, argv[1] the
// subcommand (demo, report) or --config. Returns the exit status: 0, 1 for
// a usage error (unknown flags included), 2 when the run failed.
#ifndef SKILLDB_TRAINER_TRAIN_COMMAND_H_
#define SKILLDB_TRAINER_TRAIN_COMMAND_H_

namespace skilldb::trainer {

int TrainMain(int argc, char** argv);

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_TRAIN_COMMAND_H_
