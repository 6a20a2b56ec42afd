#include <doctest/doctest.h>

#include "skilldb/models/decoder.h"
#include "skilldb/models/local_backbone.h"
#include "test_fixtures.h"

namespace skilldb::models {
namespace {

using nlohmann::json;

std::unique_ptr<llm::Backbone> OpenQwen() {
  auto b = OpenLocalBackbone(testing::FixtureDir() + "/qwen2-tiny", {});
  REQUIRE_MESSAGE(b.ok(), b.status().ToString());
  return std::move(b).value();
}

llm::Chat ChatOf(const json& j) {
  llm::Chat chat;
  for (const json& m : j) chat.push_back({m["role"], m["content"]});
  return chat;
}

TEST_CASE("the local backbone's greedy answers to chats equal transformers'") {
  auto backbone = OpenQwen();
  const json chats = testing::ReadJsonFile(testing::FixtureDir() +
                                           "/reference/chat.json")["chats"];
  const json ref = testing::ReadJsonFile(testing::FixtureDir() +
                                         "/reference/qwen2.json")["greedy"];
  std::vector<llm::Chat> prompts;
  for (int i = 0; i < 3; ++i) prompts.push_back(ChatOf(chats[i]));
  llm::SamplingOptions o;
  o.temperature = 0;
  o.max_tokens = ref["max_new_tokens"];
  auto out = backbone->Generate(prompts, o);
  REQUIRE_MESSAGE(out.ok(), out.status().ToString());
  REQUIRE(out->size() == 3);
  for (int i = 0; i < 3; ++i) {
    const auto& gen = (*out)[i];
    CHECK(gen.prompt_token_ids ==
          ref["prompts"][i].get<std::vector<int32_t>>());
    REQUIRE(gen.samples.size() == 1);
    CHECK(gen.samples[0].token_ids ==
          ref["single"][i].get<std::vector<int32_t>>());
    CHECK(gen.samples[0].token_logprobs.size() ==
          gen.samples[0].token_ids.size());
    CHECK(gen.prompt_text.rfind("<|im_start|>system\n", 0) == 0);
  }
  const llm::TokenUsage usage = backbone->Usage();
  CHECK(usage.requests == 1);
  CHECK(usage.prompt_tokens > 0);
  CHECK(usage.completion_tokens == 3u * 24u);  // none of them hits EOS
}

TEST_CASE("samples are reproducible under a seed and differ across seeds") {
  auto backbone = OpenQwen();
  llm::SamplingOptions o;
  o.n = 3;
  o.temperature = 1.0;
  o.top_p = 0.9;
  o.top_k = 50;
  o.max_tokens = 16;
  o.seed = 7;
  const std::vector<llm::Chat> prompts = {{{"user", "tile the loop"}},
                                          {{"user", "fuse the epilogue"}}};
  auto a = backbone->Generate(prompts, o);
  auto b = backbone->Generate(prompts, o);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  o.seed = 8;
  auto c = backbone->Generate(prompts, o);
  REQUIRE(c.ok());
  bool any_difference = false;
  for (size_t p = 0; p < 2; ++p) {
    REQUIRE((*a)[p].samples.size() == 3);
    for (size_t s = 0; s < 3; ++s) {
      CHECK((*a)[p].samples[s].token_ids == (*b)[p].samples[s].token_ids);
      any_difference |=
          (*a)[p].samples[s].token_ids != (*c)[p].samples[s].token_ids;
      const auto& sample = (*a)[p].samples[s];
      CHECK(sample.token_ids.size() <= 16);
      CHECK(
          (sample.finish_reason == "stop" || sample.finish_reason == "length"));
    }
  }
  CHECK(any_difference);
}

TEST_CASE("top_k of 1 samples the greedy answer") {
  auto backbone = OpenQwen();
  llm::SamplingOptions greedy;
  greedy.temperature = 0;
  greedy.max_tokens = 12;
  llm::SamplingOptions top1 = greedy;
  top1.temperature = 0.7;
  top1.top_k = 1;
  top1.seed = 3;
  const std::vector<llm::Chat> prompts = {{{"user", "shared memory"}}};
  auto a = backbone->Generate(prompts, greedy);
  auto b = backbone->Generate(prompts, top1);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK((*a)[0].samples[0].token_ids == (*b)[0].samples[0].token_ids);
}

TEST_CASE("top logprobs rank the alternatives and include the greedy token") {
  auto backbone = OpenQwen();
  llm::SamplingOptions o;
  o.temperature = 0;
  o.max_tokens = 20;
  o.top_logprobs = 3;
  auto gen = backbone->Generate(
      {{{"system", "be brief"}, {"user", "warp shuffle"}}}, o);
  REQUIRE(gen.ok());
  const llm::Sample& sample = (*gen)[0].samples[0];
  REQUIRE(sample.top_logprobs.size() == sample.token_ids.size());
  for (size_t i = 0; i < sample.token_ids.size(); ++i) {
    REQUIRE(sample.top_logprobs[i].size() == 3);
    CHECK(sample.top_logprobs[i][0].id == sample.token_ids[i]);  // greedy
    CHECK(sample.top_logprobs[i][0].logprob >=
          sample.top_logprobs[i][1].logprob);
    CHECK(sample.top_logprobs[i][1].logprob >=
          sample.top_logprobs[i][2].logprob);
    CHECK(sample.top_logprobs[i][0].logprob ==
          doctest::Approx(sample.token_logprobs[i]));
  }
}

TEST_CASE(
    "scores are the model's logprobs of the completion after the prompt") {
  auto model = DecoderModel::Load(testing::FixtureDir() + "/qwen2-tiny");
  REQUIRE(model.ok());
  auto backbone = MakeBackbone(*model, "");
  REQUIRE(backbone.ok());
  const llm::Chat chat = {{"system", "be brief"}, {"user", "warp shuffle"}};
  const std::vector<llm::ScoreRequest> requests = {
      {chat, "Use __shfl_down_sync in a loop."},
      {{{"user", "x"}}, "ok"},
      {chat, ""}};
  auto scored = (*backbone)->Score(requests);
  REQUIRE_MESSAGE(scored.ok(), scored.status().ToString());
  REQUIRE(scored->size() == 3);
  for (size_t i = 0; i < requests.size(); ++i) {
    const llm::ScoreResult& r = (*scored)[i];
    auto prompt = (*model)->EncodeChat(requests[i].prompt, true);
    REQUIRE(prompt.ok());
    CHECK(r.prompt_token_ids == prompt->ids);
    CHECK(r.completion_token_ids ==
          (*model)->tokenizer().Encode(requests[i].completion, false));
    REQUIRE(r.token_logprobs.size() == r.completion_token_ids.size());
    // The same ids alone, unpadded, through the training forward.
    std::vector<int64_t> ids(r.prompt_token_ids.begin(),
                             r.prompt_token_ids.end());
    ids.insert(ids.end(), r.completion_token_ids.begin(),
               r.completion_token_ids.end());
    torch::Tensor t = torch::tensor(ids, torch::kInt64).view({1, -1});
    torch::Tensor target = torch::zeros_like(t);
    target.narrow(1, r.prompt_token_ids.size(), r.completion_token_ids.size())
        .fill_(1);
    torch::NoGradGuard no_grad;
    torch::Tensor logp =
        (*model)->TokenLogprobs(t, torch::ones_like(t), target);
    double sum = 0;
    for (size_t k = 0; k < r.token_logprobs.size(); ++k) {
      CHECK(
          r.token_logprobs[k] ==
          doctest::Approx(logp[0][r.prompt_token_ids.size() + k].item<double>())
              .epsilon(1e-5));
      sum += r.token_logprobs[k];
    }
    CHECK(r.sum_logprob == doctest::Approx(sum));
  }
  CHECK((*scored)[0].sum_logprob < 0);
  CHECK((*scored)[2].sum_logprob == 0);
}

TEST_CASE("generation stops before a stop string, keeping the tokens sampled") {
  auto backbone = OpenQwen();
  llm::SamplingOptions o;
  o.temperature = 0;
  o.max_tokens = 24;
  const std::vector<llm::Chat> prompts = {{{"user", "Tile the K loop."}}};
  auto full = backbone->Generate(prompts, o);
  REQUIRE(full.ok());
  const std::string text = (*full)[0].samples[0].text;
  REQUIRE(text.size() > 8);
  const std::string stop = text.substr(text.size() / 2, 3);
  o.stop = {stop, "never appears \x01"};
  auto cut = backbone->Generate(prompts, o);
  REQUIRE(cut.ok());
  const llm::Sample& s = (*cut)[0].samples[0];
  CHECK(s.finish_reason == "stop");
  CHECK(s.text == text.substr(0, text.find(stop)));
  CHECK(s.text.find(stop) == std::string::npos);
  CHECK(s.token_ids.size() < (*full)[0].samples[0].token_ids.size());
  CHECK(std::equal(s.token_ids.begin(), s.token_ids.end(),
                   (*full)[0].samples[0].token_ids.begin()));
}

TEST_CASE("bad requests are InvalidArgument") {
  auto backbone = OpenQwen();
  llm::SamplingOptions o;
  o.n = 0;
  CHECK(backbone->Generate({{{"user", "x"}}}, o).status().code() ==
        StatusCode::kInvalidArgument);
  o.n = 1;
  CHECK(backbone->Generate({}, o).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(backbone->Generate({{}}, o).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(backbone->Generate({{{"tool", "x"}}}, o).status().code() ==
        StatusCode::kInvalidArgument);
  o.max_tokens = 100000;
  CHECK(backbone->Generate({{{"user", "x"}}}, o).status().code() ==
        StatusCode::kInvalidArgument);
  o.max_tokens = 8;
  o.top_p = 0;
  CHECK(backbone->Generate({{{"user", "x"}}}, o).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(OpenLocalBackbone(testing::FixtureDir() + "/qwen2-tiny",
                          {.device = "tpu"})
            .status()
            .code() == StatusCode::kInvalidArgument);
}

TEST_CASE(
    "a model shared with a backbone is the one the backbone samples from") {
  auto model = DecoderModel::Load(testing::FixtureDir() + "/llama-tiny");
  REQUIRE(model.ok());
  auto backbone = MakeBackbone(*model, "tiny-llama");
  REQUIRE(backbone.ok());
  CHECK((*backbone)->Model() == "tiny-llama");
  llm::SamplingOptions o;
  o.temperature = 0;
  o.max_tokens = 6;
  const std::vector<llm::Chat> prompts = {{{"user", "hello"}}};
  auto before = (*backbone)->Generate(prompts, o);
  REQUIRE(before.ok());
  CHECK((*before)[0].prompt_text.rfind(
            "<|begin_of_text|><|start_header_id|>user", 0) == 0);
  {
    torch::NoGradGuard no_grad;
    // What a training step does to the shared module: here, a large change.
    (*model)->module().named_parameters()["lm_head.weight"].mul_(-1.0);
  }
  auto after = (*backbone)->Generate(prompts, o);
  REQUIRE(after.ok());
  CHECK((*before)[0].samples[0].token_ids != (*after)[0].samples[0].token_ids);
}

}  // namespace
}  // namespace skilldb::models
