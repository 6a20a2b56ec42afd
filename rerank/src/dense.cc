#include "skilldb/rerank/dense.h"
#include "skilldb/util/clock.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

namespace skilldb::rerank {
namespace {

using Clock = std::chrono::steady_clock;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Every wanted value is among `have` (case-insensitive).
bool CarriesAll(const std::vector<std::string>& have,
                const std::vector<std::string>& wanted) {
  for (const std::string& w : wanted) {
    const std::string lw = Lower(w);
    bool found = false;
    for (const std::string& h : have) found = found || Lower(h) == lw;
    if (!found) return false;
  }
  return true;
}

// The query's filters, as the BM25 query applies them (options.h).
bool PassesFilters(const Skill& s, const QueryOptions& q) {
  if (!q.all_statuses) {
    if (q.status) {
      if (s.status != *q.status) return false;
    } else if (s.status != SkillStatus::kActive &&
               s.status != SkillStatus::kCandidate) {
      return false;
    }
  }
  if (q.language && s.language != *q.language) return false;
  return CarriesAll(s.tags, q.tags) && CarriesAll(s.ops, q.ops) &&
         CarriesAll(s.arch, q.arch);
}

bool Finite(const std::vector<float>& v) {
  for (float x : v) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

// Unit length (a zero vector stays zero: its cosine with anything is 0).
void Normalize(std::vector<float>* v) {
  double sum = 0;
  for (float x : *v) sum += static_cast<double>(x) * x;
  if (sum <= 0) return;
  const double inv = 1.0 / std::sqrt(sum);
  for (float& x : *v) x = static_cast<float>(x * inv);
}

double Dot(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

// A hit for a skill BM25 did not return, filled as FillHits fills one.
Hit HitFromSkill(const Skill& s, Version revision, HitFields fields) {
  Hit h;
  h.id = s.id;
  h.fields = fields;
  if (fields.needs_record()) h.revision = revision;
  if (fields.has(HitField::kTitle)) h.title = s.title;
  if (fields.has(HitField::kSummary)) h.summary = s.summary;
  if (fields.has(HitField::kBody)) h.body = s.body;
  if (fields.has(HitField::kCode)) h.code = s.code;
  if (fields.has(HitField::kTags)) h.tags = s.tags;
  if (fields.has(HitField::kOps)) h.ops = s.ops;
  if (fields.has(HitField::kArch)) h.arch = s.arch;
  if (fields.has(HitField::kLanguage)) h.language = s.language;
  if (fields.has(HitField::kStatus)) h.status = s.status;
  return h;
}

// Embeds texts[i] for every i in `which`, `batch` at a time.
Result<std::vector<std::vector<float>>> EmbedBatched(
    llm::TextEncoder* encoder, const std::vector<std::string>& texts,
    size_t batch) {
  std::vector<std::vector<float>> out;
  out.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); i += batch) {
    std::vector<std::string> chunk(
        texts.begin() + static_cast<ptrdiff_t>(i),
        texts.begin() +
            static_cast<ptrdiff_t>(std::min(texts.size(), i + batch)));
    SKILLDB_ASSIGN_OR_RETURN(auto vectors, encoder->Embed(chunk));
    if (vectors.size() != chunk.size()) {
      return Status::Internal("encoder '" + encoder->model_id() +
                              "' returned " + std::to_string(vectors.size()) +
                              " embeddings for " +
                              std::to_string(chunk.size()) + " texts");
    }
    for (auto& v : vectors) {
      if (v.size() != static_cast<size_t>(encoder->dimension())) {
        return Status::Internal("encoder '" + encoder->model_id() +
                                "' returned an embedding of " +
                                std::to_string(v.size()) + " values, not " +
                                std::to_string(encoder->dimension()));
      }
      if (!Finite(v)) {
        return Status::Internal("encoder '" + encoder->model_id() +
                                "' produced a non-finite embedding");
      }
      out.push_back(std::move(v));
    }
  }
  return out;
}

EmbeddingModel ModelOf(const llm::TextEncoder& e) {
  return {e.weights_sha256(), e.model_id(), e.dimension()};
}

}  // namespace

std::string EmbeddingText(const Skill& skill) {
  std::string text = skill.title + "\n" + skill.summary;
  if (!skill.tags.empty()) {
    text += "\n";
    for (size_t i = 0; i < skill.tags.size(); ++i) {
      text += (i ? ", " : "") + skill.tags[i];
    }
  }
  text += "\n" + skill.body;
  return text;
}

std::string_view DenseFusionName(DenseFusion fusion) {
  switch (fusion) {
    case DenseFusion::kNone:
      return "none";
    case DenseFusion::kRrf:
      return "rrf";
    case DenseFusion::kBlend:
      return "blend";
  }
  return "none";
}

Result<DenseFusion> ParseDenseFusion(std::string_view name) {
  for (DenseFusion f :
       {DenseFusion::kNone, DenseFusion::kRrf, DenseFusion::kBlend}) {
    if (name == DenseFusionName(f)) return f;
  }
  return Status::InvalidArgument("unknown dense fusion '" + std::string(name) +
                                 "' (expected none, rrf or blend)");
}

Status ValidateDenseOptions(const DenseOptions& o) {
  if (o.candidates < 1 || o.candidates > kMaxQueryK) {
    return Status::InvalidArgument("dense candidates must be between 1 and " +
                                   std::to_string(kMaxQueryK) + ", not " +
                                   std::to_string(o.candidates));
  }
  if (!(o.rrf_k > 0) || !std::isfinite(o.rrf_k)) {
    return Status::InvalidArgument("dense rrf_k must be positive and finite");
  }
  if (!(o.dense_weight >= 0 && o.dense_weight <= 1)) {
    return Status::InvalidArgument("dense_weight must be in [0, 1]");
  }
  if (o.batch_size < 1) {
    return Status::InvalidArgument("dense batch_size must be at least 1");
  }
  return Status::Ok();
}

// The skills live at one version, with their embeddings (unit length).
struct DenseRetriever::View {
  struct Doc {
    Skill skill;
    Version revision = 0;
    std::optional<std::vector<float>> embedding;
  };
  Version version = 0;
  std::vector<Doc> docs;  // by id
};

DenseRetriever::DenseRetriever(Library* library, llm::TextEncoder* encoder,
                               EmbeddingStore* store,
                               const DenseOptions& options)
    : library_(library), encoder_(encoder), store_(store), options_(options) {}

DenseRetriever::~DenseRetriever() = default;

Result<std::unique_ptr<DenseRetriever>> DenseRetriever::Create(
    Library* library, llm::TextEncoder* encoder, EmbeddingStore* store,
    const DenseOptions& options) {
  SKILLDB_RETURN_IF_ERROR(ValidateDenseOptions(options));
  const EmbeddingModel model = ModelOf(*encoder);
  if (!store->read_only()) {
    SKILLDB_RETURN_IF_ERROR(store->RegisterModel(model));
  }
  return std::unique_ptr<DenseRetriever>(
      new DenseRetriever(library, encoder, store, options));
}

Result<const DenseRetriever::View*> DenseRetriever::ViewAt(
    Version version, size_t* embedded_now, Status* encoder_status) {
  if (view_ && view_->version == version) return view_.get();
  auto view = std::make_unique<View>();
  view->version = version;
  std::string last_id;
  bool decided = false;  // the live revision of last_id is settled
  SKILLDB_RETURN_IF_ERROR(
      library_->ScanRevisions([&](const std::string& id, const Revision& rev) {
        if (id != last_id) {
          last_id = id;
          decided = false;
        }
        if (decided || rev.version > version) return true;
        decided = true;  // newest first: the first at or before `version`
        if (!rev.deleted) {
          View::Doc d;
          d.skill = rev.skill;
          d.skill.id = id;
          d.revision = rev.version;
          view->docs.push_back(std::move(d));
        }
        return true;
      }));
  std::vector<RevisionKey> keys;
  keys.reserve(view->docs.size());
  for (const auto& d : view->docs) keys.push_back({d.skill.id, d.revision});
  const std::string weights = encoder_->weights_sha256();
  SKILLDB_ASSIGN_OR_RETURN(auto stored, store_->Get(weights, keys));
  std::vector<size_t> missing;
  for (size_t i = 0; i < stored.size(); ++i) {
    if (stored[i] &&
        stored[i]->size() == static_cast<size_t>(encoder_->dimension())) {
      view->docs[i].embedding = std::move(stored[i]);
    } else {
      missing.push_back(i);
    }
  }
  if (!missing.empty() && options_.embed_missing) {
    std::vector<std::string> texts;
    texts.reserve(missing.size());
    for (size_t i : missing)
      texts.push_back(EmbeddingText(view->docs[i].skill));
    auto embedded = EmbedBatched(encoder_, texts, options_.batch_size);
    if (!embedded.ok()) {
      *encoder_status = embedded.status();
      return nullptr;
    }
    std::vector<std::vector<float>>& vectors = *embedded;
    std::vector<StoredEmbedding> put;
    for (size_t j = 0; j < missing.size(); ++j) {
      put.push_back({keys[missing[j]], vectors[j]});
      view->docs[missing[j]].embedding = std::move(vectors[j]);
    }
    if (!store_->read_only()) {
      SKILLDB_RETURN_IF_ERROR(store_->Put(weights, put));
    }
    *embedded_now = missing.size();
  }
  for (auto& d : view->docs) {
    if (d.embedding) Normalize(&*d.embedding);
  }
  view_ = std::move(view);
  return view_.get();
}

Result<DenseResult> DenseRetriever::Retrieve(std::string_view text,
                                             const QueryOptions& query) {
  const auto start = Clock::now();
  // BM25 first: it answers as of the version (and validates it), and its
  // order is what a failed encoder falls back to.
  QueryOptions bq = query;
  bq.k = std::max(options_.candidates, query.k);
  bq.record_retrieved = false;
  SKILLDB_ASSIGN_OR_RETURN(QueryResult bm25, library_->Query(bq, text));
  DenseResult out;
  out.version = bm25.version;
  RerankRequest request{std::string(text), bm25.hits, query.k, bm25.version};
  auto fallback = [&](const Status& s) {
    out.result = Bm25Order(
        request, "dense",
        "encoder '" + encoder_->model_id() + "' failed: " + s.ToString());
    out.search_ms = util::MsSince(start);
    return out;
  };

  const auto embed_start = Clock::now();
  auto qv = encoder_->Embed({std::string(text)});
  out.embed_query_ms = util::MsSince(embed_start);
  if (!qv.ok()) return fallback(qv.status());
  if (qv->size() != 1 ||
      (*qv)[0].size() != static_cast<size_t>(encoder_->dimension())) {
    return fallback(
        Status::Internal("the query's embedding has the wrong shape"));
  }
  if (!Finite((*qv)[0])) {
    return fallback(
        Status::Internal("the query's embedding has a non-finite value"));
  }
  std::vector<float> q = std::move((*qv)[0]);
  Normalize(&q);

  // The store's and the library's errors are errors; the encoder's fall
  // back to BM25.
  Status encoder_status;
  SKILLDB_ASSIGN_OR_RETURN(
      const View* view,
      ViewAt(bm25.version, &out.embedded_now, &encoder_status));
  if (!view) return fallback(encoder_status);

  // The dense ranking over the live skills that pass the filters.
  struct Scored {
    const View::Doc* doc;
    double cosine;
  };
  std::vector<Scored> dense;
  std::map<std::string, const View::Doc*> by_id;
  for (const auto& d : view->docs) {
    if (!PassesFilters(d.skill, query)) continue;
    ++out.live;
    by_id[d.skill.id] = &d;
    if (!d.embedding) {
      ++out.missing;
      continue;
    }
    dense.push_back({&d, Dot(q, *d.embedding)});
  }
  std::sort(dense.begin(), dense.end(), [](const Scored& a, const Scored& b) {
    if (a.cosine != b.cosine) return a.cosine > b.cosine;
    return a.doc->skill.id < b.doc->skill.id;
  });

  // Per id: BM25 rank and score, dense rank and cosine.
  struct Entry {
    size_t bm25_rank = 0;  // 1-based; 0 = not among BM25's candidates
    double bm25 = 0;
    size_t dense_rank = 0;  // 1-based; 0 = not among the dense candidates
    double cosine = 0;
    bool has_cosine = false;
    double score = 0;
  };
  std::map<std::string, Entry> entries;
  const size_t depth = options_.candidates;
  const bool fuse = options_.fusion != DenseFusion::kNone;
  if (fuse) {
    for (size_t i = 0; i < bm25.hits.size() && i < depth; ++i) {
      Entry& e = entries[bm25.hits[i].id];
      e.bm25_rank = i + 1;
      e.bm25 = bm25.hits[i].score;
    }
  }
  const size_t dense_depth = fuse ? depth : dense.size();
  for (size_t i = 0; i < dense.size() && i < dense_depth; ++i) {
    Entry& e = entries[dense[i].doc->skill.id];
    e.dense_rank = i + 1;
  }
  // Every entry's cosine (BM25 hits outside the dense depth have one too).
  for (const Scored& s : dense) {
    auto it = entries.find(s.doc->skill.id);
    if (it != entries.end()) {
      it->second.cosine = s.cosine;
      it->second.has_cosine = true;
    }
  }
  for (size_t i = 0; i < bm25.hits.size(); ++i) {
    auto it = entries.find(bm25.hits[i].id);
    if (it != entries.end() && it->second.bm25_rank == 0) {
      it->second.bm25_rank = i + 1;
      it->second.bm25 = bm25.hits[i].score;
    }
  }

  double lo_b = 0, hi_b = 0, lo_c = 0, hi_c = 0;
  bool first = true;
  for (const auto& [id, e] : entries) {
    if (first) {
      lo_b = hi_b = e.bm25;
      lo_c = hi_c = e.cosine;
      first = false;
    }
    lo_b = std::min(lo_b, e.bm25);
    hi_b = std::max(hi_b, e.bm25);
    lo_c = std::min(lo_c, e.cosine);
    hi_c = std::max(hi_c, e.cosine);
  }
  auto scale = [](double x, double lo, double hi) {
    return hi > lo ? (x - lo) / (hi - lo) : 0.0;
  };
  for (auto& [id, e] : entries) {
    switch (options_.fusion) {
      case DenseFusion::kNone:
        e.score = e.cosine;
        break;
      case DenseFusion::kRrf:
        e.score = (e.bm25_rank ? 1.0 / (options_.rrf_k + e.bm25_rank) : 0.0) +
                  (e.dense_rank ? 1.0 / (options_.rrf_k + e.dense_rank) : 0.0);
        break;
      case DenseFusion::kBlend:
        e.score = options_.dense_weight * scale(e.cosine, lo_c, hi_c) +
                  (1 - options_.dense_weight) *
                      (e.bm25_rank ? scale(e.bm25, lo_b, hi_b) : 0.0);
        break;
    }
  }
  std::vector<std::pair<std::string, const Entry*>> order;
  for (const auto& [id, e] : entries) {
    if (options_.fusion == DenseFusion::kNone && e.dense_rank == 0) continue;
    order.emplace_back(id, &e);
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    if (a.second->score != b.second->score) {
      return a.second->score > b.second->score;
    }
    return a.first < b.first;
  });
  if (order.size() > query.k) order.resize(query.k);

  std::map<std::string, const Hit*> bm25_hit;
  for (const Hit& h : bm25.hits) bm25_hit[h.id] = &h;
  RerankResult& r = out.result;
  r.mode = "dense";
  r.applied = true;
  r.reason = "fusion " + std::string(DenseFusionName(options_.fusion)) +
             " with " + encoder_->model_id();
  for (const auto& [id, e] : order) {
    RankedHit rh;
    if (auto it = bm25_hit.find(id); it != bm25_hit.end()) {
      rh.hit = *it->second;
    } else {
      const View::Doc* d = by_id.at(id);
      rh.hit = HitFromSkill(d->skill, d->revision, query.fields);
      rh.hit.score = 0;  // BM25 did not score it
      if (query.fields.has(HitField::kUsage)) {
        SKILLDB_ASSIGN_OR_RETURN(UsageCounters u, library_->GetUsage(id));
        rh.hit.usage = u;
      }
    }
    rh.bm25_rank = e->bm25_rank;
    rh.rerank_score = e->cosine;
    rh.score = e->score;
    r.hits.push_back(std::move(rh));
  }
  if (query.record_retrieved && !r.hits.empty()) {
    std::vector<UsageRecord> records;
    for (const RankedHit& h : r.hits) {
      records.push_back({h.hit.id, UsageEvent::kRetrieved, 1});
    }
    SKILLDB_RETURN_IF_ERROR(library_->RecordUsage(records));
  }
  out.search_ms = util::MsSince(start) - out.embed_query_ms;
  return out;
}

Result<EmbedReport> EmbedRevisions(Library* library, llm::TextEncoder* encoder,
                                   EmbeddingStore* store,
                                   const EmbedOptions& options) {
  const auto start = Clock::now();
  EmbedReport report;
  report.model = ModelOf(*encoder);
  if (options.batch_size < 1) {
    return Status::InvalidArgument("embed batch_size must be at least 1");
  }
  SKILLDB_RETURN_IF_ERROR(store->RegisterModel(report.model));
  // The retained, non-deleted revisions (their texts are read in batches
  // below, so memory holds keys, not skills).
  std::vector<RevisionKey> keys;
  SKILLDB_RETURN_IF_ERROR(
      library->ScanRevisions([&](const std::string& id, const Revision& rev) {
        if (!rev.deleted) keys.push_back({id, rev.version});
        return true;
      }));
  report.revisions = keys.size();
  const std::string& weights = report.model.weights_sha256;
  // Unusable stored rows (NaN, wrong size) are embedded again and
  // overwritten.
  SKILLDB_ASSIGN_OR_RETURN(auto stored,
                           store->Get(weights, keys, &report.repaired));
  std::vector<RevisionKey> todo;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (stored[i]) {
      ++report.present;
    } else {
      todo.push_back(keys[i]);
    }
  }
  stored.clear();
  EmbedProgress progress{report.present, report.revisions};
  if (options.progress) options.progress(progress);
  // Texts of the revisions to embed, fetched by id (History holds every
  // retained revision of one skill).
  std::map<std::string, std::vector<Version>> wanted;
  for (const RevisionKey& k : todo) wanted[k.id].push_back(k.revision);
  std::vector<StoredEmbedding> batch_keys;
  std::vector<std::string> batch_texts;
  auto flush = [&]() -> Status {
    if (batch_texts.empty()) return Status::Ok();
    SKILLDB_ASSIGN_OR_RETURN(
        auto vectors, EmbedBatched(encoder, batch_texts, batch_texts.size()));
    for (size_t i = 0; i < vectors.size(); ++i) {
      batch_keys[i].vector = std::move(vectors[i]);
    }
    SKILLDB_RETURN_IF_ERROR(store->Put(weights, batch_keys));
    report.embedded += batch_keys.size();
    progress.done += batch_keys.size();
    batch_keys.clear();
    batch_texts.clear();
    if (options.progress) options.progress(progress);
    return Status::Ok();
  };
  for (const auto& [id, versions] : wanted) {
    SKILLDB_ASSIGN_OR_RETURN(std::vector<Revision> history,
                             library->History(id));
    for (const Revision& rev : history) {
      if (rev.deleted || std::find(versions.begin(), versions.end(),
                                   rev.version) == versions.end()) {
        continue;
      }
      Skill s = rev.skill;
      s.id = id;
      batch_keys.push_back({{id, rev.version}, {}});
      batch_texts.push_back(EmbeddingText(s));
      if (batch_texts.size() >= options.batch_size) {
        SKILLDB_RETURN_IF_ERROR(flush());
      }
    }
  }
  SKILLDB_RETURN_IF_ERROR(flush());
  if (options.prune) {
    SKILLDB_ASSIGN_OR_RETURN(report.pruned, store->Prune(weights, keys));
  }
  report.seconds = util::MsSince(start) / 1000.0;
  return report;
}

}  // namespace skilldb::rerank
