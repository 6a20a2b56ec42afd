#!/usr/bin/env bash
# Assembles the folder gpu_study.sh reads (default: .kbwork in the checkout
# whose working tree the GPU machine receives), on this machine:
#   prepare_kbwork.sh BUILD_DIR KERNELBENCH_GIT_DIR [DEST]
# BUILD_DIR holds the built skilldb_kernelbench, skilldb_kb_launch and
# libskilldb_kb_sandbox.so; KERNELBENCH_GIT_DIR is a clone of
# ScalingIntelligence/KernelBench (its HEAD is exported; nothing of it is
# committed here). DEST must be ignored by git (.git/info/exclude).
set -euo pipefail
BUILD="$1"
KBGIT="$2"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
DEST="${3:-$ROOT/.kbwork}"
rm -rf "$DEST"
mkdir -p "$DEST"/{bin,runner,kb,whl,stubs}
cp "$BUILD"/skilldb_kernelbench "$BUILD"/skilldb_kb_launch "$BUILD"/libskilldb_kb_sandbox.so "$DEST/bin/"
strip "$DEST"/bin/skilldb_kernelbench "$DEST"/bin/skilldb_kb_launch 2>/dev/null || true
cp "$ROOT"/verify/kernelbench/runner/*.py "$DEST/runner/"
git --git-dir="$KBGIT" archive HEAD src KernelBench/level1 KernelBench/level2 | tar -x -C "$DEST/kb"
git --git-dir="$KBGIT" rev-parse HEAD > "$DEST/kb/COMMIT"
# KernelBench's package imports pydantic (the GPU machine lacks it).
for spec in pydantic==2.11.7 pydantic-core==2.33.2 annotated-types==0.7.0 typing-inspection==0.4.1; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$DEST/whl" "$spec"
done
# utils.py imports these LLM clients at module level; evaluation never
# calls them.
echo 'def load_dotenv(*a, **k): return False' > "$DEST/stubs/dotenv.py"
echo 'class OpenAI:  # stand-in: KernelBench evaluation never calls it
    def __init__(self, *a, **k): raise RuntimeError("no LLM client here")' > "$DEST/stubs/openai.py"
echo 'def completion(*a, **k): raise RuntimeError("no LLM client here")' > "$DEST/stubs/litellm.py"
du -sh "$DEST"
