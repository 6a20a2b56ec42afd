#include "bpe.h"

#include <queue>

#include "pretokenize.h"
#include "unicode.h"

namespace skilldb::models::internal {
namespace {

uint64_t PairKey(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) |
         static_cast<uint32_t>(b);
}

struct Symbol {
  int32_t id;
  int prev;
  int next;
  bool alive;
};

struct Candidate {
  int32_t rank;
  int pos;
  int32_t new_id;
  // std::priority_queue is a max-heap: invert for lowest rank, then
  // leftmost position.
  bool operator<(const Candidate& o) const {
    return rank != o.rank ? rank > o.rank : pos > o.pos;
  }
};

}  // namespace

void BpeModel::IndexBytes() {
  const auto& alphabet = ByteLevelAlphabet();
  for (int b = 0; b < 256; ++b) {
    byte_chars[b].clear();
    AppendUtf8(alphabet[b], byte_chars[b]);
    auto it = vocab.find(byte_chars[b]);
    byte_ids[b] = it == vocab.end() ? -1 : it->second;
  }
}

void BpeModel::Tokenize(std::string_view bytes,
                        std::vector<int32_t>& out) const {
  if (bytes.empty()) return;
  if (ignore_merges) {
    std::string whole;
    for (unsigned char b : bytes) whole += byte_chars[b];
    if (auto it = vocab.find(whole); it != vocab.end()) {
      out.push_back(it->second);
      return;
    }
  }
  std::vector<Symbol> symbols;
  symbols.reserve(bytes.size());
  for (unsigned char b : bytes) {
    const int32_t id = byte_ids[b];
    if (id < 0) {
      // No token for this byte: the unknown token (once per run when
      // fused), or nothing, as the tokenizers library does without unk.
      if (!unk_id) continue;
      if (fuse_unk && !symbols.empty() && symbols.back().id == *unk_id) {
        continue;
      }
    }
    const int pos = static_cast<int>(symbols.size());
    symbols.push_back({id < 0 ? *unk_id : id, pos - 1, pos + 1, true});
  }
  if (symbols.empty()) return;
  symbols.back().next = -1;

  std::priority_queue<Candidate> queue;
  auto consider = [&](int pos) {
    if (pos < 0) return;
    const int next = symbols[pos].next;
    if (next < 0) return;
    auto it = merges.find(PairKey(symbols[pos].id, symbols[next].id));
    if (it != merges.end()) {
      queue.push({it->second.first, pos, it->second.second});
    }
  };
  for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) consider(i);

  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (!left.alive || left.next < 0) continue;
    // Entries made stale by an earlier merge no longer name this pair.
    auto it = merges.find(PairKey(left.id, symbols[left.next].id));
    if (it == merges.end() || it->second.second != top.new_id) continue;
    Symbol& right = symbols[left.next];
    left.id = top.new_id;
    right.alive = false;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = top.pos;
    consider(left.prev);
    consider(top.pos);
  }
  for (int i = 0; i >= 0; i = symbols[i].next) out.push_back(symbols[i].id);
}

void WordPieceModel::Tokenize(std::u32string_view word,
                              std::vector<int32_t>& out) const {
  if (word.size() > max_input_chars_per_word) {
    out.push_back(unk_id);
    return;
  }
  std::vector<int32_t> pieces;
  size_t start = 0;
  while (start < word.size()) {
    size_t end = word.size();
    int32_t found = -1;
    while (start < end) {
      std::string candidate = start > 0 ? continuing_subword_prefix : "";
      candidate += EncodeUtf8(word.substr(start, end - start));
      if (auto it = vocab.find(candidate); it != vocab.end()) {
        found = it->second;
        break;
      }
      --end;
    }
    if (found < 0) {
      out.push_back(unk_id);
      return;
    }
    pieces.push_back(found);
    start = end;
  }
  out.insert(out.end(), pieces.begin(), pieces.end());
}

}  // namespace skilldb::models::internal
