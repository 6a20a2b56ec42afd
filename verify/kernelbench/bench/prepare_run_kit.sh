#!/usr/bin/env bash
# Run on the build machine (Debian 12) before run_gpu.sh: packs what
# `skilldb kernelbench run` needs on a GPU machine that has Python, torch and
# Triton but not the engine's libraries (RocksDB, ICU, SQLite, libstemmer,
# cpp-httplib): the `skilldb` CLI, the scripted OpenAI-compatible server
# (tests/llm_server), the runner's launcher and sandbox library, all from
# BUILD (default build/, made by scripts/build.sh), and the Debian shared
# libraries they load that such a machine lacks. Runtime libraries every
# glibc system has (libc, libstdc++, zlib, OpenSSL 3, lz4, zstd, bz2,
# brotli) are not packed: the GPU machine's own serve.
#
#   bash scripts/build.sh skilldb_cli scripted_llm_server skilldb_kb_launch skilldb_kb_sandbox
#   bash verify/kernelbench/bench/prepare_run_kit.sh [BUILD] [KIT_DIR]
#
# KIT_DIR (default .device/run-kit, ignored by git) gets kit.tar.xz; carry
# it with the device tool (`carry: [".device/run-kit", ".device/kb"]`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
BUILD="${1:-$ROOT/build}"
KIT="${2:-$ROOT/.device/run-kit}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/kit/bin" "$WORK/kit/lib" "$KIT"
for f in cli/skilldb tests/llm_server/scripted_llm_server verify/skilldb_kb_launch \
         verify/libskilldb_kb_sandbox.so; do
  [ -x "$BUILD/$f" ] || [ -f "$BUILD/$f" ] || { echo "missing $BUILD/$f: build it first" >&2; exit 1; }
  cp "$BUILD/$f" "$WORK/kit/bin/"
done
# The shared libraries the binaries load, but not the base system's.
keep='librocksdb|libicu|libstemmer|libcpp-httplib|libsqlite3|libgflags|libsnappy'
for b in "$WORK"/kit/bin/*; do
  ldd "$b" | awk '$3 ~ /^\// {print $3}'
done | sort -u | grep -E "$keep" | while read -r lib; do
  cp -L "$lib" "$WORK/kit/lib/"
done
(cd "$ROOT" && git rev-parse --short HEAD) > "$WORK/kit/COMMIT"
tar -C "$WORK" -cJf "$KIT/kit.tar.xz.part" kit && mv "$KIT/kit.tar.xz.part" "$KIT/kit.tar.xz"  # whole or not at all: a device call may carry it meanwhile
ls "$WORK/kit/lib"
du -sh "$KIT/kit.tar.xz"
