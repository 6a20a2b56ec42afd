#!/usr/bin/env bash
# Assembles the folder gpu_study.sh reads on the GPU machine, here (Debian,
# scripts/setup.sh done):
#   prepare_kbwork.sh KERNELBENCH_GIT_DIR DEST [COMMIT]
# KERNELBENCH_GIT_DIR is a clone of ScalingIntelligence/KernelBench (its
# HEAD is exported; nothing of it is committed here). DEST must be ignored
# by git in the checkout the device tool copies (e.g. /work/main/.device/kb,
# carried with `carry: [".device/kb"]`). COMMIT (default HEAD) is the commit
# of this repository whose api/ cmake/ verify/ go to DEST/src: the GPU
# machine builds verify/ standalone from it.
set -euo pipefail
KBGIT="$1"
DEST="$2"
COMMIT="${3:-HEAD}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
rm -rf "$DEST"
mkdir -p "$DEST"/{src,kb,whl,stubs,deps/include,deps/cmake}
git -C "$ROOT" archive "$COMMIT" api cmake verify | tar -x -C "$DEST/src"
git -C "$ROOT" rev-parse --short "$COMMIT" > "$DEST/src/COMMIT"
git --git-dir="$KBGIT" archive HEAD src KernelBench/level1 KernelBench/level2 \
  scripts/run_and_check.py | tar -x -C "$DEST/kb"
git --git-dir="$KBGIT" rev-parse HEAD > "$DEST/kb/COMMIT"
# Header-only dependencies the GPU machine lacks (as models/bench/prepare_deps.sh).
cp -r /usr/include/nlohmann /usr/include/doctest "$DEST/deps/include/"
cp /usr/lib/cmake/doctest/doctest.cmake /usr/lib/cmake/doctest/doctestAddTests.cmake \
  "$DEST/deps/cmake/"
# KernelBench's package imports pydantic (the GPU machine lacks it; its
# Python is 3.12).
for spec in pydantic==2.11.7 pydantic-core==2.33.2 annotated-types==0.7.0 typing-inspection==0.4.1; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$DEST/whl" "$spec"
done
# utils.py imports these LLM clients at module level; evaluation never
# calls them.
echo 'def load_dotenv(*a, **k): return False' > "$DEST/stubs/dotenv.py"
printf 'class OpenAI:  # stand-in: KernelBench evaluation never calls it\n    def __init__(self, *a, **k): raise RuntimeError("no LLM client here")\n' \
  > "$DEST/stubs/openai.py"
echo 'def completion(*a, **k): raise RuntimeError("no LLM client here")' > "$DEST/stubs/litellm.py"
du -sh "$DEST"
