#include "posting_list.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace skilldb::retrieval::internal {
namespace {

std::vector<Posting> RandomPostings(size_t n, uint32_t max_gap, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<Posting> out;
  uint32_t doc = static_cast<uint32_t>(rng() % 10);
  for (size_t i = 0; i < n; ++i) {
    out.push_back({doc, static_cast<uint32_t>(1 + rng() % 7),
                   static_cast<uint32_t>(10 + rng() % 300)});
    doc += 1 + static_cast<uint32_t>(rng() % max_gap);
  }
  return out;
}

TEST_CASE("a cursor walks every posting in order") {
  for (size_t n :
       {size_t{1}, size_t{127}, size_t{128}, size_t{129}, size_t{1000}}) {
    auto postings = RandomPostings(n, 50, static_cast<unsigned>(n));
    std::string blob = EncodePostingList(postings);
    PostingCursor cursor;
    REQUIRE(cursor.Init(blob).ok());
    CHECK(cursor.num_docs() == n);
    for (const Posting& p : postings) {
      REQUIRE(cursor.doc() == p.docid);
      CHECK(cursor.tf() == p.tf);
      cursor.Next();
    }
    CHECK(cursor.doc() == kNoMoreDocs);
    CHECK_FALSE(cursor.corrupt());
  }
}

TEST_CASE("Seek and ShallowSeek land on the right posting in either direction") {
  // Runs of consecutive docids (blocks packed to zero bits) and gaps, so
  // both block kinds are entered from before and from after.
  std::vector<Posting> postings;
  uint32_t doc = 10;
  std::mt19937 rng(5);
  for (int i = 0; i < 3000; ++i) {
    doc += (i / 200) % 2 == 0 ? 1 : 1 + rng() % 30;
    postings.push_back({doc, 1 + static_cast<uint32_t>(rng() % 5), 50});
  }
  std::string blob = EncodePostingList(postings);
  PostingCursor cursor;
  REQUIRE(cursor.Init(blob).ok());
  for (int step = 0; step < 4000; ++step) {
    const uint32_t target = rng() % (doc + 20);
    auto it = std::lower_bound(
        postings.begin(), postings.end(), target,
        [](const Posting& p, uint32_t t) { return p.docid < t; });
    const bool any = it != postings.end();
    // The block holding the first posting at or after target.
    CHECK(cursor.ShallowSeek(target) == any);
    if (any) {
      const size_t block = static_cast<size_t>(it - postings.begin()) / 128;
      const size_t last = std::min(postings.size(), (block + 1) * 128) - 1;
      CHECK(cursor.BlockLastDoc() == postings[last].docid);
    }
    if (step % 3 == 0) {
      cursor.Advance(target);  // forwards only: may stay ahead of target
      if (cursor.doc() < target) FAIL("Advance stopped before its target");
      continue;
    }
    cursor.Seek(target);
    if (!any) {
      CHECK(cursor.doc() == kNoMoreDocs);
      continue;
    }
    REQUIRE(cursor.doc() == it->docid);
    CHECK(cursor.tf() == it->tf);
    cursor.Next();
    if (it + 1 != postings.end()) CHECK(cursor.doc() == (it + 1)->docid);
  }
}

TEST_CASE("Advance lands on the first posting at or after the target") {
  auto postings = RandomPostings(5000, 20, 3);
  std::string blob = EncodePostingList(postings);
  std::mt19937 rng(11);
  PostingCursor cursor;
  REQUIRE(cursor.Init(blob).ok());
  uint32_t target = 0;
  size_t i = 0;
  while (true) {
    target += rng() % 400;
    cursor.Advance(target);
    while (i < postings.size() && postings[i].docid < target) ++i;
    if (i == postings.size()) {
      CHECK(cursor.doc() == kNoMoreDocs);
      break;
    }
    REQUIRE(cursor.doc() == postings[i].docid);
    CHECK(cursor.tf() == postings[i].tf);
  }
}

TEST_CASE("block frontiers bound every posting of their block") {
  auto postings = RandomPostings(2000, 5, 5);
  std::string blob = EncodePostingList(postings);
  PostingCursor cursor;
  REQUIRE(cursor.Init(blob).ok());
  Bm25 bm25(Bm25Params{}, 150.0);
  for (const Posting& p : postings) {
    REQUIRE(cursor.ShallowAdvance(p.docid));
    CHECK(cursor.BlockLastDoc() >= p.docid);
    const double bound = cursor.BlockMaxScore(bm25, 2.0);
    CHECK(bound >= bm25.TermScore(2.0, p.tf, p.dl));
    const auto& term = cursor.TermFrontier();
    CHECK(MaxScore(bm25, 2.0, term.data(), term.size()) >= bound);
  }
}

TEST_CASE("runs of consecutive docids are walked without unpacking docids") {
  // Blocks alternate between runs (zero-bit gaps, not unpacked) and gapped
  // blocks; a single-block run too. Walked with and without tfs, by Next
  // and by Advance to every target.
  std::mt19937 rng(21);
  std::vector<Posting> postings;
  uint32_t doc = 7;
  for (size_t block = 0; block < 9; ++block) {
    const bool run = block % 2 == 0;
    const size_t n = block == 8 ? 77 : kBlockSize;
    for (size_t i = 0; i < n; ++i) {
      postings.push_back({doc, static_cast<uint32_t>(1 + rng() % 3),
                          static_cast<uint32_t>(20 + rng() % 100)});
      doc += run ? 1 : 1 + static_cast<uint32_t>(rng() % 9);
    }
  }
  std::vector<Posting> single(postings.begin(), postings.begin() + 90);
  for (const auto* list : {&postings, &single}) {
    std::string blob = EncodePostingList(*list);
    // Walked reading tfs, and not (they are unpacked lazily).
    for (bool with_tfs : {true, false}) {
      PostingCursor cursor;
      REQUIRE(cursor.Init(blob).ok());
      CHECK(cursor.last_doc() == list->back().docid);
      for (const Posting& p : *list) {
        REQUIRE(cursor.doc() == p.docid);
        if (with_tfs) CHECK(cursor.tf() == p.tf);
        cursor.Next();
      }
      CHECK(cursor.doc() == kNoMoreDocs);
      for (uint32_t target = 0; target <= list->back().docid + 1; target += 5) {
        PostingCursor c;
        REQUIRE(c.Init(blob).ok());
        c.Advance(target);
        auto it = std::lower_bound(
            list->begin(), list->end(), target,
            [](const Posting& p, uint32_t t) { return p.docid < t; });
        if (it == list->end()) {
          CHECK(c.doc() == kNoMoreDocs);
          continue;
        }
        REQUIRE(c.doc() == it->docid);
        if (with_tfs) CHECK(c.tf() == it->tf);
        c.Next();  // and on from there
        if (it + 1 != list->end()) CHECK(c.doc() == (it + 1)->docid);
      }
    }
  }
}

TEST_CASE(
    "MinLength bounds each posting's length from below, exactly at the "
    "frontier") {
  // Many distinct tfs, so some block frontiers are coarsened.
  for (uint32_t max_tf : {3u, 40u}) {
    std::mt19937 rng(max_tf);
    std::vector<Posting> postings;
    uint32_t doc = 0;
    for (size_t i = 0; i < 3000; ++i) {
      postings.push_back({doc, 1 + static_cast<uint32_t>(rng() % max_tf),
                          1 + static_cast<uint32_t>(rng() % 400)});
      doc += 1 + static_cast<uint32_t>(rng() % 4);
    }
    std::string blob = EncodePostingList(postings);
    PostingCursor cursor;
    REQUIRE(cursor.Init(blob).ok());
    size_t exact = 0;
    for (size_t i = 0; i < postings.size(); ++i) {
      const Posting& p = postings[i];
      REQUIRE(cursor.doc() == p.docid);
      const uint32_t min_length = cursor.MinLength();
      REQUIRE(min_length >= 1);
      CHECK(min_length <= p.dl);
      // The oracle: no posting of the block with tf >= this tf is shorter
      // than the frontier says (equality when the frontier is not coarsened).
      const size_t begin = i / kBlockSize * kBlockSize;
      const size_t end = std::min(postings.size(), begin + kBlockSize);
      uint32_t shortest = ~0u;
      for (size_t j = begin; j < end; ++j) {
        if (postings[j].tf >= p.tf)
          shortest = std::min(shortest, postings[j].dl);
      }
      CHECK(min_length <= shortest);
      if (min_length == shortest) ++exact;
      cursor.Next();
    }
    // Three tfs never need coarsening: the bound is the block's true minimum.
    if (max_tf == 3) CHECK(exact == postings.size());
    if (max_tf == 40) CHECK(exact > postings.size() / 4);
  }
}

TEST_CASE("the impact frontier keeps only undominated pairs") {
  auto frontier =
      ImpactFrontier({{1, 100}, {2, 100}, {2, 50}, {3, 200}, {1, 10}});
  // (2,100) is dominated by (2,50); (1,100) by (2,50).
  REQUIRE(frontier.size() == 3);
  CHECK(frontier[0].tf == 3);
  CHECK(frontier[1].tf == 2);
  CHECK(frontier[1].dl == 50);
  CHECK(frontier[2].tf == 1);
  CHECK(frontier[2].dl == 10);
}

TEST_CASE("the impact frontier equals the undominated pairs of every input") {
  // Oracle: the pairs no other pair dominates, found by comparing all pairs,
  // ordered by tf descending; then coarsened the way the encoder coarsens.
  auto oracle = [](const std::vector<Impact>& in) {
    std::vector<Impact> out;
    for (const Impact& a : in) {
      bool dominated = false;
      for (const Impact& b : in) {
        if (b.tf >= a.tf && b.dl <= a.dl && (b.tf > a.tf || b.dl < a.dl))
          dominated = true;
      }
      bool seen = false;
      for (const Impact& o : out) seen = seen || (o.tf == a.tf && o.dl == a.dl);
      if (!dominated && !seen) out.push_back(a);
    }
    std::sort(out.begin(), out.end(),
              [](Impact a, Impact b) { return a.tf > b.tf; });
    while (out.size() > kMaxFrontier) {
      std::vector<Impact> merged;
      for (size_t i = 0; i < out.size(); i += 2) {
        merged.push_back(i + 1 < out.size()
                             ? Impact{std::max(out[i].tf, out[i + 1].tf),
                                      std::min(out[i].dl, out[i + 1].dl)}
                             : out[i]);
      }
      out = std::move(merged);
    }
    return out;
  };
  std::mt19937 rng(5);
  for (int round = 0; round < 500; ++round) {
    std::vector<Impact> in(1 + rng() % 300);
    // Small tfs (the array path) and, every fifth round, one huge tf (the
    // sorting path).
    for (Impact& imp : in)
      imp = {1 + static_cast<uint32_t>(rng() % (1 + round % 40)),
             1 + static_cast<uint32_t>(rng() % 500)};
    if (round % 5 == 0) in[rng() % in.size()].tf = 4000000000u - rng() % 1000;
    const auto got = ImpactFrontier(in);
    const auto want = oracle(in);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i].tf == want[i].tf);
      CHECK(got[i].dl == want[i].dl);
    }
  }
}

TEST_CASE("rare terms cost a few bytes and dense runs pack to zero bits") {
  CHECK(EncodePostingList({{123456, 1, 50}}).size() <= 10);
  std::vector<Posting> dense;
  for (uint32_t d = 1000; d < 1128; ++d) dense.push_back({d, 1, 40});
  // 128 consecutive docids with tf 1: header + frontier + widths only.
  CHECK(EncodePostingList(dense).size() <= 12);
}

TEST_CASE("a truncated posting list is reported as corrupt") {
  std::string blob = EncodePostingList(RandomPostings(300, 9, 2));
  PostingCursor cursor;
  CHECK(cursor.Init(std::string_view(blob).substr(0, 10)).code() ==
        StatusCode::kCorruption);
  // Cut inside the last block: caught when opening (the skip table no longer
  // matches the size) or at the latest when the block is decoded.
  Status s = cursor.Init(std::string_view(blob).substr(0, blob.size() - 40));
  if (s.ok()) {
    while (cursor.doc() != kNoMoreDocs) cursor.Next();
    CHECK(cursor.corrupt());
  } else {
    CHECK(s.code() == StatusCode::kCorruption);
  }
  // A single-block list cut short.
  std::string small = EncodePostingList(RandomPostings(50, 9, 4));
  s = cursor.Init(std::string_view(small).substr(0, small.size() - 3));
  if (s.ok()) {
    while (cursor.doc() != kNoMoreDocs) cursor.Next();
    CHECK(cursor.corrupt());
  } else {
    CHECK(s.code() == StatusCode::kCorruption);
  }
}

size_t VarintBytes(uint32_t v) {
  size_t n = 1;
  while (v >= 128) {
    v >>= 7;
    ++n;
  }
  return n;
}

TEST_CASE("a malformed block frontier never prunes and is reported") {
  const auto postings = RandomPostings(300, 9, 6);  // three blocks
  std::string blob = EncodePostingList(postings);
  PostingCursor probe;
  REQUIRE(probe.Init(blob).ok());
  // Locate block 1: header, term frontier, skip table (u32 last docid, u32
  // end offset per block), then the blocks.
  size_t skip = VarintBytes(300) + VarintBytes(postings[0].docid) + 1;
  for (const Impact& i : probe.TermFrontier()) {
    skip += VarintBytes(i.tf) + VarintBytes(i.dl);
  }
  const size_t data = skip + 8 * 3;
  uint32_t block0_end = 0;
  for (int b = 3; b >= 0; --b) {
    block0_end = block0_end << 8 | static_cast<uint8_t>(blob[skip + 4 + b]);
  }
  blob[data + block0_end] = static_cast<char>(0xff);  // count > kMaxFrontier

  PostingCursor cursor;
  REQUIRE(cursor.Init(blob).ok());
  Bm25 bm25(Bm25Params{}, 150.0);
  REQUIRE(cursor.ShallowAdvance(postings[0].docid));
  CHECK(std::isfinite(cursor.BlockMaxScore(bm25, 2.0)));
  REQUIRE(cursor.ShallowAdvance(postings[200].docid));
  CHECK(std::isinf(cursor.BlockMaxScore(bm25, 2.0)));
  while (cursor.doc() != kNoMoreDocs) cursor.Next();
  CHECK(cursor.corrupt());
}

}  // namespace
}  // namespace skilldb::retrieval::internal
