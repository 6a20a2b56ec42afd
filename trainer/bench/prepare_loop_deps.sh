#!/usr/bin/env bash
# Run on the build machine (Debian 12) before trainer/bench/train_loop_gpu.sh:
# the RL loop needs the engine's libraries (RocksDB, SQLite, ICU, libstemmer,
# cpp-httplib, CLI11, ...) that the GPU machine (Ubuntu 24.04, torch wheel)
# lacks. Downloads their Debian packages (headers, CMake and pkg-config
# files, shared libraries), unpacks them into one folder and packs it as
# .loop-deps.tar.xz at the repository root (untracked; carry it to the GPU
# machine). Documentation is left out. Runtime
# libraries the GPU machine has itself (zlib, bz2, lz4, zstd, brotli,
# OpenSSL) are not packed: the other machine's script points the
# development links at its own copies.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
PACKAGES=(
  librocksdb-dev librocksdb7.8 libgflags-dev libgflags2.2 libsnappy-dev libsnappy1v5
  zlib1g-dev libbz2-dev liblz4-dev libzstd-dev libsqlite3-dev libsqlite3-0
  libicu-dev libicu72 libstemmer-dev libstemmer0d libcli11-dev doctest-dev
  nlohmann-json3-dev libcpp-httplib-dev libcpp-httplib0.11 libssl-dev libbrotli-dev
)
(cd "$WORK" && apt-get download "${PACKAGES[@]}" > /dev/null)
mkdir -p "$WORK/root"
for deb in "$WORK"/*.deb; do dpkg -x "$deb" "$WORK/root"; done
rm -rf "$WORK/root/usr/share/doc" "$WORK/root/usr/share/man" "$WORK/root/usr/share/lintian"
# Static libraries stay: the packages' CMake files check that every file they
# name exists (gflags' static target, RocksDB's).
tar -C "$WORK" -cJf "$ROOT/.loop-deps.tar.xz" root
du -sh "$WORK/root" "$ROOT/.loop-deps.tar.xz"
