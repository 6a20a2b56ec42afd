"""Python binding overhead per query: the same query N times through
skilldb.Library.query (a Python loop) and through skilldb._skilldb._bench_query (the
C++ loop inside the module, no Python per call). Prints one JSON line.

usage: python_overhead.py LIBRARY [N]   (PYTHONPATH=build/python)
"""

import json
import sys
import time

import skilldb


def main():
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    lib = skilldb.open(path, read_only=True)
    queries = ["shared memory tiling", "warp shuffle reduction", "tensor core mma"]
    out = {"n": n}
    for text in queries:
        lib.query(text)  # warm caches
    cpp = py = 0.0
    for text in queries:
        cpp += skilldb._skilldb._bench_query(lib, text, n)
        start = time.perf_counter()
        for _ in range(n):
            lib.query(text)
        py += time.perf_counter() - start
    calls = n * len(queries)
    out["cpp_us_per_query"] = cpp / calls * 1e6
    out["python_us_per_query"] = py / calls * 1e6
    out["overhead_us_per_query"] = (py - cpp) / calls * 1e6
    print(json.dumps(out))


if __name__ == "__main__":
    main()
