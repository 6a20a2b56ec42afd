// The learner's torch translation unit (see learner.h).
#include "skilldb/trainer/learner.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "dist_internal.h"
#include "skilldb/models/decoder.h"
#include "skilldb/trainer/report.h"
#include "skilldb/util/json.h"

namespace skilldb::trainer {

using nlohmann::json;

namespace {

// bf16 autocast for the CUDA forward (torch::autocast has no C++ guard
// with the same API in 1.13 and 2.x).
class AutocastGuard {
 public:
  explicit AutocastGuard(bool on) : on_(on) {
    if (!on_) return;
#if TORCH_VERSION_MAJOR >= 2 && \
    (TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 4)
    prev_ = at::autocast::is_autocast_enabled(at::kCUDA);
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCUDA, true);
#else
    prev_ = at::autocast::is_enabled();
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(true);
#endif
    at::autocast::increment_nesting();
  }
  ~AutocastGuard() {
    if (!on_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
#if TORCH_VERSION_MAJOR >= 2 && \
    (TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_enabled(at::kCUDA, prev_);
#else
    at::autocast::set_enabled(prev_);
#endif
  }

 private:
  bool on_;
  bool prev_ = false;
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

}  // namespace

class Learner::Impl {
 public:
  LearnerOptions options;
  std::shared_ptr<models::DecoderModel> model;
  std::shared_ptr<models::DecoderModel> reference;  // kl_coef > 0
  std::unique_ptr<llm::Backbone> backbone;
  std::unique_ptr<torch::optim::AdamW> optimizer;
  std::vector<torch::Tensor> params;
  std::vector<std::string> names;
  int64_t step = 0;
  torch::Device device = torch::kCPU;

  double LearningRate(int64_t at) const {
    const auto& o = options.optim;
    if (o.warmup_steps <= 0) return o.lr;
    return o.lr * std::min(1.0, static_cast<double>(at + 1) /
                                    static_cast<double>(o.warmup_steps));
  }

  // One micro-batch: ids [B, T] right-padded, masks, advantages [B]; with
  // a shared prefix [P] (prefix.defined()), ids are what follows it.
  struct Micro {
    torch::Tensor prefix, ids, attention, target, advantage;
    int64_t tokens = 0, positions = 0, shared = 0;
  };

  // The prompt tokens every sequence of `seqs` begins with, when sharing
  // them pays (two sequences or more, kMinSharedPrefix tokens or more);
  // else 0.
  static constexpr size_t kMinSharedPrefix = 16;
  static size_t CommonPrefix(const std::vector<int32_t>& a,
                             const std::vector<int32_t>& b) {
    const size_t n = std::min(a.size(), b.size());
    return static_cast<size_t>(
        std::mismatch(a.begin(), a.begin() + n, b.begin()).first - a.begin());
  }
  size_t SharedPrefix(const std::vector<const TrainSequence*>& seqs) const {
    if (!options.optim.share_prefix || seqs.size() < 2) return 0;
    size_t n = seqs[0]->prompt_ids.size();
    for (const auto* s : seqs) {
      n = std::min(n, CommonPrefix(seqs[0]->prompt_ids, s->prompt_ids));
    }
    return n >= kMinSharedPrefix ? n : 0;
  }

  // The micro-batches of `seqs` (at most micro_batch sequences each). With
  // share_prefix, the sequences are sorted by prompt and the samples of one
  // prompt (a group of rollouts) are cut into micro-batches of their own,
  // whole groups never split across a micro-batch they share with another
  // prompt: each such micro-batch runs its prompt once. The sequences left
  // alone (a prompt of one sample, or one left over) are batched together in
  // prompt order (sharing what they do share, a chat template's system
  // prompt for instance).
  std::vector<std::vector<const TrainSequence*>> Chunks(
      std::vector<const TrainSequence*> seqs) const {
    const size_t per = static_cast<size_t>(options.optim.micro_batch);
    std::vector<std::vector<const TrainSequence*>> out;
    auto cut = [&](const std::vector<const TrainSequence*>& run) {
      for (size_t at = 0; at < run.size(); at += per) {
        out.emplace_back(run.begin() + at,
                         run.begin() + std::min(run.size(), at + per));
      }
    };
    if (!options.optim.share_prefix) {
      cut(seqs);
      return out;
    }
    std::stable_sort(seqs.begin(), seqs.end(),
                     [](const TrainSequence* a, const TrainSequence* b) {
                       return a->prompt_ids < b->prompt_ids;
                     });
    std::vector<const TrainSequence*> alone;
    for (size_t at = 0; at < seqs.size();) {
      size_t end = at + 1;
      while (end < seqs.size() &&
             seqs[end]->prompt_ids == seqs[at]->prompt_ids) {
        ++end;
      }
      // Full micro-batches of the group, then the rest of it on its own
      // when it is two or more.
      size_t next = at;
      for (; next + per <= end; next += per) {
        out.emplace_back(seqs.begin() + next, seqs.begin() + next + per);
      }
      if (end - next >= 2) {
        out.emplace_back(seqs.begin() + next, seqs.begin() + end);
      } else if (end - next == 1) {
        alone.push_back(seqs[next]);
      }
      at = end;
    }
    cut(alone);
    return out;
  }

  // Token log-probabilities [B, T] of `mb` under `model`.
  static torch::Tensor Logprobs(models::DecoderModel& on, const Micro& mb) {
    return mb.prefix.defined()
               ? on.TokenLogprobsAfterPrefix(mb.prefix, mb.ids, mb.attention,
                                             mb.target)
               : on.TokenLogprobs(mb.ids, mb.attention, mb.target);
  }

  Result<Micro> Build(const std::vector<const TrainSequence*>& seqs) const {
    const int64_t vocab = model->config().vocab_size;
    const int64_t ctx = model->config().max_position_embeddings;
    const size_t shared = SharedPrefix(seqs);
    int64_t len = 0;
    for (const auto* s : seqs) {
      len = std::max<int64_t>(len,
                              s->prompt_ids.size() + s->completion_ids.size());
    }
    if (ctx > 0 && len > ctx) {
      return Status::InvalidArgument(
          "learner: a sequence of " + std::to_string(len) +
          " tokens exceeds the model's context of " + std::to_string(ctx));
    }
    for (const auto* s : seqs) {
      for (int32_t id : s->prompt_ids) {
        if (id < 0 || id >= vocab) {
          return Status::InvalidArgument("learner: token id " +
                                         std::to_string(id) + " out of range");
        }
      }
    }
    len -= static_cast<int64_t>(shared);
    const int64_t b = static_cast<int64_t>(seqs.size());
    std::vector<int64_t> ids(b * len, 0);
    std::vector<uint8_t> att(b * len, 0), tgt(b * len, 0);
    std::vector<float> adv(b, 0.f);
    Micro m;
    if (shared > 0) {
      std::vector<int64_t> prefix(seqs[0]->prompt_ids.begin(),
                                  seqs[0]->prompt_ids.begin() + shared);
      m.prefix = torch::tensor(prefix, torch::kInt64).to(device);
      // Positions trained on, as if each sequence were whole.
      m.positions += static_cast<int64_t>(shared) * b;
      m.shared = static_cast<int64_t>(shared) * (b - 1);
    }
    for (int64_t i = 0; i < b; ++i) {
      const auto* s = seqs[i];
      int64_t t = 0;
      for (size_t p = shared; p < s->prompt_ids.size(); ++p) {
        ids[i * len + t] = s->prompt_ids[p];
        att[i * len + t++] = 1;
      }
      for (int32_t id : s->completion_ids) {
        if (id < 0 || id >= vocab) {
          return Status::InvalidArgument("learner: token id " +
                                         std::to_string(id) + " out of range");
        }
        ids[i * len + t] = id;
        att[i * len + t] = 1;
        tgt[i * len + t++] = 1;
      }
      adv[i] = static_cast<float>(s->advantage);
      m.tokens += static_cast<int64_t>(s->completion_ids.size());
      m.positions += t;
    }
    auto cpu_long = torch::TensorOptions().dtype(torch::kInt64);
    auto cpu_u8 = torch::TensorOptions().dtype(torch::kUInt8);
    m.ids = torch::from_blob(ids.data(), {b, len}, cpu_long).clone().to(device);
    m.attention = torch::from_blob(att.data(), {b, len}, cpu_u8)
                      .clone()
                      .to(torch::kInt64)
                      .to(device);
    m.target = torch::from_blob(tgt.data(), {b, len}, cpu_u8)
                   .clone()
                   .to(torch::kBool)
                   .to(device);
    m.advantage =
        torch::from_blob(adv.data(), {b},
                         torch::TensorOptions().dtype(torch::kFloat32))
            .clone()
            .to(device);
    return m;
  }
};

Learner::Learner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Learner::~Learner() = default;

Result<std::unique_ptr<Learner>> Learner::Create(
    const std::string& model_dir, const LearnerOptions& options) {
  SKILLDB_RETURN_IF_ERROR(ValidateTrainConfig([&] {
    TrainConfig c;
    c.optim = options.optim;
    return c;
  }()));
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  try {
    if (options.cpu_threads > 0) torch::set_num_threads(options.cpu_threads);
    impl->device = torch::Device(options.device);
    if (impl->device.is_cuda() && !torch::cuda::is_available()) {
      return Status::Unavailable("learner: device '" + options.device +
                                 "' requested but CUDA is not available");
    }
    torch::manual_seed(options.seed);
    if (torch::cuda::is_available()) torch::cuda::manual_seed_all(options.seed);
    models::DecoderOptions dopt;
    dopt.device = impl->device;
    dopt.dtype = torch::kFloat32;  // fp32 master weights; bf16 via autocast
    dopt.trainable = true;
    SKILLDB_ASSIGN_OR_RETURN(impl->model,
                             models::DecoderModel::Load(model_dir, dopt));
    if (options.optim.kl_coef > 0) {
      dopt.trainable = false;
      SKILLDB_ASSIGN_OR_RETURN(impl->reference,
                               models::DecoderModel::Load(model_dir, dopt));
    }
    for (auto& p : impl->model->module().named_parameters()) {
      impl->names.push_back(p.key());
      impl->params.push_back(p.value());
    }
    const auto& o = options.optim;
    impl->optimizer = std::make_unique<torch::optim::AdamW>(
        impl->params, torch::optim::AdamWOptions(o.lr)
                          .betas({o.beta1, o.beta2})
                          .eps(o.eps)
                          .weight_decay(o.weight_decay));
    SKILLDB_ASSIGN_OR_RETURN(
        impl->backbone, models::MakeBackbone(impl->model, options.model_name,
                                             options.max_batch_rows));
  } catch (const c10::Error& e) {
    return Status::Internal(std::string("learner: ") +
                            e.what_without_backtrace());
  }
  return std::unique_ptr<Learner>(new Learner(std::move(impl)));
}

llm::Backbone& Learner::backbone() { return *impl_->backbone; }

Result<std::vector<int32_t>> Learner::EncodePrompt(
    const std::vector<ChatMessage>& chat) const {
  llm::Chat c;
  for (const auto& m : chat) c.push_back({m.role, m.content});
  SKILLDB_ASSIGN_OR_RETURN(auto enc, impl_->model->EncodeChat(c, true));
  return enc.ids;
}

Result<std::vector<int32_t>> Learner::EncodeText(
    const std::string& text) const {
  return impl_->model->tokenizer().Encode(text, false);
}

std::vector<int32_t> Learner::EosIds() const { return impl_->model->eos_ids(); }

int64_t Learner::step() const { return impl_->step; }

void Learner::SetLearningRate(double peak) { impl_->options.optim.lr = peak; }

double Learner::NextLearningRate() const {
  return impl_->LearningRate(impl_->step);
}

Result<StepStats> Learner::Step(const std::vector<TrainSequence>& batch) {
  Impl& m = *impl_;
  const auto start = std::chrono::steady_clock::now();
  std::vector<const TrainSequence*> seqs;
  int64_t total_tokens = 0;
  for (const auto& s : batch) {
    if (s.completion_ids.empty()) continue;
    seqs.push_back(&s);
    total_tokens += static_cast<int64_t>(s.completion_ids.size());
  }
  // With a process group a rank with nothing to learn from still takes part
  // in the gradients' all-reduce (with zeros): the other ranks wait for it.
  if (seqs.empty() && !m.options.process_group) {
    return Status::InvalidArgument(
        "learner: no sequence has completion tokens");
  }
  const auto& o = m.options.optim;
  const bool token_mean = o.aggregation == LossAggregation::kTokenMean;
  const double norm = token_mean ? static_cast<double>(total_tokens)
                                 : static_cast<double>(seqs.size());
  StepStats st;
  st.sequences = static_cast<int>(seqs.size());
  st.tokens = total_tokens;
  int64_t positions = 0;
  try {
    m.optimizer->zero_grad();
    const bool autocast = m.device.is_cuda() && o.bf16_autocast;
    for (const auto& chunk : m.Chunks(seqs)) {
      SKILLDB_ASSIGN_OR_RETURN(Impl::Micro mb, m.Build(chunk));
      positions += mb.positions;
      st.shared_positions += mb.shared;
      torch::Tensor logp, ref;
      {
        AutocastGuard guard(autocast);
        logp = Impl::Logprobs(*m.model, mb);
        if (m.reference) {
          torch::NoGradGuard no_grad;
          ref = Impl::Logprobs(*m.reference, mb);
        }
      }
      logp = logp.to(torch::kFloat32);
      const torch::Tensor mask = mb.target.to(torch::kFloat32);
      auto aggregate = [&](const torch::Tensor& per_token) {
        if (token_mean) return (per_token * mask).sum() / norm;
        const torch::Tensor count = mask.sum(1).clamp_min(1.0);
        return ((per_token * mask).sum(1) / count).sum() / norm;
      };
      torch::Tensor pg = -aggregate(logp * mb.advantage.unsqueeze(1));
      torch::Tensor loss = pg;
      if (m.reference) {
        const torch::Tensor d = ref.to(torch::kFloat32) - logp;
        const torch::Tensor k3 = torch::exp(d) - d - 1.0;
        const torch::Tensor kl = aggregate(k3);
        loss = loss + o.kl_coef * kl;
        st.kl += kl.item<double>();
      }
      loss.backward();
      st.pg_loss += pg.item<double>();
      st.loss += loss.item<double>();
      ++st.micro_batches;
    }
    if (m.options.process_group) {
      std::vector<torch::Tensor> grads;
      for (auto& p : m.params) {
        if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
        grads.push_back(p.grad().reshape({-1}));
      }
      torch::Tensor flat = torch::cat(grads);
      SKILLDB_RETURN_IF_ERROR(
          AllReduceMeanTensor(*m.options.process_group, flat));
      int64_t off = 0;
      for (auto& p : m.params) {
        const int64_t n = p.numel();
        p.mutable_grad().copy_(flat.narrow(0, off, n).view_as(p));
        off += n;
      }
    }
    const double max_norm = o.max_grad_norm > 0
                                ? o.max_grad_norm
                                : std::numeric_limits<double>::infinity();
    st.grad_norm = torch::nn::utils::clip_grad_norm_(m.params, max_norm);
    st.lr = m.LearningRate(m.step);
    // No signal (the same on every rank: the gradient is the ranks' mean):
    // Adam would still move the weights along its moments, the drift that
    // took a policy out of its answer format in steps whose groups all
    // scored 0.
    st.applied = st.grad_norm != 0;
    if (st.applied) {
      for (auto& group : m.optimizer->param_groups()) {
        static_cast<torch::optim::AdamWOptions&>(group.options()).lr(st.lr);
      }
      m.optimizer->step();
      ++m.step;
    }
  } catch (const c10::Error& e) {
    return Status::Internal(std::string("learner step: ") +
                            e.what_without_backtrace());
  }
  st.step = m.step;
  st.seconds = Seconds(start);
  st.tokens_per_s = st.seconds > 0 ? positions / st.seconds : 0;
  return st;
}

Result<double> Learner::MeanNll(const std::vector<TrainSequence>& batch) {
  Impl& m = *impl_;
  std::vector<const TrainSequence*> seqs;
  for (const auto& s : batch) {
    if (!s.completion_ids.empty()) seqs.push_back(&s);
  }
  if (seqs.empty()) {
    return Status::InvalidArgument(
        "learner: no sequence has completion tokens");
  }
  double sum = 0;
  int64_t tokens = 0;
  try {
    torch::NoGradGuard no_grad;
    for (const auto& chunk : m.Chunks(seqs)) {
      SKILLDB_ASSIGN_OR_RETURN(Impl::Micro mb, m.Build(chunk));
      torch::Tensor logp = Impl::Logprobs(*m.model, mb);
      sum -= (logp.to(torch::kFloat32) * mb.target.to(torch::kFloat32))
                 .sum()
                 .item<double>();
      tokens += mb.tokens;
    }
  } catch (const c10::Error& e) {
    return Status::Internal(std::string("learner: ") +
                            e.what_without_backtrace());
  }
  return sum / static_cast<double>(tokens);
}

Status Learner::SaveCheckpoint(const std::string& dir,
                               const CheckpointInfo& info) const {
  const Impl& m = *impl_;
  SKILLDB_RETURN_IF_ERROR(MakeDirs(dir));
  try {
    torch::serialize::OutputArchive model_ar;
    for (size_t i = 0; i < m.params.size(); ++i) {
      model_ar.write(m.names[i], m.params[i].detach().to(torch::kCPU));
    }
    model_ar.save_to(dir + "/model.pt");
    if (m.reference) {
      torch::serialize::OutputArchive ref_ar;
      for (const auto& p : m.reference->module().named_parameters()) {
        ref_ar.write(p.key(), p.value().detach().to(torch::kCPU));
      }
      ref_ar.save_to(dir + "/reference.pt");
    }
    torch::save(*m.optimizer, dir + "/optimizer.pt");
    torch::serialize::OutputArchive rng_ar;
    {
      auto gen = at::detail::getDefaultCPUGenerator();
      std::lock_guard<std::mutex> lock(gen.mutex());
      rng_ar.write("cpu", gen.get_state());
    }
    if (m.device.is_cuda()) {
      auto gen = at::globalContext().defaultGenerator(m.device);
      std::lock_guard<std::mutex> lock(gen.mutex());
      rng_ar.write("cuda", gen.get_state());
    }
    rng_ar.save_to(dir + "/rng.pt");
  } catch (const c10::Error& e) {
    return Status::Internal(std::string("checkpoint save: ") +
                            e.what_without_backtrace());
  }
  json extra = json::parse(info.extra_json, nullptr, false);
  if (extra.is_discarded()) extra = info.extra_json;
  json meta = {
      {"step", m.step},          {"library_version", info.library_version},
      {"model", m.model->dir()}, {"parameters", m.params.size()},
      {"torch", TORCH_VERSION},  {"extra", extra}};
  return WriteFile(dir + "/meta.json", meta.dump(2) + "\n");
}

Result<CheckpointInfo> Learner::LoadCheckpoint(const std::string& dir) {
  Impl& m = *impl_;
  // meta.json is the user's input (--resume DIR): read with the shared
  // typed reader, every field checked (InvalidArgument naming it), never a
  // nlohmann exception out of a typed get.
  const std::string meta_path = dir + "/meta.json";
  SKILLDB_ASSIGN_OR_RETURN(std::string meta_text, ReadFile(meta_path));
  SKILLDB_ASSIGN_OR_RETURN(json meta,
                           util::ParseUntrustedJson(meta_text, meta_path));
  util::FieldReader in(meta, meta_path);
  SKILLDB_RETURN_IF_ERROR(in.Require("step"));
  CheckpointInfo info;
  SKILLDB_RETURN_IF_ERROR(in.Int64("step", &info.step, 0,
                                   std::numeric_limits<int64_t>::max()));
  SKILLDB_RETURN_IF_ERROR(in.Uint64("library_version", &info.library_version));
  info.extra_json = in.Find("extra") ? util::DumpLossy(*in.Find("extra")) : "{}";
  try {
    torch::serialize::InputArchive model_ar;
    model_ar.load_from(dir + "/model.pt");
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < m.params.size(); ++i) {
      torch::Tensor t;
      if (!model_ar.try_read(m.names[i], t)) {
        return Status::Corruption(dir + "/model.pt: no tensor '" + m.names[i] +
                                  "'");
      }
      if (!t.sizes().equals(m.params[i].sizes())) {
        return Status::Corruption(dir + "/model.pt: '" + m.names[i] +
                                  "' has another shape");
      }
      m.params[i].copy_(t);
    }
    // A checkpoint written with the KL term holds its reference (anchored
    // after the cold start); one without keeps the reference loaded at
    // Create.
    if (m.reference && std::filesystem::exists(dir + "/reference.pt")) {
      torch::serialize::InputArchive ref_ar;
      ref_ar.load_from(dir + "/reference.pt");
      for (auto& p : m.reference->module().named_parameters()) {
        torch::Tensor t;
        if (!ref_ar.try_read(p.key(), t) ||
            !t.sizes().equals(p.value().sizes())) {
          return Status::Corruption(dir + "/reference.pt: '" + p.key() +
                                    "' is missing or has another shape");
        }
        p.value().copy_(t);
      }
    }
    torch::load(*m.optimizer, dir + "/optimizer.pt");
    torch::serialize::InputArchive rng_ar;
    rng_ar.load_from(dir + "/rng.pt");
    torch::Tensor cpu_state;
    if (rng_ar.try_read("cpu", cpu_state)) {
      auto gen = at::detail::getDefaultCPUGenerator();
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(cpu_state);
    }
    torch::Tensor cuda_state;
    if (m.device.is_cuda() && rng_ar.try_read("cuda", cuda_state)) {
      auto gen = at::globalContext().defaultGenerator(m.device);
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(cuda_state);
    }
  } catch (const c10::Error& e) {
    return Status::Corruption(dir + ": " + e.what_without_backtrace());
  }
  m.step = info.step;
  return info;
}

Status Learner::AnchorReference() {
  Impl& m = *impl_;
  if (!m.reference) return Status::Ok();
  try {
    torch::NoGradGuard no_grad;
    auto to = m.reference->module().named_parameters();
    for (size_t i = 0; i < m.params.size(); ++i) {
      torch::Tensor* t = to.find(m.names[i]);
      if (t == nullptr) {
        return Status::Internal("learner: the reference has no '" + m.names[i] +
                                "'");
      }
      t->copy_(m.params[i]);
    }
  } catch (const c10::Error& e) {
    return Status::Internal(std::string("learner: anchoring the reference: ") +
                            e.what_without_backtrace());
  }
  return Status::Ok();
}

std::vector<float> Learner::FlatParameters() const {
  std::vector<float> out;
  torch::NoGradGuard no_grad;
  for (const auto& p : impl_->params) {
    torch::Tensor t = p.detach().to(torch::kCPU, torch::kFloat32).contiguous();
    const float* d = t.data_ptr<float>();
    out.insert(out.end(), d, d + t.numel());
  }
  return out;
}

size_t Learner::NumParameters() const {
  size_t n = 0;
  for (const auto& p : impl_->params) n += static_cast<size_t>(p.numel());
  return n;
}

double Learner::RandomProbe() { return torch::rand({1}).item<double>(); }

Status Learner::BroadcastParameters() {
  Impl& m = *impl_;
  if (!m.options.process_group) return Status::Ok();
  try {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> flat_parts;
    for (auto& p : m.params) flat_parts.push_back(p.detach().reshape({-1}));
    torch::Tensor flat = torch::cat(flat_parts);
    SKILLDB_RETURN_IF_ERROR(BroadcastTensor(*m.options.process_group, flat));
    int64_t off = 0;
    for (auto& p : m.params) {
      const int64_t n = p.numel();
      p.copy_(flat.narrow(0, off, n).view_as(p));
      off += n;
    }
  } catch (const c10::Error& e) {
    return Status::Internal(std::string("broadcast: ") +
                            e.what_without_backtrace());
  }
  return Status::Ok();
}

}  // namespace skilldb::trainer
