// skilldb_train: `skilldb train` as a program of its own (the same code).
#include "skilldb/trainer/train_command.h"

int main(int argc, char** argv) {
  return skilldb::trainer::TrainMain(argc, argv);
}
