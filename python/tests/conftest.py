"""Fixtures of the Python suite: temporary libraries, and `skilldb serve`
started as a real process on a free loopback port.

The suite imports the module from the build tree (scripts/test.sh sets
PYTHONPATH=build/python) or from an installed wheel; the server tests need
the CLI: $SKILLDB_CLI, else build/cli/skilldb.
"""

import json
import os
import pathlib
import signal
import subprocess

import pytest

import skilldb

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("SKILLDB_BUILD_DIR", REPO / "build"))


def make_skill(sid, title, body, **kw):
    return skilldb.Skill(sid, title, summary="How to " + title.lower(), body=body,
                         code=kw.pop("code", "__global__ void k(float* x) {}"),
                         tags=kw.pop("tags", ["cuda"]), ops=kw.pop("ops", ["elementwise"]),
                         **kw)


SKILLS = [
    ("smem-tiling", "Shared memory tiling",
     "Tile the K loop of a matrix product through shared memory so each element "
     "is read once per block."),
    ("warp-reduce", "Warp shuffle reduction",
     "Reduce across a warp with __shfl_down_sync, with no shared memory."),
    ("vector-loads", "Vectorized loads",
     "Load float4 values to issue fewer memory transactions."),
]


def report_dict(task="sum_dim1_fp32", speedup=2.0, passed=True):
    """A verification report as a verifier writes it (recorded elsewhere:
    what propose(report=...) replays)."""
    rounds = [{"baseline_ms": [2.0], "candidate_ms": [2.0 / speedup],
               "baseline_median_ms": 2.0, "candidate_median_ms": 2.0 / speedup,
               "speedup_ratio": speedup} for _ in range(3)]
    return {"verifier": "recorded", "verifier_version": "1", "device": "elsewhere",
            "device_class": "host", "task": task, "candidate_hash": "",
            "compiled": True, "compile_log": "",
            "correctness": {"checked": True, "passed": True, "trials": 4,
                            "max_abs_error": 0.0, "max_rel_error": 0.0, "errors": []},
            "rounds": rounds,
            "speedup": {"ratio": speedup, "ci_low": speedup * 0.95,
                        "ci_high": speedup * 1.05, "confidence": 0.95},
            "passed": passed, "reasons": [], "finished_at_ms": 1764800000000}


@pytest.fixture
def lib_path(tmp_path):
    return str(tmp_path / "lib")


@pytest.fixture
def lib(lib_path):
    library = skilldb.open(lib_path, create=True, sync_commits=False)
    library.put_many([make_skill(*s) for s in SKILLS], message="three skills")
    yield library
    library.close()


def cli_path():
    path = os.environ.get("SKILLDB_CLI") or str(BUILD / "cli" / "skilldb")
    if not os.path.exists(path):
        pytest.fail(f"the skilldb CLI is not built at {path} (scripts/build.sh skilldb_cli)")
    return path


class Served:
    """A `skilldb serve` process; .url, .stop()."""

    def __init__(self, db, *args):
        cmd = [cli_path(), "--db", db, "--json", "serve", "--listen", "127.0.0.1:0",
               "--quiet", *args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read()
            raise RuntimeError(f"skilldb serve did not start: {err}")
        info = json.loads(line)
        self.url = info["url"]
        self.port = info["port"]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@pytest.fixture
def serve():
    """serve(db, *args) -> Served; every server is stopped at the end."""
    started = []

    def start(db, *args):
        s = Served(db, *args)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


@pytest.fixture
def seeded_path(lib_path):
    """A library with the three skills, closed (for a server to open)."""
    with skilldb.open(lib_path, create=True, sync_commits=False) as library:
        library.put_many([make_skill(*s) for s in SKILLS], message="three skills")
    return lib_path


def host_candidate(name="fast.cc"):
    return (REPO / "verify" / "tasks" / "sum_dim1_fp32" / "candidates" / name).read_text()
