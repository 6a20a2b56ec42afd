"""Threads querying while another commits, and a read-only process beside
a writing one."""

import json
import subprocess
import sys
import threading

import pytest

import skilldb
from conftest import make_skill


def test_threads_query_whole_versions_while_a_thread_commits(lib):
    base = lib.version
    n_commits = 20
    errors, results = [], []

    def reader():
        seen = []
        try:
            for _ in range(150):
                r = lib.query("concurrency marker", k=100)
                seen.append((r.version, sorted(h.id for h in r.hits)))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        results.append(seen)

    def writer():
        for i in range(n_commits):
            lib.put(make_skill(f"c{i:02d}", f"Concurrency marker {i}",
                               "concurrency marker words"))

    threads = [threading.Thread(target=reader) for _ in range(4)]
    threads.append(threading.Thread(target=writer))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for seen in results:
        versions = [v for v, _ in seen]
        assert versions == sorted(versions)  # never goes back in time
        for version, ids in seen:
            # Exactly the skills committed up to that version: a query never
            # sees half a commit.
            assert ids == [f"c{i:02d}" for i in range(version - base)]
    assert lib.version == base + n_commits


READER = r"""
import json, sys
sys.path[:0] = json.loads(sys.argv[2])
import skilldb
lib = skilldb.open(sys.argv[1], read_only=True)
out = {"version": lib.version, "hits": [h.id for h in lib.query("beside", k=10)]}
try:
    lib.put(skilldb.Skill("x", "x"))
except skilldb.Error as e:
    out["write"] = e.code
try:
    skilldb.open(sys.argv[1], lock_timeout_ms=50)
except skilldb.Error as e:
    out["second_writer"] = e.code
print(json.dumps(out))
"""


def test_a_read_only_process_reads_beside_the_writer(lib, lib_path):
    lib.put(make_skill("beside-1", "Beside one", "beside words"))

    def read():
        out = subprocess.run([sys.executable, "-c", READER, lib_path, json.dumps(sys.path)],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    first = read()
    assert first["hits"] == ["beside-1"]
    assert first["write"] == "failed_precondition"
    assert first["second_writer"] == "unavailable"  # the writer holds the lock
    lib.put(make_skill("beside-2", "Beside two", "beside words again"))
    second = read()
    assert second["version"] == first["version"] + 1
    assert sorted(second["hits"]) == ["beside-1", "beside-2"]


def test_asyncio_queries_run_in_worker_threads(lib):
    import asyncio

    import skilldb.aio

    async def main():
        alib = skilldb.aio.AsyncLibrary(lib)
        texts = ["shared memory", "warp", "float4"] * 10
        results = await asyncio.gather(*(alib.query(t) for t in texts))
        return texts, results

    texts, results = asyncio.run(main())
    assert [r.hits[0].id for r in results] == [lib.query(t).hits[0].id for t in texts]
    with pytest.raises(skilldb.NotFoundError):
        asyncio.run(skilldb.aio.AsyncLibrary(lib).get("absent"))
