#!/usr/bin/env bash
# Run on the build machine (Debian, scripts/setup.sh done) before a GPU run:
# copies the header-only dependencies the GPU machine lacks (nlohmann-json,
# doctest and its CMake helpers) into .verify-deps/ at the repository root,
# the folder verify/ and models/ standalone builds fall back on. The folder
# is untracked and not ignored, so the device tool copies it along.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DEPS="$ROOT/.verify-deps"
mkdir -p "$DEPS/include" "$DEPS/cmake"
cp -r /usr/include/nlohmann /usr/include/doctest "$DEPS/include/"
cp /usr/lib/cmake/doctest/doctest.cmake /usr/lib/cmake/doctest/doctestAddTests.cmake "$DEPS/cmake/"
du -sh "$DEPS"
