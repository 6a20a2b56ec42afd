#!/usr/bin/env bash
# Builds the Python wheel (pyproject.toml, scikit-build-core) and checks it
# installed in a fresh virtual environment: the module imports from
# site-packages, the library and concurrency tests of python/tests pass
# against it, and its Verifier runs the host worker and the tasks the wheel
# carries. Usage: scripts/python_wheel.sh [OUT_DIR]   (default: dist/)
# The build folder is build-pip/, configured as scripts/build.sh configures
# build/ (same depth, flags and compiler cache), so what build/ compiled is
# reused; scripts/setup.sh installs the build requirements into build/pydeps.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/dist}"
pydeps="$root/build/pydeps"
mapfile -t launchers < <(bash "$root/scripts/ccache_flags.sh" "$root")
cmake -S "$root" -B "$root/build-pip" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSKILLDB_BUILD_PYTHON=ON -DSKILLDB_BUILD_TESTS=OFF -DSKILLDB_BUILD_BENCHMARKS=OFF \
  -DSKILLDB_WERROR=ON "${launchers[@]}" >/dev/null
cmake --build "$root/build-pip" -j "${SKILLDB_JOBS:-$(nproc)}" --target skilldb_python >&2
mkdir -p "$out"
PYTHONPATH="$pydeps" /usr/bin/python3 -m pip wheel "$root" --no-build-isolation --no-deps \
  -q -w "$out" --config-settings=build-dir=build-pip >&2
wheel="$(ls -t "$out"/skilldb-*.whl | head -n 1)"
venv="$(mktemp -d)"
trap 'rm -rf "$venv"' EXIT
/usr/bin/python3 -m venv "$venv"
"$venv/bin/pip" install -q --no-deps "$wheel"
cd "$venv"
PYTHONPATH="$pydeps" "$venv/bin/python" - "$root" <<'PY'
import sys
import skilldb
assert skilldb.__file__.startswith(sys.prefix), skilldb.__file__
root = sys.argv[1]
v = skilldb.Verifier("host")
src = open(f"{root}/verify/tasks/sum_dim1_fp32/candidates/fast.cc").read()
r = v.verify("sum_dim1_fp32", src, rounds=1)
assert r.compiled and r.correct, r.to_json()
print(f"python_wheel: {skilldb.__file__}: {len(v.tasks())} tasks, "
      f"host verifier: compiled, correct, {r.speedup:.2f}x in one round", file=sys.stderr)
PY
PYTHONPATH="$pydeps" SKILLDB_BUILD_DIR="$root/build" "$venv/bin/python" -m pytest -q \
  -p no:cacheprovider --rootdir "$root" "$root/python/tests/test_library.py" \
  "$root/python/tests/test_concurrency.py" >&2
echo "$wheel"
