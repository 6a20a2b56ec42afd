// Text from models, users and compilers on its way to a terminal or into a
// prompt: escaping what a terminal would act on, screening what must not
// carry control characters, and fencing quoted text so it cannot end its
// fence. Part of the helpers skilldb's modules share (skilldb/util/),
// compiled into skilldb_api. Pure functions: safe from any thread.
#ifndef SKILLDB_UTIL_TEXT_H_
#define SKILLDB_UTIL_TEXT_H_

#include <string>
#include <string_view>

namespace skilldb::util {

// `text` with every character a terminal would act on made visible:
// C0 controls and DEL as \n, \r, \t, \e-style "\x1b"; C1 controls and the
// Unicode bidirectional overrides and isolates (which reorder what follows
// them) as "\u202e"; bytes that are not UTF-8 as "\xff". Everything else,
// backslashes included, is kept, so ordinary text prints unchanged.
std::string EscapeLine(std::string_view text);

// As EscapeLine, but newlines and tabs are kept: for multi-line fields
// (body, code, verifier output).
std::string EscapeBlock(std::string_view text);

// The first character of `text` a terminal or a reader would not see as
// text: a C0 control (except newline and tab when `allow_lines`), DEL, a C1
// control, a bidirectional override or isolate, or a byte that is not
// UTF-8, described for a message ("ESC (0x1b) at byte 6"); "" when there is
// none.
std::string FindControlCharacter(std::string_view text, bool allow_lines);

// A run of backticks that no line of `text` can close: one longer than the
// longest run of backticks in it, at least three (CommonMark's rule for
// fenced code blocks).
std::string FenceFor(std::string_view text);

// `text` inside a fenced block whose fence it cannot close, with `info` as
// the info string ("cuda", "markdown"): fence + info + "\n" + text + "\n"
// + fence.
std::string FencedBlock(std::string_view info, std::string_view text);

// `text` on one line: newlines, tabs and other controls become spaces,
// bidirectional overrides are dropped. For titles and ids inside a prompt's
// heading line, where a newline would start a section of its own.
std::string OneLine(std::string_view text);

}  // namespace skilldb::util

#endif  // SKILLDB_UTIL_TEXT_H_
