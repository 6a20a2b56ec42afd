// Text for people: escaping what the library stores before it reaches a
// terminal, and "did you mean" suggestions for mistyped names.
//
// Titles, ids, commit messages and reasons come from users and agents and
// are printed by every human-readable command. Printed raw, an ESC sequence
// in a title can clear the screen or recolour it, and a newline can start a
// line that looks like another hit or commit. Every human printer passes
// such text through EscapeLine (one-line fields) or EscapeBlock (bodies and
// code, whose newlines and tabs are the content). JSON output needs none of
// this: the JSON encoder escapes control characters itself.
//
// Pure functions; safe from any thread.
#ifndef SKILLDB_CLI_TEXT_H_
#define SKILLDB_CLI_TEXT_H_

#include <string>
#include <string_view>
#include <vector>

#include "skilldb/util/text.h"

namespace skilldb::cli {

// EscapeLine (one-line fields) and EscapeBlock (multi-line fields):
// skilldb/util/text.h.
using util::EscapeBlock;
using util::EscapeLine;

// The names in `names` nearest to `word` by edit distance (insertions,
// deletions, substitutions and adjacent transpositions), for a "did you
// mean" hint: those at the smallest distance when it is at most 2 and less
// than the word's length, plus names that start with `word` (3 or more
// characters). Empty when nothing is close. In the order of `names`.
std::vector<std::string> NearestNames(std::string_view word,
                                      const std::vector<std::string>& names);

// "'a'", "'a' or 'b'", "'a', 'b' or 'c'".
std::string JoinAlternatives(const std::vector<std::string>& names);

}  // namespace skilldb::cli

#endif  // SKILLDB_CLI_TEXT_H_
