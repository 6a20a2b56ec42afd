#!/usr/bin/env bash
# The KernelBench study on a GPU machine: imports the problems, runs
# KernelBench's own harness (kb_harness.py) and `skilldb_kernelbench eval`
# (this verifier's protocol, then KernelBench's protocol reproduced) on the
# answers in answers/, and writes the agreement table and the throughput.
#
#   verify/kernelbench/bench/gpu_study.sh PHASES
#
# PHASES (comma separated): smoke (three answers through this verifier,
# one through KernelBench's harness), study (all answers through both,
# agreement, throughput).
#
# It reads a prepared folder (KBW, default .kbwork) carried to the machine:
#   KBW/bin/      skilldb_kernelbench, skilldb_kb_launch, libskilldb_kb_sandbox.so
#   KBW/runner/   verify/kernelbench/runner/*.py
#   KBW/kb/       the user's KernelBench checkout (src/ and KernelBench/ levels)
#   KBW/whl/      wheels the machine lacks (pydantic for KernelBench's package)
#   KBW/stubs/    stand-ins for KernelBench's LLM clients (openai, litellm,
#                 dotenv): imported by its utils.py, never called by eval
# Results go to $OUT (summary.md, summary.json, logs.tgz).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
HERE="$ROOT/verify/kernelbench/bench"
KBW="${KBW:-$ROOT/.kbwork}"
OUT="${OUT:-/tmp/kb-study-out}"
RUN="${RUN:-/tmp/kb-study}"
PHASES="${1:-smoke}"
mkdir -p "$OUT" "$RUN"
has() { [[ ",$PHASES," == *",$1,"* ]]; }
stamp() { echo "[$(date +%H:%M:%S) +${SECONDS}s] $*"; }
now() { date +%s.%N; }

python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site "$KBW"/whl/*.whl >/dev/null 2>&1 || echo "wheels: none installed"
export PYTHONPATH="/tmp/site:$KBW/stubs:$KBW/kb/src${PYTHONPATH:+:$PYTHONPATH}"
export SKILLDB_KB_RUNNER_DIR="$KBW/runner"
export SKILLDB_KB_LAUNCH="$KBW/bin/skilldb_kb_launch"
export SKILLDB_KB_SANDBOX_LIB="$KBW/bin/libskilldb_kb_sandbox.so"
export SKILLDB_KB_STORE="$RUN/store"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
KB="$KBW/bin/skilldb_kernelbench"
chmod +x "$KBW"/bin/* 2>/dev/null
stamp "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(nproc) cores"
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'

stamp "import"
"$KB" import "$KBW/kb/KernelBench" --level 1 --problems 12,40 --json > "$RUN/import1.json" 2> "$RUN/import1.log"
"$KB" import "$KBW/kb/KernelBench" --level 2 --problems 76 --json > "$RUN/import2.json" 2> "$RUN/import2.log"
tail -3 "$RUN/import1.log" "$RUN/import2.log"

# A run directory in KernelBench's layout from the manifest, and the map
# back to answer files.
gen_rundir() {  # gen_rundir DIR [ONLY]
  python3 - "$1" "${2:-}" "$HERE/answers" <<'EOF'
import json, os, shutil, sys
out, only, answers = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
keep = set(only.split(",")) if only else None
samples, mapping = {}, []
for a in json.load(open(os.path.join(answers, "manifest.json")))["answers"]:
    if keep and a["file"] not in keep:
        continue
    key = (a["level"], a["problem"])
    s = samples.get(key, 0)
    samples[key] = s + 1
    shutil.copy(os.path.join(answers, a["file"]),
                os.path.join(out, "level_%d_problem_%d_sample_%d_kernel.py" % (key[0], key[1], s)))
    mapping.append({"file": a["file"], "level": key[0], "problem": key[1], "sample": s})
json.dump(mapping, open(os.path.join(out, "map.json"), "w"), indent=1)
EOF
}

study() {  # study NAME ONLY WORKERS
  local name="$1" only="$2" dir="$RUN/$1"
  gen_rundir "$dir/run" "$only"
  mv "$dir/run/map.json" "$dir/map.json"
  stamp "$name: KernelBench's harness"
  python3 "$HERE/kb_harness.py" --kb-root "$KBW/kb" --manifest "$HERE/answers/manifest.json" \
    --answers "$HERE/answers" --out "$dir/kb.json" --workers 12 --gpu-arch Hopper \
    --build-root "$dir/kb-build" ${only:+--only "$only"} > "$dir/kb.log" 2>&1
  tail -4 "$dir/kb.log"
  stamp "$name: skilldb_kernelbench eval (skilldb protocol)"
  local t0; t0=$(now)
  "$KB" eval "$dir/run" --cache "$dir/cache" --results "$dir/ours.jsonl" --json \
    > "$dir/ours.json" 2> "$dir/ours.log"
  local ours_wall; ours_wall=$(python3 -c "print($(now) - $t0)")
  tail -3 "$dir/ours.log"
  stamp "$name: skilldb_kernelbench eval --protocol kernelbench (builds cached)"
  t0=$(now)
  "$KB" eval "$dir/run" --cache "$dir/cache" --results "$dir/ours-kb.jsonl" --protocol kernelbench \
    --json > "$dir/ours-kb.json" 2> "$dir/ours-kb.log"
  local kbp_wall; kbp_wall=$(python3 -c "print($(now) - $t0)")
  tail -2 "$dir/ours-kb.log"
  python3 "$HERE/kb_agreement.py" --manifest "$HERE/answers/manifest.json" --map "$dir/map.json" \
    --kb "$dir/kb.json" --ours "$dir/ours.json" --ours-kb "$dir/ours-kb.json" \
    --ours-wall "$ours_wall" --ours-kb-wall "$kbp_wall" \
    --out-md "$OUT/$name.md" --out-json "$OUT/$name.json"
}

if has smoke; then
  # This verifier on three answers (CUDA, Triton, a hack), then KernelBench's
  # harness on one Triton answer (nothing to build): the paths work.
  dir="$RUN/smoke"
  gen_rundir "$dir/run" "l1p12_cuda_correct.py,l1p12_triton_correct.py,l1p12_hack_side_stream.py"
  stamp "smoke: skilldb_kernelbench eval"
  "$KB" eval "$dir/run" --cache "$dir/cache" --results "$dir/ours.jsonl" --json \
    > "$OUT/smoke_ours.json" 2> "$dir/ours.log"
  cat "$dir/ours.log"
  stamp "smoke: KernelBench's harness on one answer"
  python3 "$HERE/kb_harness.py" --kb-root "$KBW/kb" --manifest "$HERE/answers/manifest.json" \
    --answers "$HERE/answers" --out "$OUT/smoke_kb.json" --workers 2 --gpu-arch Hopper \
    --build-root "$dir/kb-build" --only l1p12_triton_correct.py --no-ref-times > "$dir/kb.log" 2>&1
  tail -5 "$dir/kb.log"
fi
if has study; then
  study study ""
fi
tar -czf "$OUT/logs.tgz" -C "$RUN" --exclude='*/cache' --exclude='*/kb-build' --exclude='store' . 2>/dev/null
stamp "done"
