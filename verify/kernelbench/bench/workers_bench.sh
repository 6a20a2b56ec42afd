#!/usr/bin/env bash
# Answers a minute of `skilldb_kernelbench eval` with one evaluator and with
# several on one device (`--workers`), side by side in one run. On a
# machine without a GPU (DEVICE=cpu, the default) the problem is a scale-add
# over N floats and the answers its C++ kernel through load_inline
# (cpp_sources), as the host tests write them; each answer carries its own
# comment, so each is judged (the build is shared and made once, ahead).
# The settings alternate over ROUNDS rounds, each on a fresh results file;
# the medians and their ratio are printed last.
#
#   bash verify/kernelbench/bench/workers_bench.sh [BUILD]
#
# BUILD (default build/) holds skilldb_kernelbench, skilldb_kb_launch and
# libskilldb_kb_sandbox.so (scripts/build.sh skilldb_kernelbench
# skilldb_kb_launch skilldb_kb_sandbox). Environment: ANSWERS (12), N
# (1048576), ROUNDS (3), WORKERS ("1 2"), PYTHON (/usr/bin/python3 if there,
# else python3: it needs torch), DEVICE (cpu), OUT (a temporary folder).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
BUILD="${1:-$ROOT/build}"
KB="$BUILD/verify/skilldb_kernelbench"
[ -x "$KB" ] || KB="$BUILD/skilldb_kernelbench"
[ -x "$KB" ] || { echo "no skilldb_kernelbench in $BUILD" >&2; exit 1; }
ANSWERS="${ANSWERS:-12}"
N="${N:-1048576}"
ROUNDS="${ROUNDS:-3}"
WORKERS="${WORKERS:-1 2}"
DEVICE="${DEVICE:-cpu}"
PY="${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)}"
OUT="${OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
. "$ROOT/verify/kernelbench/bench/runner_env.sh"
kb_runner_env "$ROOT/verify/kernelbench/runner" "$(dirname "$KB")"
export OPENBLAS_NUM_THREADS=1

"$PY" - "$OUT" "$ANSWERS" "$N" <<'EOF'
import os, sys
out, answers, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(os.path.join(out, "KernelBench", "level1"), exist_ok=True)
open(os.path.join(out, "KernelBench", "level1", "1_Scale_add.py"), "w").write(f'''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        return self.alpha * x + y

N = {n}

def get_inputs():
    return [torch.randn(N), torch.randn(N)]

def get_init_inputs():
    return [2.0]
''')
answer = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_cpp = r"""
torch::Tensor scale_add(torch::Tensor x, torch::Tensor y, double a) {
  TORCH_CHECK(x.is_contiguous() && y.is_contiguous(), "contiguous inputs");
  auto out = torch::empty_like(x);
  const float* px = x.data_ptr<float>();
  const float* py = y.data_ptr<float>();
  float* po = out.data_ptr<float>();
  const float fa = static_cast<float>(a);
  for (int64_t i = 0, n = x.numel(); i < n; ++i) po[i] = fa * px[i] + py[i];
  return out;
}
"""
ext = load_inline(name="kbw_scale_add", cpp_sources=_cpp, functions=["scale_add"],
                  extra_cflags=["-O2"])

class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        return ext.scale_add(x, y, self.alpha)
'''
run = os.path.join(out, "run")
os.makedirs(run, exist_ok=True)
for s in range(answers):
    open(os.path.join(run, "level_1_problem_1_sample_%d_kernel.py" % s), "w").write(
        "# answer %d\n" % s + answer)
EOF
common=(--store "$OUT/store" --python "$PY" --device "$DEVICE" --no-progress)
"$KB" import "$OUT/KernelBench" --level 1 "${common[@]}" > /dev/null
eval_once() {  # eval_once WORKERS RESULTS -> seconds
  local t0 t1
  t0=$(date +%s.%N)
  "$KB" eval "$OUT/run" "${common[@]}" --cache "$OUT/cache" --no-compile-baseline \
    --workers "$1" --results "$2" --json > "$2.json"
  t1=$(date +%s.%N)
  "$PY" -c "print(round($t1 - $t0, 2))"
}
# The build, once, outside the rounds (a first evaluation of one answer).
mkdir -p "$OUT/warm" && cp "$OUT/run/level_1_problem_1_sample_0_kernel.py" "$OUT/warm/"
"$KB" eval "$OUT/warm" "${common[@]}" --cache "$OUT/cache" --no-compile-baseline --json > /dev/null
declare -A times
for r in $(seq "$ROUNDS"); do
  for w in $WORKERS; do
    s=$(eval_once "$w" "$OUT/results-w$w-r$r.jsonl")
    times[$w]="${times[$w]:-} $s"
    echo "round $r, --workers $w: $ANSWERS answers in $s s"
  done
done
"$PY" - "$ANSWERS" "$OUT" $WORKERS <<EOF
import json, statistics, sys, glob
answers, out, workers = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
times = {$(for w in $WORKERS; do printf '"%s": [%s], ' "$w" "$(echo ${times[$w]} | tr ' ' ',')"; done)}
base = statistics.median(times[workers[0]])
for w in workers:
    m = statistics.median(times[w])
    verdicts = {}
    for f in glob.glob("%s/results-w%s-r*.jsonl" % (out, w)):
        for line in open(f):
            v = json.loads(line)["verdict"]
            verdicts[v] = verdicts.get(v, 0) + 1
    print("--workers %s: median %.2f s for %d answers, %.1f answers/min, %.2fx the first; verdicts %s"
          % (w, m, answers, answers * 60 / m, base / m, verdicts))
EOF
