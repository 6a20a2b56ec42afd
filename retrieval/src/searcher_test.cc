#include "skilldb/retrieval/searcher.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>

#include "posting_list.h"
#include "skilldb/retrieval/segment_merger.h"

namespace skilldb::retrieval {
namespace {

struct StringBlob : Blob {
  explicit StringBlob(std::string_view s) : bytes(s) {}
  std::string_view data() const override { return bytes; }
  std::string_view bytes;
};

struct CachingBlob : StringBlob {
  CachingBlob(std::string_view s, BlockBoundCache* c) : StringBlob(s), cache(c) {}
  BlockBoundCache* bound_cache() const override { return cache; }
  BlockBoundCache* cache;
};

// One in-memory segment: its doc table and posting lists. With
// cache_bounds, each list comes with a BlockBoundCache that lives as long
// as the segment (as a cached list's does in the library).
struct MemSegment : PostingSource {
  std::unique_ptr<SegmentDocs> docs;
  std::map<std::string, std::string, std::less<>> lists;
  bool cache_bounds = false;
  std::map<std::string, std::unique_ptr<BlockBoundCache>, std::less<>> caches;

  Status Get(std::string_view term, std::unique_ptr<Blob>* blob) override {
    auto it = lists.find(term);
    if (it == lists.end()) {
      blob->reset();
    } else if (cache_bounds) {
      auto& cache = caches[it->first];
      if (cache == nullptr) {
        cache = std::make_unique<BlockBoundCache>(PostingListBlocks(it->second));
      }
      *blob = std::make_unique<CachingBlob>(it->second, cache.get());
    } else {
      *blob = std::make_unique<StringBlob>(it->second);
    }
    return Status::Ok();
  }
};

struct Doc {
  std::string id;
  std::map<std::string, uint32_t> tf;
  uint32_t length = 0;
  std::vector<std::string> tags;
  DocVersion start = 1;
  DocVersion end = kLiveForever;
};

MemSegment Build(const std::vector<Doc>& docs, uint32_t base) {
  SegmentBuilder builder;
  for (size_t i = 0; i < docs.size(); ++i) {
    DocInput in;
    in.docid = base + static_cast<uint32_t>(i);
    in.start = docs[i].start;
    in.id = docs[i].id;
    in.length = docs[i].length;
    for (const auto& [t, f] : docs[i].tf) in.term_freqs.emplace_back(t, f);
    for (const auto& tag : docs[i].tags) {
      in.filter_terms.push_back(FilterTerm("tag", tag));
    }
    builder.Add(std::move(in));
  }
  MemSegment seg;
  auto decoded = SegmentDocs::Decode(builder.EncodeDocTable());
  REQUIRE(decoded.ok());
  seg.docs = std::move(decoded).value();
  builder.EmitPostingLists(
      [&](std::string_view term, std::string list, uint32_t) {
        seg.lists.emplace(std::string(term), std::move(list));
      });
  for (size_t i = 0; i < docs.size(); ++i) {
    if (docs[i].end != kLiveForever) {
      seg.docs->SetEnd(base + static_cast<uint32_t>(i), docs[i].end);
    }
  }
  return seg;
}

// Adjacent segments over `docs`, the i-th starting at docid starts[i] (the
// first at 0), and the search inputs over them.
struct Segments {
  std::vector<MemSegment> segs;
  std::vector<SegmentInput> inputs;
};

Segments BuildSegments(const std::vector<Doc>& docs,
                       const std::vector<uint32_t>& starts) {
  Segments out;
  for (size_t i = 0; i < starts.size(); ++i) {
    const uint32_t end = i + 1 < starts.size()
                             ? starts[i + 1]
                             : static_cast<uint32_t>(docs.size());
    out.segs.push_back(
        Build({docs.begin() + starts[i], docs.begin() + end}, starts[i]));
  }
  for (auto& s : out.segs) out.inputs.push_back({s.docs.get(), &s});
  return out;
}

std::vector<Doc> RandomCorpus(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  // Zipf-ish vocabulary: term i drawn with weight 1 / (i + 1).
  std::vector<double> weights;
  for (int i = 0; i < 300; ++i) weights.push_back(1.0 / (i + 1));
  std::discrete_distribution<int> term(weights.begin(), weights.end());
  std::vector<Doc> docs(n);
  for (size_t i = 0; i < n; ++i) {
    char id[32];
    std::snprintf(id, sizeof(id), "doc-%05zu",
                  (i * 7919) % n);  // ids not in docid order
    docs[i].id = id;
    const uint32_t len = 5 + rng() % 120;
    for (uint32_t j = 0; j < len; ++j)
      docs[i].tf["t" + std::to_string(term(rng))]++;
    docs[i].length = len;
    if (rng() % 3 == 0) docs[i].tags.push_back("even");
    if (rng() % 5 == 0) docs[i].tags.push_back("rare");
    docs[i].start = 1 + rng() % 4;
    if (rng() % 4 == 0) docs[i].end = docs[i].start + 1 + rng() % 3;
  }
  // A block of exact duplicates, to exercise ties.
  for (size_t i = 0; i + 1 < n && i < 40; i += 2) {
    docs[i + 1].tf = docs[i].tf;
    docs[i + 1].length = docs[i].length;
  }
  return docs;
}

// The plain formula over every document: the oracle.
std::vector<std::pair<std::string, double>> BruteForce(
    const std::vector<Doc>& docs, const std::vector<std::string>& terms,
    DocVersion as_of, size_t k, const std::string& tag) {
  auto live = [&](const Doc& d) { return d.start <= as_of && d.end > as_of; };
  double n = 0, total = 0;
  for (const Doc& d : docs) {
    if (live(d)) {
      n += 1;
      total += d.length;
    }
  }
  std::map<std::string, double> dfs;
  for (const auto& t : terms) {
    double df = 0;
    for (const Doc& e : docs) df += (live(e) && e.tf.count(t)) ? 1 : 0;
    dfs[t] = df;
  }
  std::vector<std::pair<std::string, double>> out;
  for (const Doc& d : docs) {
    if (!live(d)) continue;
    if (!tag.empty() &&
        std::find(d.tags.begin(), d.tags.end(), tag) == d.tags.end())
      continue;
    double score = 0;
    bool any = false;
    for (const auto& t : terms) {
      auto it = d.tf.find(t);
      if (it == d.tf.end()) continue;
      const double df = dfs[t];
      const double idf = std::log(1 + (n - df + 0.5) / (df + 0.5));
      const double tf = it->second;
      score +=
          idf * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * d.length / (total / n)));
      any = true;
    }
    if (any) out.emplace_back(d.id, score);
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (out.size() > k) out.resize(k);
  return out;
}

SearchRequest MakeRequest(const std::vector<Doc>& docs,
                          const std::vector<std::string>& terms,
                          DocVersion as_of, size_t k, Bm25Params params,
                          double* avgdl) {
  auto live = [&](const Doc& d) { return d.start <= as_of && d.end > as_of; };
  uint64_t n = 0;
  double total = 0;
  for (const Doc& d : docs) {
    if (live(d)) {
      ++n;
      total += d.length;
    }
  }
  *avgdl = total / static_cast<double>(n);
  (void)params;
  SearchRequest request;
  request.as_of = as_of;
  request.k = k;
  for (const auto& t : terms) {
    uint64_t df = 0;
    for (const Doc& d : docs) df += (live(d) && d.tf.count(t)) ? 1 : 0;
    if (df > 0) request.terms.push_back({t, Bm25::Idf(n, df)});
  }
  return request;
}

// Runs `request` with each algorithm; the hits and scores must be the
// oracle's.
void ExpectOracle(SearchRequest request, const Bm25& bm25,
                  const std::vector<SegmentInput>& inputs,
                  const std::vector<std::pair<std::string, double>>& expected,
                  std::initializer_list<SearchAlgorithm> algorithms) {
  for (auto algorithm : algorithms) {
    request.algorithm = algorithm;
    auto got = Search(request, bm25, inputs);
    REQUIRE(got.ok());
    REQUIRE(got->size() == expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      CHECK((*got)[i].id == expected[i].first);
      CHECK((*got)[i].score ==
            doctest::Approx(expected[i].second).epsilon(1e-9));
    }
  }
}

TEST_CASE(
    "block-max MaxScore, WAND and exhaustive search equal the plain formula") {
  auto docs = RandomCorpus(3000, 42);
  const Segments segments = BuildSegments(docs, {0, 1000, 2500});
  const std::vector<SegmentInput>& inputs = segments.inputs;

  std::mt19937 rng(9);
  for (int q = 0; q < 200; ++q) {
    std::vector<std::string> terms;
    const int nterms = 1 + static_cast<int>(rng() % 5);
    for (int i = 0; i < nterms; ++i) {
      terms.push_back("t" + std::to_string(rng() % 300));
    }
    std::sort(terms.begin(), terms.end());
    terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
    const DocVersion as_of = 1 + rng() % 6;
    const size_t k = (q % 3 == 0) ? 100 : 10;
    const std::string tag = q % 4 == 0 ? "even" : q % 4 == 1 ? "rare" : "";
    double avgdl = 0;
    SearchRequest request = MakeRequest(docs, terms, as_of, k, {}, &avgdl);
    if (!tag.empty()) request.filter_terms.push_back(FilterTerm("tag", tag));
    Bm25 bm25(Bm25Params{}, avgdl);
    ExpectOracle(
        request, bm25, inputs, BruteForce(docs, terms, as_of, k, tag),
        {SearchAlgorithm::kBlockMaxWand, SearchAlgorithm::kBlockMaxMaxScore,
         SearchAlgorithm::kExhaustive});
  }
}

TEST_CASE("cached block bounds give the plain formula's results at every version") {
  // Long lists (several thousand postings) with their bound tables cached:
  // queries at different versions (other N, avgdl and idf) must each get
  // their own table, and a table reused across queries must stay right.
  auto docs = RandomCorpus(6000, 17);
  Segments segments = BuildSegments(docs, {0, 4000});
  for (MemSegment& seg : segments.segs) seg.cache_bounds = true;
  std::mt19937 rng(3);
  for (int q = 0; q < 120; ++q) {
    std::vector<std::string> terms = {"t" + std::to_string(rng() % 6)};
    // One long list alone, with a short one, with another long one.
    if (q % 3 == 1) terms.push_back("t" + std::to_string(100 + rng() % 200));
    if (q % 3 == 2) terms.push_back("t" + std::to_string(rng() % 40));
    std::sort(terms.begin(), terms.end());
    terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
    const DocVersion as_of = 1 + static_cast<DocVersion>(q % 6);
    const size_t k = q % 3 == 0 ? 50 : 10;
    double avgdl = 0;
    SearchRequest request = MakeRequest(docs, terms, as_of, k, {}, &avgdl);
    Bm25 bm25(Bm25Params{}, avgdl);
    ExpectOracle(
        request, bm25, segments.inputs, BruteForce(docs, terms, as_of, k, ""),
        {SearchAlgorithm::kBlockMaxMaxScore, SearchAlgorithm::kBlockMaxWand});
  }
  // The tables are kept: a long list queried at a version holds the table
  // of that version's statistics afterwards.
  double avgdl = 0;
  const SearchRequest request = MakeRequest(docs, {"t0"}, 6, 10, {}, &avgdl);
  const Bm25 bm25(Bm25Params{}, avgdl);
  REQUIRE(Search(request, bm25, segments.inputs).ok());
  const BlockBoundCache& cache = *segments.segs[0].caches.at("t0");
  REQUIRE(cache.blocks() > 8);  // long: more than kShortList postings
  CHECK(cache.Find(bm25, request.terms[0].idf) != nullptr);
}

TEST_CASE("a block bound table is found only under its own statistics") {
  BlockBoundCache cache(3);
  const Bm25 a(Bm25Params{}, 100.0), b(Bm25Params{}, 101.0);
  const Bm25 c(Bm25Params{1.5, 0.75}, 100.0), d(Bm25Params{1.2, 0.5}, 100.0);
  auto table = std::make_shared<const std::vector<float>>(3, 1.0f);
  CHECK(cache.Find(a, 2.0) == nullptr);
  cache.Put(a, 2.0, table);
  CHECK(cache.Find(a, 2.0) == table);
  CHECK(cache.Find(a, 2.5) == nullptr);  // another idf
  CHECK(cache.Find(b, 2.0) == nullptr);  // another avgdl
  CHECK(cache.Find(c, 2.0) == nullptr);  // another k1
  CHECK(cache.Find(d, 2.0) == nullptr);  // another b
  // A table of the wrong size is not kept.
  cache.Put(b, 2.0, std::make_shared<const std::vector<float>>(2, 1.0f));
  CHECK(cache.Find(b, 2.0) == nullptr);
  // kWays tables are kept; the next one replaces the oldest.
  for (size_t i = 1; i <= BlockBoundCache::kWays; ++i) {
    cache.Put(a, 2.0 + static_cast<double>(i), table);
  }
  CHECK(cache.Find(a, 2.0) == nullptr);
  CHECK(cache.Find(a, 2.0 + BlockBoundCache::kWays) == table);
}

TEST_CASE("block-max MaxScore and WAND follow block bounds that rise") {
  // "a" is in every other document with a tf that grows with the docid, so
  // each of its blocks bounds higher than the one before; "b" is in every
  // eighth. The best documents for "a" sit in its last blocks: a bound
  // kept from an earlier block would skip their windows or leave "a"
  // non-essential there, and lose them.
  std::vector<Doc> docs(4000);
  for (size_t i = 0; i < docs.size(); ++i) {
    char id[32];
    std::snprintf(id, sizeof(id), "d%05zu", i);
    docs[i].id = id;
    if (i % 2 == 0) docs[i].tf["a"] = 1 + static_cast<uint32_t>(i / 250);
    if (i % 8 == 0) docs[i].tf["b"] = 1 + static_cast<uint32_t>(i % 3);
    docs[i].length = 60 + static_cast<uint32_t>(i % 17);
  }
  const Segments segments = BuildSegments(docs, {0});
  for (const std::vector<std::string>& terms :
       {std::vector<std::string>{"a"}, std::vector<std::string>{"a", "b"}}) {
    for (size_t k : {1, 10, 50}) {
      double avgdl = 0;
      SearchRequest request = MakeRequest(docs, terms, 1, k, {}, &avgdl);
      Bm25 bm25(Bm25Params{}, avgdl);
      ExpectOracle(
          request, bm25, segments.inputs, BruteForce(docs, terms, 1, k, ""),
          {SearchAlgorithm::kBlockMaxMaxScore, SearchAlgorithm::kBlockMaxWand});
    }
  }
}

TEST_CASE("MaxScore scores a short list's documents once, with every term") {
  // "common" is in every document (a long list), "rare" in a few (a short
  // one). The rare documents also have the most "common" occurrences, so
  // even without their "rare" part they would rank first: after the short
  // lists are scored, the pass over the long lists must not offer them
  // again with that smaller score. Filters and old versions go through the
  // same two passes.
  std::vector<Doc> docs(3000);
  for (size_t i = 0; i < docs.size(); ++i) {
    char id[32];
    std::snprintf(id, sizeof(id), "d%05zu", (i * 37) % docs.size());
    docs[i].id = id;
    const bool rare = i % 700 == 3;
    docs[i].tf["common"] = rare ? 9 : 1 + static_cast<uint32_t>(i % 4);
    if (rare) docs[i].tf["rare"] = 1;
    if (i % 5 == 0) docs[i].tf["mid"] = 1;  // 600 documents: short too
    docs[i].length = 40 + static_cast<uint32_t>(i % 23);
    if (i % 2 == 1 || rare) docs[i].tags.push_back("odd-or-rare");
    docs[i].start = 1 + static_cast<DocVersion>(i % 3);
    if (i % 11 == 0) docs[i].end = 3;
  }
  const Segments segments = BuildSegments(docs, {0, 1500});
  for (const std::vector<std::string>& terms :
       {std::vector<std::string>{"common", "rare"},
        std::vector<std::string>{"common", "mid", "rare"}}) {
    for (DocVersion as_of : {1, 2, 4}) {
      for (const std::string tag : {"", "odd-or-rare"}) {
        for (size_t k : {3, 10}) {
          double avgdl = 0;
          SearchRequest request =
              MakeRequest(docs, terms, as_of, k, {}, &avgdl);
          if (!tag.empty())
            request.filter_terms.push_back(FilterTerm("tag", tag));
          Bm25 bm25(Bm25Params{}, avgdl);
          ExpectOracle(request, bm25, segments.inputs,
                       BruteForce(docs, terms, as_of, k, tag),
                       {SearchAlgorithm::kBlockMaxMaxScore});
        }
      }
    }
  }
}

TEST_CASE("block-max WAND and MaxScore handle lists that end early") {
  // Many small segments: term lists end early in most of them, which is
  // where a cursor before the pivot (WAND) or a window (MaxScore) may have
  // no block reaching it.
  auto docs = RandomCorpus(3000, 1234);
  std::vector<uint32_t> starts;
  for (uint32_t base = 0; base < 3000; base += 100) starts.push_back(base);
  const Segments segments = BuildSegments(docs, starts);
  const std::vector<SegmentInput>& inputs = segments.inputs;
  std::mt19937 rng(77);
  for (int q = 0; q < 300; ++q) {
    std::vector<std::string> terms = {"t" + std::to_string(rng() % 20),
                                      "t" + std::to_string(20 + rng() % 280)};
    double avgdl = 0;
    SearchRequest request = MakeRequest(docs, terms, 6, 1 + q % 4, {}, &avgdl);
    Bm25 bm25(Bm25Params{}, avgdl);
    ExpectOracle(
        request, bm25, inputs, BruteForce(docs, terms, 6, 1 + q % 4, ""),
        {SearchAlgorithm::kBlockMaxWand, SearchAlgorithm::kBlockMaxMaxScore});
  }
}

TEST_CASE(
    "block-max WAND and MaxScore score fewer documents than exhaustive "
    "search") {
  auto docs = RandomCorpus(20000, 5);
  for (auto& d : docs) {
    d.start = 1;
    d.end = kLiveForever;
  }
  auto seg = Build(docs, 0);
  std::vector<SegmentInput> inputs = {{seg.docs.get(), &seg}};
  double avgdl = 0;
  auto request = MakeRequest(docs, {"t0", "t1", "t250"}, 1, 10, {}, &avgdl);
  Bm25 bm25(Bm25Params{}, avgdl);
  SearchStats full_stats;
  request.algorithm = SearchAlgorithm::kExhaustive;
  auto full = Search(request, bm25, inputs, &full_stats);
  REQUIRE(full.ok());
  for (auto algorithm :
       {SearchAlgorithm::kBlockMaxWand, SearchAlgorithm::kBlockMaxMaxScore}) {
    SearchStats stats;
    request.algorithm = algorithm;
    auto pruned = Search(request, bm25, inputs, &stats);
    REQUIRE(pruned.ok());
    CHECK(pruned->size() == full->size());
    CHECK(stats.docs_scored * 4 < full_stats.docs_scored);
    CHECK(stats.blocks_decoded < full_stats.blocks_decoded);
  }
}

TEST_CASE(
    "a filter holding every document of a segment is exact and costs no "
    "blocks") {
  // Tag "all" on every document; "most" on every document but those of the
  // second segment's first hundred. Results equal the oracle's; where a
  // filter holds the whole segment, none of its blocks are decoded.
  auto docs = RandomCorpus(3000, 8);
  for (size_t i = 0; i < docs.size(); ++i) {
    docs[i].tags.push_back("all");
    if (i < 1000 || i >= 1100) docs[i].tags.push_back("most");
  }
  const Segments segments = BuildSegments(docs, {0, 1000, 2000});
  const std::vector<SegmentInput>& inputs = segments.inputs;
  std::mt19937 rng(31);
  for (int q = 0; q < 100; ++q) {
    std::vector<std::string> terms = {"t" + std::to_string(rng() % 30),
                                      "t" + std::to_string(30 + rng() % 270)};
    for (const std::string tag : {"all", "most"}) {
      double avgdl = 0;
      SearchRequest request = MakeRequest(docs, terms, 6, 10, {}, &avgdl);
      request.algorithm = q % 2 == 0 ? SearchAlgorithm::kBlockMaxWand
                                     : SearchAlgorithm::kBlockMaxMaxScore;
      Bm25 bm25(Bm25Params{}, avgdl);
      SearchStats with_filter, without;
      auto plain = Search(request, bm25, inputs, &without);
      request.filter_terms.push_back(FilterTerm("tag", tag));
      auto got = Search(request, bm25, inputs, &with_filter);
      REQUIRE(got.ok());
      REQUIRE(plain.ok());
      auto expected = BruteForce(docs, terms, 6, 10, tag);
      REQUIRE(got->size() == expected.size());
      for (size_t i = 0; i < expected.size(); ++i) {
        CHECK((*got)[i].id == expected[i].first);
      }
      if (tag == std::string("all")) {
        CHECK(with_filter.blocks_decoded == without.blocks_decoded);
      } else {
        CHECK(with_filter.blocks_decoded > without.blocks_decoded);
      }
    }
  }
}

TEST_CASE(
    "posting lists are emitted in term order, each the encoding of its "
    "postings") {
  // Large enough (over 65,536 postings) that half the lists are encoded on a
  // helper thread; small enough that one thread would be used too.
  for (size_t docs_n : {size_t{200}, size_t{4000}}) {
    std::mt19937 rng(static_cast<unsigned>(docs_n));
    SegmentBuilder builder;
    std::map<std::string, std::vector<internal::Posting>> want;
    for (uint32_t d = 0; d < docs_n; ++d) {
      DocInput in;
      in.docid = 50 + d;
      in.id = "d" + std::to_string(d);
      std::map<std::string, uint32_t> tf;
      for (int j = 0; j < 40; ++j) tf["w" + std::to_string(rng() % 3000)]++;
      for (const auto& [t, f] : tf) {
        in.term_freqs.emplace_back(t, f);
        in.length += f;
      }
      for (const auto& [t, f] : tf) want[t].push_back({in.docid, f, in.length});
      builder.Add(std::move(in));
    }
    std::vector<std::string> terms;
    builder.EmitPostingLists(
        [&](std::string_view term, std::string list, uint32_t num_docs) {
          terms.emplace_back(term);
          auto it = want.find(std::string(term));
          REQUIRE(it != want.end());
          CHECK(num_docs == it->second.size());
          CHECK(list == internal::EncodePostingList(it->second));
        });
    CHECK(terms.size() == want.size());
    CHECK(std::is_sorted(terms.begin(), terms.end()));
  }
}

TEST_CASE("length floors never exceed the length") {
  // Short lengths with few distinct values are exact; many distinct values
  // share codes; lengths past 65535 and dropped documents share the last.
  for (uint32_t spread : {100u, 5000u, 200000u}) {
    std::mt19937 rng(spread);
    SegmentBuilder builder;
    std::vector<uint32_t> lengths;
    for (uint32_t i = 0; i < 4000; ++i) {
      if (i % 97 == 5) {
        builder.AddDropped(100 + i);
        lengths.push_back(kDroppedLength);
        continue;
      }
      DocInput in;
      in.docid = 100 + i;
      in.id = "d" + std::to_string(i);
      in.length = static_cast<uint32_t>(rng() % spread);
      in.term_freqs.emplace_back("t", 1);
      lengths.push_back(in.length);
      builder.Add(std::move(in));
    }
    auto docs = SegmentDocs::Decode(builder.EncodeDocTable());
    REQUIRE(docs.ok());
    size_t exact = 0;
    for (uint32_t i = 0; i < lengths.size(); ++i) {
      const uint32_t floor = (*docs)->length_floor(100 + i);
      REQUIRE(floor <= lengths[i]);
      if (floor == lengths[i]) ++exact;
      // Exact lengths: two bytes below 65535, the rest kept aside.
      const bool dropped = lengths[i] == kDroppedLength;
      REQUIRE((*docs)->dropped(100 + i) == dropped);
      if (!dropped) REQUIRE((*docs)->length(100 + i) == lengths[i]);
    }
    if (spread == 100) CHECK(exact == lengths.size() - lengths.size() / 97 - 1);
    if (spread == 5000) CHECK(exact > 0);
    // The table written back decodes to the same lengths.
    auto again = SegmentDocs::Decode((*docs)->Encode());
    REQUIRE(again.ok());
    for (uint32_t i = 0; i < lengths.size(); ++i) {
      REQUIRE((*again)->dropped(100 + i) == (lengths[i] == kDroppedLength));
      if (lengths[i] != kDroppedLength) {
        REQUIRE((*again)->length(100 + i) == lengths[i]);
      }
    }
  }
}

TEST_CASE("liveness matches start and end at every version as ends are set") {
  // Ends arrive as commits do, at rising versions; after each, every
  // document is asked at every version from before the first start to past
  // the newest end (head queries take the ended-bits path, older ones the
  // start and end path; both must agree with the definition).
  std::mt19937 rng(5);
  SegmentBuilder builder;
  std::vector<DocVersion> starts, ends;
  std::vector<bool> dropped;
  for (uint32_t i = 0; i < 300; ++i) {
    if (i % 41 == 7) {
      builder.AddDropped(50 + i);
      starts.push_back(0);
      dropped.push_back(true);
    } else {
      DocInput in;
      in.docid = 50 + i;
      in.id = "d" + std::to_string(i);
      in.start = 1 + rng() % 5;
      in.length = 10;
      in.term_freqs.emplace_back("t", 1);
      starts.push_back(in.start);
      dropped.push_back(false);
      builder.Add(std::move(in));
    }
    ends.push_back(kLiveForever);
  }
  auto docs = SegmentDocs::Decode(builder.EncodeDocTable());
  REQUIRE(docs.ok());
  const auto check = [&](DocVersion newest) {
    for (uint32_t i = 0; i < 300; ++i) {
      for (DocVersion v = 0; v <= newest + 2; ++v) {
        const bool live = !dropped[i] && starts[i] <= v && v < ends[i];
        REQUIRE((*docs)->LiveAt(50 + i, v) == live);
      }
    }
  };
  check(5);
  for (DocVersion version = 6; version < 12; ++version) {
    for (int n = 0; n < 20; ++n) {
      const uint32_t i = rng() % 300;
      if (dropped[i] || ends[i] != kLiveForever) continue;
      ends[i] = version;
      (*docs)->SetEnd(50 + i, version);
    }
    check(version);
  }
}

TEST_CASE("ties break on the id whether or not ids ascend with docids") {
  // Every document but one has the same terms and length, so scores tie
  // and the top k is that one and the k - 1 smallest ids. Ids ascending
  // with docids let a segment compare docids; descending ones, or ids of
  // two segments, must be compared as ids.
  for (int order = 0; order < 3; ++order) {
    std::vector<Doc> docs(3000);
    for (size_t i = 0; i < docs.size(); ++i) {
      char id[32];
      // 0: ascending; 1: descending; 2: ascending in each segment, the
      // second segment's ids below the first's.
      const size_t key = order == 0   ? i
                         : order == 1 ? docs.size() - i
                         : i < 1500   ? 5000 + i
                                      : i;
      std::snprintf(id, sizeof(id), "s%06zu", key);
      docs[i].id = id;
      docs[i].tf = {{"a", 2}, {"b", 1}};
      docs[i].length = 20;
    }
    // One better document in the first segment's sixth block: its block is
    // evaluated first, so the k-th is a tie from there, and ties with
    // smaller ids found later (earlier docids) must still enter.
    docs[700].tf["a"] = 3;
    Segments segments = BuildSegments(docs, {0, 1500});
    for (MemSegment& seg : segments.segs) seg.cache_bounds = true;
    CHECK(segments.segs[0].docs->ids_ascend() == (order != 1));
    for (const std::vector<std::string>& terms :
         {std::vector<std::string>{"a"}, std::vector<std::string>{"a", "b"}}) {
      for (size_t k : {size_t{1}, size_t{10}, size_t{100}}) {
        double avgdl = 0;
        SearchRequest request = MakeRequest(docs, terms, 1, k, {}, &avgdl);
        Bm25 bm25(Bm25Params{}, avgdl);
        ExpectOracle(request, bm25, segments.inputs,
                     BruteForce(docs, terms, 1, k, ""),
                     {SearchAlgorithm::kBlockMaxMaxScore,
                      SearchAlgorithm::kBlockMaxWand,
                      SearchAlgorithm::kExhaustive});
      }
    }
  }
}

TEST_CASE("merging segments keeps results and drops unkept documents") {
  auto docs = RandomCorpus(1200, 77);
  std::vector<MemSegment> segs;
  segs.push_back(Build({docs.begin(), docs.begin() + 500}, 0));
  segs.push_back(Build({docs.begin() + 500, docs.end()}, 500));
  // Drop documents that ended by version 3 (as a gc keeping >= 3 would).
  auto keep = [&](uint32_t d) { return docs[d].end > 3; };
  SegmentMerger merger({segs[0].docs.get(), segs[1].docs.get()}, keep);
  REQUIRE(merger.Validate().ok());
  struct MapIterator : TermIterator {
    explicit MapIterator(const MemSegment& s)
        : it(s.lists.begin()), end(s.lists.end()) {}
    bool Valid() const override { return it != end; }
    std::string_view term() const override { return it->first; }
    std::string_view posting_list() const override { return it->second; }
    void Next() override { ++it; }
    Status status() const override { return Status::Ok(); }
    std::map<std::string, std::string>::const_iterator it, end;
  };
  MapIterator a(segs[0]), b(segs[1]);
  MemSegment merged;
  auto decoded = SegmentDocs::Decode(merger.EncodeDocTable());
  REQUIRE(decoded.ok());
  merged.docs = std::move(decoded).value();
  REQUIRE(merger
              .MergePostings({&a, &b},
                             [&](std::string_view t, std::string list) {
                               merged.lists.emplace(std::string(t),
                                                    std::move(list));
                             })
              .ok());
  for (uint32_t d = 0; d < docs.size(); ++d) {
    CHECK(merged.docs->dropped(d) == !keep(d));
    if (!merged.docs->dropped(d) && docs[d].end != kLiveForever) {
      merged.docs->SetEnd(d, docs[d].end);
    }
  }
  std::vector<SegmentInput> before = {{segs[0].docs.get(), &segs[0]},
                                      {segs[1].docs.get(), &segs[1]}};
  std::vector<SegmentInput> after = {{merged.docs.get(), &merged}};
  for (DocVersion as_of : {3, 4, 5, 6}) {
    double avgdl = 0;
    auto request =
        MakeRequest(docs, {"t2", "t7", "t40"}, as_of, 50, {}, &avgdl);
    Bm25 bm25(Bm25Params{}, avgdl);
    auto x = Search(request, bm25, before);
    auto y = Search(request, bm25, after);
    REQUIRE(x.ok());
    REQUIRE(y.ok());
    REQUIRE(x->size() == y->size());
    for (size_t i = 0; i < x->size(); ++i) {
      CHECK((*x)[i].id == (*y)[i].id);
      CHECK((*x)[i].score == (*y)[i].score);
    }
  }
}

}  // namespace
}  // namespace skilldb::retrieval
