#!/usr/bin/env python3
"""How many answers of a directory kb_split splits, and why not the rest.

  python3 split_corpus.py DIR [--list-ok FILE]

Reads every DIR/*.py as Python, takes its string literals that hold a
`__global__` kernel (what an answer passes to load_inline as cuda_sources,
when written literally) and splits each; an answer counts as split when
all of them split. Pure Python (no torch, no compiler): whether the parts
build is build_split.py's question.
"""
import argparse
import ast
import collections
import glob
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runner"))
import kb_split  # noqa: E402


def cuda_strings(text):
    tree = ast.parse(text)
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and "__global__" in n.value]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--list-ok", help="write the paths of the answers that split here")
    args = ap.parse_args()
    reasons = collections.Counter()
    ok = []
    files = sorted(glob.glob(os.path.join(args.dir, "*.py")))
    for path in files:
        try:
            sources = cuda_strings(open(path, encoding="utf-8", errors="replace").read())
        except SyntaxError:
            reasons["not Python (a syntax error)"] += 1
            continue
        if not sources:
            reasons["no literal string with a __global__ kernel"] += 1
            continue
        try:
            for s in sources:
                kb_split.split(s, "corpus")
            ok.append(path)
        except kb_split.Unsplittable as e:
            # Names differ between answers; the reason is what counts.
            why = re.sub(r"\bkernel \w+ (has|is|are)\b", r"kernel K \1", str(e))
            reasons[re.sub(r"\ba launch of \w+,", "a launch of NAME,", why)] += 1
        except Exception as e:  # the splitter's fault: counted, never hidden
            reasons["the splitter failed: %s" % type(e).__name__] += 1
    print("%d answers, %d split" % (len(files), len(ok)))
    for why, n in reasons.most_common():
        print("%5d  not split: %s" % (n, why))
    if args.list_ok:
        with open(args.list_ok, "w") as f:
            f.write("\n".join(ok) + "\n")


if __name__ == "__main__":
    main()
