// Fenced code blocks in what a model wrote: the one reader both answer
// extractors (extract.cc for the C ABI, kb_extract.cc for KernelBench's
// ModelNew) use. Completions are untrusted and long: one forward pass over
// lines, no regex.
#ifndef SKILLDB_POLICY_FENCES_H_
#define SKILLDB_POLICY_FENCES_H_

#include <string>
#include <string_view>
#include <vector>

namespace skilldb::policy::internal {

struct FencedBlock {
  int index = 0;     // 1-based, in order of appearance
  std::string info;  // the info string's first word: ASCII letters, digits
                     // and "+#._-", lower case, at most 32 (safe to quote)
  std::string body;  // the lines between the fences, each ending in '\n'
  bool closed = true;  // false: an unclosed last block, run to the end
};

// The line starting at `pos` (without its newline or a trailing '\r') and,
// in *next, the position after it.
std::string_view LineAt(std::string_view text, size_t pos, size_t* next);

// `s` without leading spaces and tabs.
std::string_view TrimLeft(std::string_view s);

// True if `line` opens or closes a fence (at most three spaces, then three
// or more ` or ~); sets the run of fence characters and the info string
// (as FencedBlock::info).
bool IsFence(std::string_view line, std::string* marker, std::string* info);

// Every fenced block of `text` in order; a closing fence is the same
// character, at least as long, with no info string. When `outside` is not
// null it counts the non-blank lines outside every block.
std::vector<FencedBlock> FencedBlocks(std::string_view text, int* outside = nullptr);

}  // namespace skilldb::policy::internal

#endif  // SKILLDB_POLICY_FENCES_H_
