#!/usr/bin/env bash
# Prints the CMake options that put ccache in front of the C, C++ and CUDA
# compilers for a checkout (scripts/build.sh and scripts/fuzz.sh use it), or
# options that clear the launchers when ccache is absent or SKILLDB_CCACHE=0.
# Usage: scripts/ccache_flags.sh ROOT
#
# The settings travel in the launcher itself (`env ... ccache`), so a later
# `ninja` in the build directory caches the same way without this script:
#   CCACHE_BASEDIR=ROOT   paths under the checkout enter the keys relative
#   CCACHE_NOHASHDIR=1    the working directory does not enter them
#   CCACHE_MAXSIZE        the cache's bound (default 5G)
set -euo pipefail
root="${1:?usage: ccache_flags.sh ROOT}"
langs=(C CXX CUDA)
if [[ "${SKILLDB_CCACHE:-1}" == 0 ]] || ! command -v ccache >/dev/null; then
  for lang in "${langs[@]}"; do echo "-DCMAKE_${lang}_COMPILER_LAUNCHER="; done
  exit 0
fi
launcher="env;CCACHE_BASEDIR=$root;CCACHE_NOHASHDIR=1;CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G};$(command -v ccache)"
for lang in "${langs[@]}"; do echo "-DCMAKE_${lang}_COMPILER_LAUNCHER=$launcher"; done
