#!/usr/bin/env bash
# The installed package, as an outside project sees it: `cmake --install`
# into an empty prefix, examples/ configured with only CMAKE_PREFIX_PATH,
# built and run (shared and static engine, the verifier), and the
# pkg-config file used by a plain compiler command.
#
#   tests/install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$1"
src="$2"
work="$(mktemp -d "${TMPDIR:-/tmp}/skilldb-install-test-XXXXXX")"
trap '[[ -n "${KEEP:-}" ]] || rm -rf "$work"' EXIT
prefix="$work/prefix"

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in include/skilldb/library.h include/skilldb/json.h \
         include/skilldb/verify/verify.h lib/cmake/skilldb/skilldbConfig.cmake \
         lib/pkgconfig/skilldb.pc libexec/skilldb/skilldb_verify_worker_host \
         share/skilldb/verify/tasks/sum_dim1_fp32/task.json; do
  [[ -e "$prefix/$f" ]] || { echo "install_test: $f was not installed" >&2; exit 1; }
done
for lib in libskilldb_api libskilldb libskilldb_verify; do
  [[ -e "$prefix/lib/$lib.a" && -e "$prefix/lib/$lib.so" ]] ||
    { echo "install_test: $lib.a and $lib.so must both be installed" >&2; exit 1; }
done

# The CLI, its libtorch companion (when the build has it) and the seed.
[[ -x "$prefix/bin/skilldb" ]] || { echo "install_test: bin/skilldb was not installed" >&2; exit 1; }
if [[ -x "$build/cli/skilldb-ml" ]]; then
  [[ -x "$prefix/bin/skilldb-ml" ]] ||
    { echo "install_test: bin/skilldb-ml was not installed" >&2; exit 1; }
fi
ls "$prefix"/share/skilldb/seed/*.jsonl >/dev/null 2>&1 ||
  { echo "install_test: the seed library (share/skilldb/seed) was not installed" >&2; exit 1; }
# The installed CLI's first query creates the default library from the
# installed seed (not the source tree's), and finds a seed skill.
env -u SKILLDB_SEED_DIR -u SKILLDB_DB HOME="$work/home" XDG_DATA_HOME="$work/data" \
  "$prefix/bin/skilldb" query "softmax" --json >"$work/query.json" 2>"$work/query.err" ||
  { echo "install_test: the installed CLI's first query failed:" >&2; cat "$work/query.err" >&2; exit 1; }
grep -q "seed skills in '$(cd "$prefix/share/skilldb/seed" && pwd -P)'" "$work/query.err" ||
  { echo "install_test: the installed CLI did not seed from the installed seed:" >&2;
    cat "$work/query.err" >&2; exit 1; }
grep -q '"id"' "$work/query.json" ||
  { echo "install_test: the installed CLI's first query found nothing" >&2; exit 1; }
# The installed CLI hands `train` to the installed companion beside it (the
# lookup's third place: no $SKILLDB_ML, not the build tree's).
if [[ -x "$prefix/bin/skilldb-ml" ]]; then
  env -u SKILLDB_ML HOME="$work/home" "$prefix/bin/skilldb" train --help \
    >"$work/train.out" 2>"$work/train.err" ||
    { echo "install_test: the installed CLI's train --help failed:" >&2; cat "$work/train.err" >&2; exit 1; }
  grep -q "skilldb train demo" "$work/train.out" ||
    { echo "install_test: the installed CLI did not hand train to skilldb-ml:" >&2;
      cat "$work/train.out" "$work/train.err" >&2; exit 1; }
fi

# Nothing but the prefix: no hint of the source or build tree.
cmake -S "$src/examples" -B "$work/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log"
cmake --build "$work/build" >"$work/build.log"

"$work/build/agent_example" "$work/lib-shared"
"$work/build/agent_example_static" "$work/lib-static"
"$work/build/verify_example" 2>"$work/verify.err"
# The installed verifier found its own worker and tasks, not the build's.
grep -q "^worker: $prefix/" "$work/verify.err" ||
  { echo "install_test: the verifier did not use the installed worker:" >&2;
    cat "$work/verify.err" >&2; exit 1; }
grep -q "^tasks: $prefix/" "$work/verify.err" ||
  { echo "install_test: the verifier did not use the installed tasks" >&2; exit 1; }

# pkg-config, relocated prefix and all.
cat >"$work/pc.cc" <<'CC'
#include "skilldb/library.h"
int main(int, char** argv) {
  auto lib = skilldb::Library::Open({.create_if_missing = true}, argv[1]);
  return lib.ok() && (*lib)->Put(skilldb::Skill::Make("a", "b")).ok() ? 0 : 1;
}
CC
flags="$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs skilldb)"
# shellcheck disable=SC2086
c++ -std=c++20 "$work/pc.cc" -o "$work/pc" $flags
LD_LIBRARY_PATH="$prefix/lib" "$work/pc" "$work/lib-pc"
echo "install_test: installed package builds and runs"
