#!/usr/bin/env bash
# clang-tidy (14) over skilldb's own sources with the checks in .clang-tidy
# (bugprone-*, performance-*). Configures build-tidy/ (one object per source,
# no unity batches, so every file is checked as itself; nothing is built) and
# runs clang-tidy on every .cc of the modules, or on the FILES given.
# Usage: scripts/tidy.sh [FILE...]    Exit 1 when a check reports.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build-tidy"
CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DSKILLDB_UNITY=OFF -DSKILLDB_BUILD_CUDA=OFF \
  -DSKILLDB_BUILD_BENCHMARKS=ON >/dev/null
files=("$@")
if ((${#files[@]} == 0)); then
  mapfile -t files < <(cd "$root" && git ls-files '*.cc' | grep -E \
    '^(api|libskilldb|retrieval|llm|models|rerank|policy|summarize|trainer|verify|cli|server|python)/' |
    grep -v '/tasks/' | sed "s|^|$root/|")
fi
out="$build/tidy.log"
run-clang-tidy-14 -p "$build" -quiet -j "${SKILLDB_JOBS:-$(nproc)}" "${files[@]}" > "$out" 2>&1 || true
# One line per finding (a header's finding is reported once, not per file
# that includes it), colours stripped.
findings="$build/findings.txt"
sed 's/\x1b\[[0-9;]*m//g' "$out" | grep -E ': (warning|error): ' | sort -u > "$findings" || true
head -200 "$findings"
count=$(wc -l < "$findings")
echo "tidy.sh: $count findings in ${#files[@]} files (all: $findings, log: $out)" >&2
[[ "$count" == 0 ]]
