#include "skilldb/models/decoder.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <functional>

#include "decoder_impl.h"
#include "skilldb/models/safetensors.h"
#include "test_fixtures.h"

namespace skilldb::models {
namespace {

using nlohmann::json;

// The device the comparisons run on: $SKILLDB_MODELS_DEVICE (the GPU
// machine sets cuda), else cpu.
torch::Device TestDevice() {
  const char* env = std::getenv("SKILLDB_MODELS_DEVICE");
  torch::Device device(env ? env : "cpu");
  // fp32 means fp32 on GPUs too (transformers' side runs with TF32 off).
  if (device.is_cuda()) at::globalContext().setAllowTF32CuBLAS(false);
  return device;
}

struct Fixture {
  std::shared_ptr<DecoderModel> model;
  json ref;
  std::shared_ptr<const SafetensorsFile> tensors;

  torch::Tensor Ref(const std::string& name) const {
    const TensorView* v = tensors->Find(name);
    REQUIRE_MESSAGE(v != nullptr, name);
    REQUIRE((v->dtype == DType::kF32 || v->dtype == DType::kI32));
    const auto dtype =
        v->dtype == DType::kF32 ? torch::kFloat32 : torch::kInt32;
    return torch::from_blob(const_cast<uint8_t*>(v->data), v->shape, dtype)
        .clone();
  }
};

Fixture LoadFixture(const std::string& kind, DecoderOptions options = {}) {
  Fixture f;
  const std::string dir = testing::FixtureDir();
  if (options.device.is_cpu()) options.device = TestDevice();
  auto model = DecoderModel::Load(dir + "/" + kind + "-tiny", options);
  REQUIRE_MESSAGE(model.ok(), model.status().ToString());
  f.model = *model;
  f.ref = testing::ReadJsonFile(dir + "/reference/" + kind + ".json");
  auto file =
      SafetensorsFile::Open(dir + "/reference/" + kind + ".safetensors");
  REQUIRE_MESSAGE(file.ok(), file.status().ToString());
  f.tensors = *file;
  return f;
}

torch::Tensor IdsTensor(const std::vector<int32_t>& ids) {
  std::vector<int64_t> wide(ids.begin(), ids.end());
  return torch::tensor(wide, torch::kInt64).view({1, -1});
}

// max |a - b| / max |b|: the error relative to the logits' scale.
double RelativeError(const torch::Tensor& ours, const torch::Tensor& ref) {
  return (ours.to(torch::kFloat64).cpu() - ref.to(torch::kFloat64))
             .abs()
             .max()
             .item<double>() /
         ref.abs().max().item<double>();
}

void CheckWholeSequence(const std::string& kind) {
  Fixture f = LoadFixture(kind);
  torch::NoGradGuard no_grad;
  const auto seq = f.ref["sequences"][0].get<std::vector<int32_t>>();
  torch::Tensor ids = IdsTensor(seq).to(f.model->device());
  torch::Tensor logits = f.model->Logits(ids, torch::ones_like(ids))[0];
  const double full = RelativeError(logits, f.Ref("logits.full_0"));
  // The left-padded batch, compared where there are tokens.
  torch::Tensor batch_ref = f.Ref("logits.left_padded_batch");
  torch::Tensor mask = f.Ref("logits.left_padded_mask").to(torch::kBool);
  const int64_t B = batch_ref.size(0), T = batch_ref.size(1);
  torch::Tensor batch =
      torch::full({B, T}, static_cast<int64_t>(f.ref["pad_id"]), torch::kInt64);
  for (int64_t b = 0; b < B; ++b) {
    const auto s = f.ref["sequences"][b].get<std::vector<int32_t>>();
    batch[b].narrow(0, T - s.size(), s.size()).copy_(IdsTensor(s)[0]);
  }
  torch::Tensor out = f.model
                          ->Logits(batch.to(f.model->device()),
                                   mask.to(f.model->device()).to(torch::kInt64))
                          .cpu();
  const double padded =
      RelativeError(out.index({mask}), batch_ref.index({mask}));
  MESSAGE(kind << " fp32 logits vs transformers: max relative error " << full
               << " (one sequence of " << seq.size() << "), " << padded
               << " (left-padded batch of " << B << ")");
  CHECK(full < 1e-4);
  CHECK(padded < 1e-4);
}

TEST_CASE("Qwen2 logits over whole sequences match transformers") {
  CheckWholeSequence("qwen2");
}

TEST_CASE(
    "Llama logits over whole sequences match transformers (bf16 weights, "
    "llama3 rope)") {
  CheckWholeSequence("llama");
}

void CheckCached(const std::string& kind) {
  Fixture f = LoadFixture(kind);
  torch::NoGradGuard no_grad;
  const auto seq = f.ref["sequences"][0].get<std::vector<int32_t>>();
  const int64_t prefill = f.ref["prefill"];
  const int64_t n = seq.size();
  torch::Tensor ids = IdsTensor(seq).to(f.model->device());
  torch::Tensor expected = f.Ref("logits.cached_0");
  CausalLM& lm = f.model->module();

  // Through the public API: the cache advances with each call.
  CausalLM::KvCache cache = lm.NewCache(1, n);
  auto pos = torch::arange(n, ids.options()).view({1, n});
  std::vector<torch::Tensor> rows;
  rows.push_back(
      lm.LmHead(lm.Hidden(ids.narrow(1, 0, prefill), pos.narrow(1, 0, prefill),
                          torch::Tensor(), &cache))[0]);
  for (int64_t t = prefill; t < n; ++t) {
    rows.push_back(lm.LmHead(lm.Hidden(ids.narrow(1, t, 1), pos.narrow(1, t, 1),
                                       torch::Tensor(), &cache))[0]);
  }
  const double api = RelativeError(torch::cat(rows, 0), expected);

  // Through the decode step generation uses (device-side write index and
  // key mask, as in a CUDA graph).
  CausalLM::KvCache cache2 = lm.NewCache(1, n);
  torch::Tensor key_mask =
      torch::zeros({1, n}, ids.options().dtype(torch::kBool));
  key_mask.narrow(1, 0, prefill).fill_(true);
  torch::Tensor last =
      lm.LmHead(lm.Hidden(ids.narrow(1, 0, prefill), pos.narrow(1, 0, prefill),
                          key_mask.narrow(1, 0, prefill), &cache2));
  double step_error = RelativeError(last[0], expected.narrow(0, 0, prefill));
  for (int64_t t = prefill; t < n; ++t) {
    key_mask[0][t] = true;
    torch::Tensor index = torch::full({1}, t, ids.options());
    torch::Tensor logits = lm.impl().DecodeStep(
        ids.narrow(1, t, 1), pos.narrow(1, t, 1), key_mask, index, cache2);
    step_error = std::max(step_error, RelativeError(logits[0], expected[t]));
  }
  MESSAGE(
      kind
      << " fp32 logits with the KV cache vs transformers': max relative error "
      << api << " (Hidden with cache), " << step_error << " (decode step), "
      << n - prefill << " cached steps");
  CHECK(api < 1e-4);
  CHECK(step_error < 1e-4);
}

TEST_CASE("Qwen2 logits with the KV cache match transformers' cached forward") {
  CheckCached("qwen2");
}

TEST_CASE("Llama logits with the KV cache match transformers' cached forward") {
  CheckCached("llama");
}

void CheckGreedy(const std::string& kind) {
  Fixture f = LoadFixture(kind);
  const json& g = f.ref["greedy"];
  const auto prompts = g["prompts"].get<std::vector<std::vector<int32_t>>>();
  GenerationOptions o;
  o.temperature = 0;
  o.max_new_tokens = g["max_new_tokens"];
  int identical = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto out = f.model->Generate({prompts[i]}, o);
    REQUIRE_MESSAGE(out.ok(), out.status().ToString());
    const auto expected = g["single"][i].get<std::vector<int32_t>>();
    CHECK((*out)[0].token_ids == expected);
    identical += (*out)[0].token_ids == expected;
  }
  auto batched = f.model->Generate(prompts, o);
  REQUIRE(batched.ok());
  for (size_t i = 0; i < prompts.size(); ++i) {
    const auto expected = g["batched"][i].get<std::vector<int32_t>>();
    CHECK((*batched)[i].token_ids == expected);
    identical += (*batched)[i].token_ids == expected;
  }
  MESSAGE(kind << " greedy generations identical to transformers': "
               << identical << " of " << 2 * prompts.size()
               << " (alone and as one left-padded batch; smallest top-2 "
               << "margin " << g["min_margin"].get<double>() << ")");
}

TEST_CASE("Qwen2 greedy generations equal transformers', alone and batched") {
  CheckGreedy("qwen2");
}

TEST_CASE("Llama greedy generations equal transformers', alone and batched") {
  CheckGreedy("llama");
}

void CheckGradients(const std::string& kind) {
  DecoderOptions options;
  options.trainable = true;
  Fixture f = LoadFixture(kind, options);
  const json& g = f.ref["gradients"];
  auto tensor2d = [&](const char* key) {
    std::vector<int64_t> flat;
    int64_t rows = 0;
    for (const json& row : g[key]) {
      for (const json& v : row) flat.push_back(v.get<int64_t>());
      ++rows;
    }
    return torch::tensor(flat, torch::kInt64)
        .view({rows, -1})
        .to(f.model->device());
  };
  torch::Tensor ids = tensor2d("ids"), mask = tensor2d("mask"),
                loss_mask = tensor2d("loss_mask");
  f.model->module().zero_grad();
  torch::Tensor logp = f.model->TokenLogprobs(ids, mask, loss_mask);
  torch::Tensor m = loss_mask.narrow(1, 1, ids.size(1) - 1).to(torch::kFloat32);
  torch::Tensor loss = -logp.narrow(1, 1, ids.size(1) - 1).sum() / m.sum();
  loss.backward();
  const double loss_error =
      std::abs(loss.item<double>() - g["loss"].get<double>()) /
      std::abs(g["loss"].get<double>());
  double worst_norm = 0;
  int compared = 0;
  for (const auto& p : f.model->module().named_parameters()) {
    REQUIRE_MESSAGE(g["grad_norms"].contains(p.key()), p.key());
    const double ref = g["grad_norms"][p.key()];
    REQUIRE(p.value().grad().defined());
    const double ours = p.value().grad().norm().item<double>();
    worst_norm =
        std::max(worst_norm, std::abs(ours - ref) / std::max(ref, 1e-12));
    ++compared;
  }
  CHECK(compared == static_cast<int>(g["grad_norms"].size()));
  double worst_full = 0;
  for (const auto& p : f.model->module().named_parameters()) {
    const std::string name = "grad." + p.key();
    if (f.tensors->Find(name) == nullptr) continue;
    worst_full =
        std::max(worst_full, RelativeError(p.value().grad(), f.Ref(name)));
  }
  MESSAGE(kind << " training forward: loss relative error " << loss_error
               << ", gradient norms of " << compared << " parameters within "
               << worst_norm << ", full gradients within " << worst_full);
  CHECK(loss_error < 1e-5);
  CHECK(worst_norm < 1e-4);
  CHECK(worst_full < 1e-4);
}

TEST_CASE("Qwen2's masked NLL and its gradients match transformers'") {
  CheckGradients("qwen2");
}

TEST_CASE("Llama's masked NLL and its gradients match transformers'") {
  CheckGradients("llama");
}

// The shared-prefix training forward against the whole-sequence one on the
// same rows: a prompt of the fixture's first sequence, three completions of
// different lengths (right-padded), one row whose suffix starts with prompt
// tokens that are not targets. Log-probabilities and gradients agree to
// float rounding.
void CheckSharedPrefix(const std::string& kind) {
  DecoderOptions options;
  options.trainable = true;
  Fixture f = LoadFixture(kind, options);
  const auto seq = f.ref["sequences"][0].get<std::vector<int32_t>>();
  REQUIRE(seq.size() >= 8);
  const int64_t P = static_cast<int64_t>(seq.size()) - 3;
  const std::vector<std::vector<int64_t>> suffixes = {
      {11, 12, 13, 14, 15}, {21, 22}, {seq[P], seq[P + 1], 31, 32}};
  const std::vector<int64_t> not_target = {0, 0, 2};  // leading prompt tokens
  const int64_t B = 3, T = 5;
  auto dev = f.model->device();
  torch::Tensor prefix =
      torch::tensor(std::vector<int64_t>(seq.begin(), seq.begin() + P),
                    torch::kInt64);
  torch::Tensor ids = torch::zeros({B, T}, torch::kInt64);
  torch::Tensor att = torch::zeros({B, T}, torch::kInt64);
  torch::Tensor tgt = torch::zeros({B, T}, torch::kBool);
  torch::Tensor whole_ids = torch::zeros({B, P + T}, torch::kInt64);
  torch::Tensor whole_att = torch::zeros({B, P + T}, torch::kInt64);
  torch::Tensor whole_tgt = torch::zeros({B, P + T}, torch::kBool);
  for (int64_t b = 0; b < B; ++b) {
    const auto& s = suffixes[b];
    const int64_t n = static_cast<int64_t>(s.size());
    torch::Tensor row = torch::tensor(s, torch::kInt64);
    ids[b].narrow(0, 0, n).copy_(row);
    att[b].narrow(0, 0, n).fill_(1);
    tgt[b].narrow(0, not_target[b], n - not_target[b]).fill_(true);
    whole_ids[b].narrow(0, 0, P).copy_(prefix);
    whole_ids[b].narrow(0, P, n).copy_(row);
    whole_att[b].narrow(0, 0, P + n).fill_(1);
    whole_tgt[b].narrow(0, P + not_target[b], n - not_target[b]).fill_(true);
  }
  auto grads = [&](const torch::Tensor& logp) {
    f.model->module().zero_grad();
    logp.sum().backward();
    std::vector<torch::Tensor> out;
    for (const auto& p : f.model->module().parameters()) {
      out.push_back(p.grad().detach().clone().cpu());
    }
    return out;
  };
  torch::Tensor shared = f.model->TokenLogprobsAfterPrefix(
      prefix.to(dev), ids.to(dev), att.to(dev), tgt.to(dev));
  const auto shared_grads = grads(shared);
  torch::Tensor whole = f.model->TokenLogprobs(
      whole_ids.to(dev), whole_att.to(dev), whole_tgt.to(dev));
  const auto whole_grads = grads(whole);
  torch::Tensor whole_suffix = whole.narrow(1, P, T).detach().cpu();
  const double values = RelativeError(shared.detach().cpu().masked_select(tgt),
                                      whole_suffix.masked_select(tgt));
  double worst = 0;
  REQUIRE(shared_grads.size() == whole_grads.size());
  for (size_t i = 0; i < shared_grads.size(); ++i) {
    if (whole_grads[i].abs().max().item<double>() == 0) {
      // A parameter no target reaches: zero on both paths.
      CHECK(shared_grads[i].abs().max().item<double>() == 0);
      continue;
    }
    worst = std::max(worst, RelativeError(shared_grads[i], whole_grads[i]));
  }
  MESSAGE(kind << " shared prefix of " << P << " tokens: log-probabilities "
               << "within " << values << ", gradients within " << worst);
  CHECK(values < 1e-5);
  CHECK(worst < 1e-4);
}

TEST_CASE("a shared prompt prefix gives the whole sequences' log-probabilities "
          "and gradients") {
  CheckSharedPrefix("qwen2");
  CheckSharedPrefix("llama");
}

TEST_CASE("bf16 inference stays close to the fp32 reference") {
  DecoderOptions options;
  options.dtype = torch::kBFloat16;
  Fixture f = LoadFixture("qwen2", options);
  torch::NoGradGuard no_grad;
  const auto seq = f.ref["sequences"][0].get<std::vector<int32_t>>();
  torch::Tensor ids = IdsTensor(seq).to(f.model->device());
  torch::Tensor logits =
      f.model->Logits(ids, torch::ones_like(ids))[0].to(torch::kFloat32);
  const double error = RelativeError(logits, f.Ref("logits.full_0"));
  MESSAGE("qwen2 bf16 logits vs fp32 transformers: max relative error "
          << error);
  CHECK(error < 5e-2);
  // The argmax agrees almost everywhere (a broken bf16 path agrees nowhere;
  // a random model's near-ties flip a few).
  const double agree = logits.cpu()
                           .argmax(-1)
                           .eq(f.Ref("logits.full_0").argmax(-1))
                           .to(torch::kFloat32)
                           .mean()
                           .item<double>();
  CHECK(agree >= 0.85);
}

TEST_CASE(
    "sampled tokens' logprobs equal the training forward's on the same ids") {
  Fixture f = LoadFixture("llama");
  const auto prompt = f.ref["greedy"]["prompts"][0].get<std::vector<int32_t>>();
  GenerationOptions o;
  o.temperature = 1.0;
  o.seed = 11;
  o.max_new_tokens = 20;
  auto out =
      f.model->Generate({prompt, {prompt.begin(), prompt.begin() + 5}}, o);
  REQUIRE(out.ok());
  torch::NoGradGuard no_grad;
  for (size_t r = 0; r < 2; ++r) {
    std::vector<int32_t> ids(prompt.begin(),
                             r == 0 ? prompt.end() : prompt.begin() + 5);
    const size_t p = ids.size();
    const GeneratedTokens& g = (*out)[r];
    ids.insert(ids.end(), g.token_ids.begin(), g.token_ids.end());
    torch::Tensor t = IdsTensor(ids).to(f.model->device());
    torch::Tensor target = torch::zeros_like(t);
    target.narrow(1, p, g.token_ids.size()).fill_(1);
    torch::Tensor logp =
        f.model->TokenLogprobs(t, torch::ones_like(t), target).cpu();
    for (size_t i = 0; i < g.token_ids.size(); ++i) {
      CHECK(logp[0][p + i].item<double>() ==
            doctest::Approx(g.token_logprobs[i]).epsilon(1e-4));
    }
  }
}

// A copy of the Llama fixture in `dir` with config.json edited by `edit`.
std::string EditedCheckpoint(const testing::TempDir& dir,
                             const std::function<void(json&)>& edit) {
  const std::string src = testing::FixtureDir() + "/llama-tiny";
  for (const std::string& name : testing::ListFiles(src)) {
    testing::CopyFile(src + "/" + name, dir.File(name));
  }
  json config = testing::ReadJsonFile(dir.File("config.json"));
  edit(config);
  std::ofstream(dir.File("config.json"), std::ios::trunc) << config.dump();
  return dir.path();
}

TEST_CASE("a checkpoint that disagrees with its config fails with the reason") {
  testing::TempDir tmp;
  auto load = [&](const std::function<void(json&)>& edit) {
    return DecoderModel::Load(EditedCheckpoint(tmp, edit)).status().code();
  };
  CHECK(load([](json& c) { c["num_hidden_layers"] = 3; }) ==
        StatusCode::kNotFound);
  CHECK(load([](json& c) { c["intermediate_size"] = 100; }) ==
        StatusCode::kInvalidArgument);
  CHECK(load([](json& c) { c["vocab_size"] = 10; }) ==
        StatusCode::kInvalidArgument);
  CHECK(load([](json& c) {
          c["model_type"] = "mistral";
          c["architectures"] = {"MistralForCausalLM"};
        }) == StatusCode::kNotSupported);
  CHECK(load([](json& c) { (void)c; }) == StatusCode::kOk);
}

TEST_CASE(
    "parameters carry transformers' names and mapped weights stay unwritten") {
  DecoderOptions options;
  options.trainable = true;
  auto model =
      DecoderModel::Load(testing::FixtureDir() + "/llama-tiny", options);
  REQUIRE(model.ok());
  auto params = (*model)->module().named_parameters();
  CHECK(params.contains("model.embed_tokens.weight"));
  CHECK(params.contains("model.layers.1.mlp.down_proj.weight"));
  CHECK(params.contains("lm_head.weight"));
  CHECK(params.size() == 21);  // 2 layers x 9 + embed, norm, lm_head
  auto qwen =
      DecoderModel::Load(testing::FixtureDir() + "/qwen2-tiny", options);
  REQUIRE(qwen.ok());
  CHECK_FALSE(
      (*qwen)->module().named_parameters().contains("lm_head.weight"));  // tied
  // An in-place update of an fp32 weight mapped from the file changes the
  // model, not the file (private mapping).
  torch::Tensor w = (*qwen)->module().named_parameters()["model.norm.weight"];
  const float before = w[0].item<float>();
  {
    torch::NoGradGuard no_grad;
    w.add_(1.0);
  }
  auto reopened = DecoderModel::Load(testing::FixtureDir() + "/qwen2-tiny");
  REQUIRE(reopened.ok());
  CHECK((*reopened)
            ->module()
            .named_parameters()["model.norm.weight"][0]
            .item<float>() == doctest::Approx(before));
  CHECK(w[0].item<float>() == doctest::Approx(before + 1.0f));
}

}  // namespace
}  // namespace skilldb::models
