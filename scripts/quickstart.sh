#!/usr/bin/env bash
# README command 1: install what the CLI needs, build the CLI alone, create
# the default library from data/seed on first use, and search it.
# `bash scripts/build.sh` (or README command 2) builds the rest: the models
# and the trainer on libtorch (the companion skilldb-ml) and the tests.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh" --cli
build="$(bash "$root/scripts/build.sh" skilldb_cli | tail -n 1)"
"$build/cli/skilldb" query "shared-memory tiling"
echo "quickstart: built the skilldb CLI only; 'bash scripts/build.sh' builds everything" \
     "(the libtorch companion skilldb-ml, the tests)" >&2
