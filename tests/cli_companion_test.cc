// The CLI's one hand-over to its libtorch companion (cli/companion.h):
// `train` (like `embed` and `query --rerank dense`) runs in skilldb-ml,
// found by one rule; without one the command says where it looked and how
// to build it.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cli_util.h"

namespace skilldb::testing {
namespace {

TEST_CASE("skilldb train hands its whole command line to the companion "
          "named by SKILLDB_ML") {
  Fixture cli;
  const std::string fake = cli.dir.Sub("fake-ml");
  std::ofstream(fake) << "#!/bin/sh\necho \"companion: $*\"\n";
  REQUIRE(::chmod(fake.c_str(), 0755) == 0);
  const Run r =
      Cli(cli.home, {"train", "demo", "--steps", "1"}, "", {"SKILLDB_ML=" + fake});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out == "companion: train demo --steps 1\n");
}

TEST_CASE("a CLI with no companion anywhere says where it looked and how to "
          "build it") {
  Fixture cli;
  // A copy of the CLI outside the build tree: no build-tree companion, none
  // beside it, none where SKILLDB_ML points.
  const std::string bin = cli.dir.Sub("bin");
  std::filesystem::create_directories(bin);
  std::filesystem::copy_file(SKILLDB_CLI_PATH, bin + "/skilldb");
  const std::string missing = cli.dir.Sub("no-such-ml");
  const std::string cmd = "env -i HOME=" + cli.home + " SKILLDB_ML=" + missing +
                          " " + bin + "/skilldb train demo 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[1024];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  if (std::filesystem::exists("/usr/local/bin/skilldb-ml")) {
    MESSAGE("SKIPPED: an installed /usr/local/bin/skilldb-ml answers");
    return;
  }
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(Contains(out, missing));
  CHECK(Contains(out, bin + "/skilldb-ml"));
  CHECK(Contains(out, "scripts/build.sh skilldb_cli_ml"));
}

}  // namespace
}  // namespace skilldb::testing
