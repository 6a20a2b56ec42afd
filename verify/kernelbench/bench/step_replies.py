#!/usr/bin/env python3
"""The scripted model of step_bench.sh: reply rules for the scripted
OpenAI-compatible server (tests/llm_server) that answer a step's requests
with a fixed mix of the study's answers (answers/), each made distinct.

  python3 step_replies.py ANSWERS_DIR cuda|triton SAMPLES TURNS > replies.jsonl

Level-1 problem 12 gets the mix below, interleaved so that any first N
requests carry it in its shares; problem 40 gets its fast answer. Every
answer carries "{{serial}}" (the server's `numbered` replies turn it into
the request's serial) inside the kernel's own source, where it changes
what is compiled (a CUDA source string, a Triton kernel's body): no two
answers share a build, as a model's answers do not.
"""
import json
import os
import re
import sys

# Problem 12's share of each answer (CUDA); they sum to 1.
MIX_12_CUDA = [
    ("l1p12_cuda_correct", 0.30), ("l1p12_cuda_slow", 0.15), ("l1p12_cuda_wrong", 0.15),
    ("l1p12_cuda_half_precision", 0.05), ("l1p12_cuda_compile_error", 0.05),
    ("l1p12_torch_only", 0.05), ("l1p12_hack_side_stream", 0.05),
    ("l1p12_hack_inputs_modified", 0.04), ("l1p12_hack_pointer_cache", 0.04),
    ("l1p12_hack_thread", 0.04), ("l1p12_hack_timer_patch", 0.04),
    ("l1p12_hack_lazy_subclass", 0.04),
]
P12, P40 = "A.unsqueeze(1) * B", "self.ln(x)"


def distinct(code, name):
    """code with a "{{serial}}" comment where it changes the build."""
    if 'r"""\n' in code:
        return code.replace('r"""\n', 'r"""\n// variant {{serial}}\n', 1)
    m = re.search(r"@triton\.jit\s*\ndef [^\n]*:\n", code)
    if m:
        return code[:m.end()] + "    # variant {{serial}}\n" + code[m.end():]
    if "torch_only" in name:
        return "# variant {{serial}}\n" + code  # nothing is built: the answer alone differs
    raise SystemExit("step_replies: cannot make %s distinct" % name)


def answer(answers, name):
    code = open(os.path.join(answers, name + ".py")).read()
    return "Here is my kernel.\n```python\n%s```\n" % distinct(code, name)


def main():
    answers, fmt, samples, turns = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    requests = samples * turns  # one request per sample and turn, per problem
    rules = []
    if fmt == "cuda":
        mix, fast40 = MIX_12_CUDA, "l1p40_cuda_correct"
    elif fmt == "triton":
        mix, fast40 = [("l1p12_triton_correct", 1.0)], "l1p40_triton_correct"
    else:
        raise SystemExit("step_replies: format is cuda or triton")
    # Interleaved: every prefix of the requests carries the mix in its
    # shares (each request goes to the answer furthest behind its share),
    # so a step cut short still judges the whole mix, not its first rules.
    texts = [answer(answers, name) for name, _ in mix]  # each file read once
    given = [0] * len(mix)
    for k in range(requests):
        i = max(range(len(mix)), key=lambda j: mix[j][1] * (k + 1) - given[j])
        given[i] += 1
        if rules and rules[-1][3] == i:
            rules[-1] = (P12, rules[-1][1], rules[-1][2] + 1, i)
        else:
            rules.append((P12, texts[i], 1, i))
    rules = [r[:3] for r in rules]
    # The last rule of each problem answers whatever is left (-1: every
    # request), so a longer run never falls through to the default text.
    rules[-1] = (P12, rules[-1][1], -1)
    rules.append((P40, answer(answers, fast40), -1))
    for contains, text, times in rules:
        print(json.dumps({"endpoint": "any", "prompt_contains": contains, "texts": [text],
                          "times": times, "numbered": True}))


if __name__ == "__main__":
    main()
