#include "text.h"

#include <doctest/doctest.h>

namespace skilldb::cli {
namespace {

TEST_CASE("plain text, UTF-8 and backslashes print unchanged") {
  CHECK(EscapeLine("Tile the K loop") == "Tile the K loop");
  CHECK(EscapeLine("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80") ==
        "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80");
  CHECK(EscapeLine("printf(\"\\n\")") == "printf(\"\\n\")");
}

TEST_CASE("control characters in one-line text become visible escapes") {
  CHECK(EscapeLine("a\x1b[2Jb") == "a\\x1b[2Jb");
  CHECK(EscapeLine("title\n 2  9.9999  fake") == "title\\n 2  9.9999  fake");
  CHECK(EscapeLine("a\rb\tc\x7f") == "a\\rb\\tc\\x7f");
  CHECK(EscapeLine(std::string_view("a\0b", 3)) == "a\\x00b");
}

TEST_CASE("C1 controls, bidi overrides and broken UTF-8 are escaped") {
  CHECK(EscapeLine("a\xc2\x9b"
                   "2Jb") == "a\\u009b2Jb");           // CSI
  CHECK(EscapeLine("x\xe2\x80\xaey") == "x\\u202ey");  // RLO
  CHECK(EscapeLine("x\xe2\x81\xa6y") == "x\\u2066y");  // LRI
  CHECK(EscapeLine("bad\xff") == "bad\\xff");
  CHECK(EscapeLine("cut\xc3") == "cut\\xc3");
  CHECK(EscapeLine("overlong\xc0\xaf") == "overlong\\xc0\\xaf");
  CHECK(EscapeLine("surrogate\xed\xa0\x80") == "surrogate\\xed\\xa0\\x80");
}

TEST_CASE("block text keeps its lines and tabs but not other controls") {
  CHECK(EscapeBlock("line 1\n\tline 2\n") == "line 1\n\tline 2\n");
  CHECK(EscapeBlock("a\x1b]0;title\x07") == "a\\x1b]0;title\\x07");
  CHECK(EscapeBlock("over\rwrite") == "over\\rwrite");
}

TEST_CASE("a mistyped name suggests the nearest names") {
  const std::vector<std::string> commands = {"import", "export", "query",
                                             "search", "show",   "stats",
                                             "tag",    "tags",   "history"};
  CHECK(NearestNames("serch", commands) == std::vector<std::string>{"search"});
  CHECK(NearestNames("qeury", commands) == std::vector<std::string>{"query"});
  CHECK(NearestNames("improt", commands) == std::vector<std::string>{"import"});
  CHECK(NearestNames("hist", commands) == std::vector<std::string>{"history"});
  CHECK(NearestNames("xyzzy", commands).empty());
  CHECK(NearestNames("", commands).empty());
  // Two letters are no basis for a guess at a distance of two.
  CHECK(NearestNames("zz", commands).empty());
  CHECK(JoinAlternatives({"tag", "tags"}) == "'tag' or 'tags'");
}

}  // namespace
}  // namespace skilldb::cli
