#!/usr/bin/env bash
# Counts the homes of the small helpers issue 33 §1 gathered into
# api/include/skilldb/util/, in the checkout it runs from (or in REV, read
# with git grep). Usage: scripts/helper_dups.sh [REV]
# Each line: what, how many product files (tests and benchmarks left out)
# define it, and where.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rev=("$@")
count() {  # what, git-grep arguments...
  local what="$1"; shift
  local files
  files="$(git grep -l -E "$@" "${rev[@]}" -- '*.h' '*.cc' ':!tests/' \
           ':!benchmarks/' ':!*/bench/*' ':!*_test.cc' |
           sed 's/^[^:]*://' | sort -u)"
  printf '%-28s %2d  %s\n' "$what" "$(grep -c . <<<"$files" || true)" \
    "$(tr '\n' ' ' <<<"$files")"
}
count "SHA-256 implementations" '^class Sha256\b'
count "whole-file readers" \
  '^(Result<std::string>|std::string) (ReadWholeFile|ReadFile|ReadText)\('
count "typed JSON field readers" \
  '^class (FieldReader|Reader|BasicFieldReader)\b|^using Reader = std::function'
count "lossy JSON dumps" 'error_handler_t::replace'
count "SQLite statement wrappers" 'sqlite3_prepare_v2'
count "sidecar path makers" "p\\.back\\(\\) == '/'"
count "NowMs clocks" '^(inline )?int64_t (NowMs|NowUnixMs)\(\)'
count "the 1.05 threshold" '= 1\.05;'
