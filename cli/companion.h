// Where the CLI finds what is not inside it: skilldb-ml, its companion
// linked with libtorch (the commands on a model: query --rerank dense,
// embed, train), and the seed library. One lookup rule each, stated here;
// the paths of this build are compiled into companion.cc alone.
//
// Thread-compatible: called once per command from the main thread.
#ifndef SKILLDB_CLI_COMPANION_H_
#define SKILLDB_CLI_COMPANION_H_

#include <string>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::cli {

// The companion's file name (skilldb-ml).
extern const char kCompanionName[];

// The places skilldb-ml is looked for, in order: $SKILLDB_ML; the build
// tree's (only when this CLI runs from the build tree, so that an
// installed CLI never picks up a stale build); beside this CLI; the bin/
// folder of the prefix the build installs to. Empty entries are left out.
std::vector<std::string> CompanionCandidates();

// Replaces this process with the first candidate that is an executable, on
// the same command line (`command` names what is handed over, for the
// message). Returns only on failure: NotSupported naming every place it
// looked and how to build the companion, or IOError when exec failed.
Status HandOverToCompanion(const std::string& command);

// The seed library's folder (*.jsonl), in order: $SKILLDB_SEED_DIR; the
// source tree's data/seed when this CLI runs from the build tree; the
// installed share/skilldb/seed beside this CLI (../share/skilldb/seed);
// the install prefix's; else the source tree's.
std::string SeedDir();

}  // namespace skilldb::cli

#endif  // SKILLDB_CLI_COMPANION_H_
