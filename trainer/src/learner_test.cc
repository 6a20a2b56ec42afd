// The learner on the tiny Qwen2 fixture (models/testdata/qwen2-tiny, a
// randomly initialized checkpoint): completion-only loss, aggregation,
// accumulation, KL, warmup, and checkpoints resuming bit for bit. No torch
// in this file (the learner's header has none).
#include "skilldb/trainer/learner.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>

#include "test_dir.h"
#include "build_paths.h"

namespace skilldb::trainer {
namespace {

const std::string kModel = std::string(SKILLDB_MODELS_TESTDATA) + "/qwen2-tiny";

LearnerOptions Opts() {
  LearnerOptions o;
  o.optim.lr = 1e-2;
  o.optim.warmup_steps = 0;
  o.optim.micro_batch = 8;
  o.seed = 7;
  // The GPU script runs the same tests on cuda (bf16 autocast included).
  if (const char* d = std::getenv("SKILLDB_TRAINER_TEST_DEVICE")) o.device = d;
  return o;
}

std::vector<TrainSequence> Batch(Learner& l, int n, int salt = 0) {
  std::vector<TrainSequence> out;
  for (int i = 0; i < n; ++i) {
    TrainSequence s;
    s.agent = i % 2 ? "policy" : "selection";
    s.prompt_ids =
        l.EncodePrompt({{"user", "sum rows " + std::to_string(i + salt)}})
            .value();
    s.completion_ids =
        l.EncodeText("order=rows tile=" + std::to_string(16 << (i % 3)) +
                     " unroll=4")
            .value();
    s.completion_ids.push_back(l.EosIds().at(0));
    s.advantage = (i % 3) - 1.0;
    out.push_back(std::move(s));
  }
  return out;
}

double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    m = std::max(m, std::fabs(static_cast<double>(a[i]) - b[i]));
  }
  return m;
}

TEST_CASE("SFT steps lower the completion NLL") {
  auto l = Learner::Create(kModel, Opts());
  REQUIRE(l.ok());
  auto batch = Batch(**l, 6);
  for (auto& s : batch) s.advantage = 1.0;
  const double before = (*l)->MeanNll(batch).value();
  StepStats st;
  for (int i = 0; i < 10; ++i) st = (*l)->Step(batch).value();
  const double after = (*l)->MeanNll(batch).value();
  MESSAGE("NLL " << before << " -> " << after);
  CHECK(after < before - 0.5);
  CHECK(st.step == 10);
  CHECK(st.sequences == 6);
  CHECK(st.tokens > 0);
  CHECK(st.tokens_per_s > 0);
  CHECK(std::isfinite(st.grad_norm));

  std::vector<TrainSequence> empty = {TrainSequence{"policy", {1, 2}, {}, 1.0}};
  auto bad = (*l)->Step(empty);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("no sequence") != std::string::npos);
  std::vector<TrainSequence> oob = {TrainSequence{"policy", {1}, {99999}, 1}};
  CHECK((*l)->Step(oob).status().message().find("out of range") !=
        std::string::npos);
}

TEST_CASE("gradient accumulation equals the full-batch step") {
  for (auto agg :
       {LossAggregation::kTokenMean, LossAggregation::kSequenceMean}) {
    auto o = Opts();
    o.optim.aggregation = agg;
    // Adam's first update is ~lr x sign(g): a gradient at rounding level
    // would flip whole steps. eps = 1 makes the update ~lr x g, so the
    // parameters compare the accumulated gradients themselves.
    o.optim.eps = 1.0;
    // Exactness is an fp32 property: bf16 autocast (on CUDA) rounds each
    // micro-batch's activations differently.
    o.optim.bf16_autocast = false;
    o.optim.micro_batch = 8;
    auto full = Learner::Create(kModel, o).value();
    o.optim.micro_batch = 2;
    auto accum = Learner::Create(kModel, o).value();
    auto batch = Batch(*full, 7);
    auto a = full->Step(batch).value();
    auto b = accum->Step(batch).value();
    CHECK(a.micro_batches == 1);
    CHECK(b.micro_batches == 4);
    CHECK(a.loss == doctest::Approx(b.loss).epsilon(1e-5));
    CHECK(a.grad_norm == doctest::Approx(b.grad_norm).epsilon(1e-4));
    CHECK(MaxAbsDiff(full->FlatParameters(), accum->FlatParameters()) < 1e-7);
  }
}

// Samples of one prompt, as a group of rollouts is: two prompts of four
// samples each (interleaved, as a step's rollouts arrive), and one alone.
std::vector<TrainSequence> Groups(Learner& l) {
  std::vector<TrainSequence> out;
  const std::string long_prompt =
      "Write the kernel for the row sum of a 4096 x 4096 fp32 matrix; the "
      "skills below were verified on this GPU. ";
  for (int i = 0; i < 9; ++i) {
    TrainSequence s;
    s.agent = "policy";
    const int prompt = i == 8 ? 2 : i % 2;
    s.prompt_ids = l.EncodePrompt({{"user", long_prompt + "variant " +
                                                std::to_string(prompt)}})
                       .value();
    s.completion_ids =
        l.EncodeText("order=rows tile=" + std::to_string(16 << (i % 3)) +
                     (i % 4 == 0 ? " unroll=4 vector=2" : ""))
            .value();
    s.completion_ids.push_back(l.EosIds().at(0));
    s.advantage = (i % 3) - 1.0;
    out.push_back(std::move(s));
  }
  return out;
}

TEST_CASE("sharing a group's prompt prefix takes the same step") {
  for (auto agg :
       {LossAggregation::kTokenMean, LossAggregation::kSequenceMean}) {
    auto o = Opts();
    o.optim.aggregation = agg;
    o.optim.eps = 1.0;  // the update ~ lr x g (see above)
    o.optim.bf16_autocast = false;
    o.optim.kl_coef = 0.05;  // the reference's forward shares it too
    o.optim.micro_batch = 4;
    auto shared = Learner::Create(kModel, o).value();
    o.optim.share_prefix = false;
    auto whole = Learner::Create(kModel, o).value();
    auto batch = Groups(*shared);
    REQUIRE(batch[0].prompt_ids.size() > 16);
    const double nll_shared = shared->MeanNll(batch).value();
    const double nll_whole = whole->MeanNll(batch).value();
    CHECK(nll_shared == doctest::Approx(nll_whole).epsilon(1e-5));
    for (int step = 0; step < 2; ++step) {
      auto a = shared->Step(batch).value();
      auto b = whole->Step(batch).value();
      CHECK(a.micro_batches == 3);
      CHECK(a.loss == doctest::Approx(b.loss).epsilon(1e-5));
      CHECK(a.grad_norm == doctest::Approx(b.grad_norm).epsilon(1e-4));
      // Two groups of four, each a micro-batch running its prompt once.
      CHECK(a.shared_positions ==
            3 * static_cast<int64_t>(batch[0].prompt_ids.size() +
                                     batch[1].prompt_ids.size()));
    }
    CHECK(MaxAbsDiff(shared->FlatParameters(), whole->FlatParameters()) <
          1e-6);
  }
}

TEST_CASE("a group larger than a micro-batch keeps to micro-batches of its own") {
  auto o = Opts();
  o.optim.micro_batch = 3;
  auto l = Learner::Create(kModel, o).value();
  // Prompts 0 and 1 of four samples each, prompt 2 of one: [0 0 0] [1 1 1]
  // each run their prompt once; the two left over and prompt 2 go together
  // ([0 1 2]) and share what the three prompts share.
  auto batch = Groups(*l);
  const auto& p0 = batch[0].prompt_ids;
  const auto& p1 = batch[1].prompt_ids;
  const auto& p2 = batch[8].prompt_ids;
  auto common = [](const std::vector<int32_t>& a,
                   const std::vector<int32_t>& b) {
    size_t n = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
    return static_cast<int64_t>(n);
  };
  const int64_t all3 = std::min(common(p0, p1), common(p0, p2));
  REQUIRE(all3 >= 16);
  REQUIRE(all3 < static_cast<int64_t>(p0.size()));
  auto st = l->Step(batch).value();
  CHECK(st.micro_batches == 3);
  CHECK(st.shared_positions ==
        2 * static_cast<int64_t>(p0.size() + p1.size()) + 2 * all3);
}

TEST_CASE("the loss covers completion tokens only, token- or sequence-mean") {
  auto o = Opts();
  o.optim.bf16_autocast = false;  // MeanNll is fp32: compare like with like
  auto tok = Learner::Create(kModel, o).value();
  o.optim.aggregation = LossAggregation::kSequenceMean;
  auto seq = Learner::Create(kModel, o).value();
  auto batch = Batch(*tok, 2);
  for (auto& s : batch) s.advantage = 1.0;
  // Make one completion much longer: the two means now differ.
  auto more =
      tok->EncodeText(" and also a longer explanation of the tiles").value();
  batch[0].completion_ids.insert(batch[0].completion_ids.begin(), more.begin(),
                                 more.end());
  const double nll0 = tok->MeanNll({batch[0]}).value();
  const double nll1 = tok->MeanNll({batch[1]}).value();
  const double n0 = batch[0].completion_ids.size(),
               n1 = batch[1].completion_ids.size();
  auto a = tok->Step(batch).value();
  auto b = seq->Step(batch).value();
  CHECK(a.loss == doctest::Approx((nll0 * n0 + nll1 * n1) / (n0 + n1)));
  CHECK(b.loss == doctest::Approx((nll0 + nll1) / 2));
}

TEST_CASE("KL to the frozen reference starts at zero and grows") {
  auto o = Opts();
  o.optim.kl_coef = 0.5;
  auto l = Learner::Create(kModel, o).value();
  auto batch = Batch(*l, 4);
  auto first = l->Step(batch).value();
  CHECK(first.kl == doctest::Approx(0.0).epsilon(1e-7));
  StepStats later;
  for (int i = 0; i < 3; ++i) later = l->Step(batch).value();
  CHECK(later.kl > 1e-6);
  CHECK(later.loss == doctest::Approx(later.pg_loss + 0.5 * later.kl));
}

TEST_CASE("a step without a signal leaves the weights where they were") {
  auto l = Learner::Create(kModel, Opts()).value();
  auto batch = Batch(*l, 4);
  REQUIRE(l->Step(batch).value().applied);  // Adam's moments now nonzero
  auto silent = batch;
  for (auto& s : silent) s.advantage = 0.0;
  const std::vector<float> before = l->FlatParameters();
  const double lr = l->NextLearningRate();
  const StepStats st = l->Step(silent).value();
  CHECK_FALSE(st.applied);
  CHECK(st.grad_norm == 0.0);
  CHECK(st.step == 1);
  CHECK(l->NextLearningRate() == lr);
  // Without the check AdamW moves every weight along its first moment.
  CHECK(MaxAbsDiff(before, l->FlatParameters()) == 0.0);
  CHECK(l->Step(batch).value().step == 2);

  // The KL term is a signal of its own once the policy has moved.
  auto o = Opts();
  o.optim.kl_coef = 0.5;
  auto k = Learner::Create(kModel, o).value();
  k->Step(batch).value();
  const StepStats kl = k->Step(silent).value();
  CHECK(kl.applied);
  CHECK(kl.grad_norm > 0);
}

TEST_CASE("the KL reference anchored to the weights as they are") {
  auto o = Opts();
  o.optim.kl_coef = 0.5;
  auto l = Learner::Create(kModel, o).value();
  auto batch = Batch(*l, 4);
  StepStats st;
  for (int i = 0; i < 3; ++i) st = l->Step(batch).value();
  REQUIRE(st.kl > 1e-6);  // moved away from the loaded checkpoint
  REQUIRE(l->AnchorReference().ok());
  CHECK(l->Step(batch).value().kl == doctest::Approx(0.0).epsilon(1e-7));
  // Without the KL term there is no reference to anchor.
  auto plain = Learner::Create(kModel, Opts()).value();
  CHECK(plain->AnchorReference().ok());
}

TEST_CASE("linear warmup and clipping") {
  auto o = Opts();
  o.optim.lr = 0.1;
  o.optim.warmup_steps = 4;
  o.optim.max_grad_norm = 1e-3;
  auto l = Learner::Create(kModel, o).value();
  auto batch = Batch(*l, 3);
  CHECK(l->NextLearningRate() == doctest::Approx(0.025));
  CHECK(l->Step(batch).value().lr == doctest::Approx(0.025));
  CHECK(l->Step(batch).value().lr == doctest::Approx(0.05));
  l->Step(batch).value();
  CHECK(l->Step(batch).value().lr == doctest::Approx(0.1));
  CHECK(l->Step(batch).value().lr == doctest::Approx(0.1));
  // The norm is reported before clipping (far above the 1e-3 cap).
  CHECK(l->Step(batch).value().grad_norm > 1e-3);
}

TEST_CASE("a checkpoint resumes to the same next step bit for bit") {
  skilldb::trainer::ScopedTempDir temp("skilldb_learner_test");
  const std::string dir = temp.path() + "/ckpt";
  auto o = Opts();
  o.optim.warmup_steps = 5;  // the scheduler position matters
  o.optim.kl_coef = 0.1;
  auto a = Learner::Create(kModel, o).value();
  auto b1 = Batch(*a, 5, 0), b2 = Batch(*a, 5, 100);
  a->Step(b1).value();
  // The reference anchored here (moved from the loaded checkpoint) must come
  // back from the files: the KL term is in the compared loss.
  REQUIRE(a->AnchorReference().ok());
  a->Step(b1).value();
  REQUIRE(a->SaveCheckpoint(dir, {.step = a->step(),
                                  .library_version = 42,
                                  .extra_json = R"({"loop_step": 2})"})
              .ok());
  const double probe_a = a->RandomProbe();
  auto next_a = a->Step(b2).value();

  o.seed = 999;  // a different seed: everything must come from the files
  auto b = Learner::Create(kModel, o).value();
  CHECK(MaxAbsDiff(a->FlatParameters(), b->FlatParameters()) > 0);
  auto info = b->LoadCheckpoint(dir);
  REQUIRE(info.ok());
  CHECK(info->step == 2);
  CHECK(info->library_version == 42);
  CHECK(info->extra_json == R"({"loop_step":2})");
  CHECK(b->step() == 2);
  CHECK(b->RandomProbe() == probe_a);
  auto next_b = b->Step(b2).value();
  CHECK(next_b.step == next_a.step);
  CHECK(next_b.lr == next_a.lr);
  CHECK(next_b.loss == next_a.loss);
  CHECK(next_b.grad_norm == next_a.grad_norm);
  const auto pa = a->FlatParameters(), pb = b->FlatParameters();
  CHECK(pa == pb);  // bit for bit

  CHECK(b->LoadCheckpoint(temp.path() + "/none").status().code() ==
        StatusCode::kNotFound);
}

}  // namespace
}  // namespace skilldb::trainer
