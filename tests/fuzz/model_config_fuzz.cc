// A checkpoint's config.json, decoder and encoder, and its chat template on
// arbitrary text: never a crash or an exception, and an accepted config
// means a model libtorch can build (every size positive, heads dividing,
// an even head_dim, token ids inside the vocabulary).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "skilldb/models/chat_format.h"
#include "skilldb/models/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace skilldb::models;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto d = DecoderConfig::FromJson(text); d.ok()) {
    if (d->vocab_size <= 0 || d->hidden_size <= 0 || d->num_layers <= 0 ||
        d->num_heads <= 0 || d->num_kv_heads <= 0 || d->head_dim <= 0 ||
        d->head_dim % 2 != 0 || d->num_heads % d->num_kv_heads != 0 ||
        d->max_position_embeddings <= 0 || !(d->rms_norm_eps > 0) ||
        !(d->rope.theta > 0)) {
      std::abort();
    }
    for (int32_t id : d->eos_token_ids) {
      if (id < 0 || id >= d->vocab_size) std::abort();
    }
    if (d->bos_token_id && (*d->bos_token_id < 0 ||
                            *d->bos_token_id >= d->vocab_size)) {
      std::abort();
    }
  }
  if (auto e = EncoderConfig::FromJson(text); e.ok()) {
    if (e->vocab_size <= 0 || e->hidden_size <= 0 || e->num_heads <= 0 ||
        e->hidden_size % e->num_heads != 0 ||
        e->max_position_embeddings < 2 || e->pad_token_id < 0 ||
        e->pad_token_id >= e->vocab_size) {
      std::abort();
    }
  }
  (void)ChatFormat::FromTemplate(std::string(text), "<s>");
  return 0;
}
