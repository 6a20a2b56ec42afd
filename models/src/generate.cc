// Batched generation: left-padded prefill into a static KV cache, then one
// decode step per token (replayed from CUDA graphs on GPUs), sampling on the
// device, stop conditions checked on the host.
#include <algorithm>
#include <limits>
#include <random>
#include <set>

#include "decode_graphs.h"
#include "decoder_impl.h"
#include "skilldb/models/decoder.h"
#include "torch_util.h"
#include "unicode.h"

namespace skilldb::models {
namespace {

// The per-row bookkeeping of one generation.
struct Row {
  GeneratedTokens out;
  std::string bytes;  // decoded bytes of the completion so far
  bool done = false;
};

Status Validate(const std::vector<std::vector<int32_t>>& prompts,
                const GenerationOptions& o, const DecoderConfig& c) {
  if (prompts.empty()) return Status::InvalidArgument("generate: no prompts");
  if (o.max_new_tokens < 1) {
    return Status::InvalidArgument("generate: max_new_tokens must be >= 1");
  }
  if (!(o.temperature >= 0)) {
    return Status::InvalidArgument("generate: temperature must be >= 0");
  }
  if (!(o.top_p > 0 && o.top_p <= 1)) {
    return Status::InvalidArgument("generate: top_p must be in (0, 1]");
  }
  if (o.top_k < 0 || o.top_logprobs < 0) {
    return Status::InvalidArgument(
        "generate: top_k and top_logprobs must be >= 0");
  }
  for (const auto& p : prompts) {
    if (p.empty()) return Status::InvalidArgument("generate: an empty prompt");
    for (int32_t id : p) {
      if (id < 0 || id >= c.vocab_size) {
        return Status::InvalidArgument("generate: token id " +
                                       std::to_string(id) +
                                       " outside the vocabulary");
      }
    }
    if (static_cast<int64_t>(p.size()) + o.max_new_tokens >
        c.max_position_embeddings) {
      return Status::InvalidArgument(
          "generate: a prompt of " + std::to_string(p.size()) +
          " tokens plus " + std::to_string(o.max_new_tokens) +
          " new ones exceeds the model's " +
          std::to_string(c.max_position_embeddings) + " positions");
    }
  }
  return Status::Ok();
}

// Samples one token per row from fp32 `logits` [R, V]: greedy at
// temperature 0, else temperature, top-k, top-p (the smallest set of
// most likely tokens whose mass reaches top_p) and a multinomial draw.
torch::Tensor SampleTokens(const torch::Tensor& logits,
                           const GenerationOptions& o, at::Generator& gen) {
  if (o.temperature == 0) return logits.argmax(-1);
  const float neg_inf = -std::numeric_limits<float>::infinity();
  torch::Tensor x = logits / o.temperature;
  const int64_t V = x.size(-1);
  if (o.top_k > 0 && o.top_k < V) {
    torch::Tensor kth =
        std::get<0>(x.topk(o.top_k, -1)).narrow(-1, o.top_k - 1, 1);
    x = x.masked_fill(x < kth, neg_inf);
  }
  if (o.top_p < 1) {
    auto [sorted, index] = x.sort(-1, /*descending=*/true);
    torch::Tensor probs = torch::softmax(sorted, -1);
    // Mass strictly before each token: the first token always stays.
    torch::Tensor before = probs.cumsum(-1) - probs;
    sorted = sorted.masked_fill(before >= o.top_p, neg_inf);
    x = torch::full_like(x, neg_inf).scatter(-1, index, sorted);
  }
  return torch::multinomial(torch::softmax(x, -1), 1, /*replacement=*/false,
                            gen)
      .squeeze(-1);
}

// Earliest occurrence of any stop string that ends after `from` (a search
// window that only looks at text the newest token can have completed).
size_t FindStop(const std::string& bytes, size_t old_size,
                const std::vector<std::string>& stop) {
  size_t best = std::string::npos;
  for (const std::string& s : stop) {
    if (s.empty()) continue;
    const size_t from = old_size >= s.size() ? old_size - s.size() + 1 : 0;
    const size_t hit = bytes.find(s, from);
    if (hit != std::string::npos) best = std::min(best, hit);
  }
  return best;
}

}  // namespace

class DecoderModel::Generator {
 public:
  explicit Generator(DecoderModel& model)
      : model_(model),
        impl_(model.module().impl()),
        graphs_(internal::MakeDecodeGraphs(impl_, model.module().options())) {}

  std::vector<GeneratedTokens> Run(
      const std::vector<std::vector<int32_t>>& prompts,
      const GenerationOptions& o);

 private:
  void Accept(const torch::Tensor& tokens, const torch::Tensor& logprobs,
              const torch::Tensor& top_values, const torch::Tensor& top_ids,
              const GenerationOptions& o, std::vector<Row>& rows);

  DecoderModel& model_;
  CausalLM::Impl& impl_;
  std::unique_ptr<internal::DecodeGraphs> graphs_;
  std::set<int32_t> eos_;
};

void DecoderModel::Generator::Accept(const torch::Tensor& tokens,
                                     const torch::Tensor& logprobs,
                                     const torch::Tensor& top_values,
                                     const torch::Tensor& top_ids,
                                     const GenerationOptions& o,
                                     std::vector<Row>& rows) {
  const Tokenizer& tok = model_.tokenizer();
  auto t = tokens.accessor<int64_t, 1>();
  auto lp = logprobs.accessor<float, 1>();
  for (size_t r = 0; r < rows.size(); ++r) {
    Row& row = rows[r];
    if (row.done) continue;
    const int32_t id = static_cast<int32_t>(t[r]);
    row.out.token_ids.push_back(id);
    if (o.logprobs) row.out.token_logprobs.push_back(lp[r]);
    if (o.top_logprobs > 0) {
      std::vector<llm::TokenChoice> choices;
      for (int k = 0; k < o.top_logprobs; ++k) {
        const int32_t alt = static_cast<int32_t>(top_ids[r][k].item<int64_t>());
        choices.push_back({tok.Decode(std::vector<int32_t>{alt}, false), alt,
                           top_values[r][k].item<float>()});
      }
      row.out.top_logprobs.push_back(std::move(choices));
    }
    if (eos_.count(id)) {
      row.done = true;
      row.out.finish_reason = "stop";
      continue;
    }
    const size_t old_size = row.bytes.size();
    if (!tok.IsSpecial(id)) row.bytes += tok.TokenBytes(id);
    const size_t stop = FindStop(row.bytes, old_size, o.stop);
    if (stop != std::string::npos) {
      row.bytes.resize(stop);
      row.done = true;
      row.out.finish_reason = "stop";
    } else if (static_cast<int>(row.out.token_ids.size()) >= o.max_new_tokens) {
      row.done = true;
      row.out.finish_reason = "length";
    }
  }
}

std::vector<GeneratedTokens> DecoderModel::Generator::Run(
    const std::vector<std::vector<int32_t>>& prompts,
    const GenerationOptions& o) {
  torch::NoGradGuard no_grad;
  const torch::Device device = model_.device();
  const DecoderConfig& c = model_.config();
  eos_.clear();
  if (!o.ignore_eos) {
    eos_.insert(model_.eos_ids().begin(), model_.eos_ids().end());
    eos_.insert(o.extra_eos_ids.begin(), o.extra_eos_ids.end());
  }
  const int64_t R = static_cast<int64_t>(prompts.size());
  int64_t P = 0;
  for (const auto& p : prompts) P = std::max<int64_t>(P, p.size());
  const int64_t capacity = device.is_cuda()
                               ? internal::RoundUpToBucket(P + o.max_new_tokens)
                               : P + o.max_new_tokens;

  // Left padding: every row's newest token sits in the same cache slot.
  const int32_t pad = c.pad_token_id.value_or(
      model_.eos_ids().empty() ? 0 : model_.eos_ids().front());
  std::vector<int64_t> host_ids(R * P, pad);
  std::vector<uint8_t> host_mask(R * P, 0);
  for (int64_t r = 0; r < R; ++r) {
    const int64_t n = prompts[r].size();
    for (int64_t i = 0; i < n; ++i) {
      host_ids[r * P + P - n + i] = prompts[r][i];
      host_mask[r * P + P - n + i] = 1;
    }
  }
  torch::Tensor ids =
      torch::from_blob(host_ids.data(), {R, P}, torch::kInt64).to(device);
  torch::Tensor mask = torch::from_blob(host_mask.data(), {R, P}, torch::kUInt8)
                           .to(device)
                           .to(torch::kBool);
  torch::Tensor positions = (mask.to(torch::kInt64).cumsum(1) - 1).clamp_min(0);

  internal::DecodeState local;
  internal::DecodeState& state =
      graphs_ ? graphs_->Prepare(R, capacity) : local;
  if (!graphs_) {
    state.cache = model_.module().NewCache(R, capacity);
    state.key_mask = torch::zeros({R, capacity}, mask.options());
  }
  state.key_mask.narrow(1, 0, P).copy_(mask);
  torch::Tensor hidden = model_.module().Hidden(
      ids, positions, state.key_mask.narrow(1, 0, P), &state.cache);
  torch::Tensor logits =
      impl_.LmHead(hidden.select(1, P - 1)).to(torch::kFloat32);
  torch::Tensor next_pos = positions.select(1, P - 1) + 1;

  at::Generator gen = internal::MakeGenerator(
      device, o.seed ? *o.seed : std::random_device{}());
  std::vector<Row> rows(R);
  for (int step = 0; step < o.max_new_tokens; ++step) {
    torch::Tensor tokens = SampleTokens(logits, o, gen);
    torch::Tensor logp = torch::log_softmax(logits, -1);
    torch::Tensor chosen = logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1);
    torch::Tensor top_values, top_ids;
    if (o.top_logprobs > 0) {
      std::tie(top_values, top_ids) = logp.topk(o.top_logprobs, -1);
      top_values = top_values.cpu();
      top_ids = top_ids.cpu();
    }
    Accept(tokens.cpu(), chosen.cpu(), top_values, top_ids, o, rows);
    if (std::all_of(rows.begin(), rows.end(),
                    [](const Row& r) { return r.done; })) {
      break;
    }
    const int64_t write = P + step;
    state.key_mask.select(1, write).fill_(true);
    torch::Tensor step_ids = tokens.view({R, 1});
    torch::Tensor step_pos = next_pos.view({R, 1});
    if (graphs_) {
      logits = graphs_->Step(state, step_ids, step_pos, write);
    } else {
      torch::Tensor index = torch::full(
          {1}, write,
          torch::TensorOptions().dtype(torch::kInt64).device(device));
      // On a GPU, the keys of the graphs' length bucket (masked beyond the
      // current length): the same kernels on the same shapes as a replay, so
      // graphs on and off give the same tokens. On the CPU, exactly the
      // current length.
      const int64_t keys =
          device.is_cuda()
              ? std::min(capacity, internal::RoundUpToBucket(write + 1))
              : write + 1;
      logits = impl_.DecodeStep(step_ids, step_pos,
                                state.key_mask.narrow(1, 0, keys), index,
                                state.cache);
    }
    next_pos = next_pos + 1;
  }
  std::vector<GeneratedTokens> out;
  for (Row& row : rows) {
    row.out.text = internal::LossyUtf8(row.bytes);
    out.push_back(std::move(row.out));
  }
  return out;
}

// Here, where Generator is complete.
DecoderModel::DecoderModel() = default;
DecoderModel::~DecoderModel() = default;

Result<std::vector<GeneratedTokens>> DecoderModel::Generate(
    const std::vector<std::vector<int32_t>>& prompts,
    const GenerationOptions& options) {
  SKILLDB_RETURN_IF_ERROR(Validate(prompts, options, config()));
  std::lock_guard<std::mutex> lock(generate_mu_);
  try {
    if (!generator_) generator_ = std::make_unique<Generator>(*this);
    return generator_->Run(prompts, options);
  } catch (const std::exception& e) {
    return Status::Internal("generate: " + internal::ExceptionMessage(e));
  }
}

}  // namespace skilldb::models
