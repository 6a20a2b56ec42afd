#!/usr/bin/env bash
# README command 1: install what is missing, build, create the default library
# from data/seed on first use, and search it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
build="$(bash "$root/scripts/build.sh" | tail -n 1)"
"$build/cli/skilldb" query "shared-memory tiling"
