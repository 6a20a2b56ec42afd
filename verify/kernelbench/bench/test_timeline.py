"""timeline.py on a run written here: two answers whose spans are known, so
the unions, the idle time and the waits have known values."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import timeline  # noqa: E402


def record(sample, spans, verdict="correct"):
    return {"level": 1, "problem": 12, "sample": sample, "verdict": verdict,
            "times_ms": {"spans": spans}}


# Answer 0: built 0-4 s, checked 4-5 s (shared), timed alone 5-6 s.
# Answer 1: built 1-7 s, waited for the device 7-7.5 s, checked 7.5-8 s,
# timed 8-9 s. The device is idle 0-4 s and 6-7 s.
RUN = [
    record(0, [["build_queue", 0, 0], ["build", 0, 4000], ["load", 4000, 4100],
               ["correctness", 4100, 5000], ["gate_alone_wait", 5000, 5000],
               ["timed_calls", 5000, 6000], ["answer", 0, 6000]]),
    record(1, [["build_queue", 0, 1000], ["build", 1000, 7000],
               ["gate_shared_wait", 7000, 7500], ["load", 7500, 7600],
               ["correctness", 7600, 8000], ["timed_calls", 8000, 8800],
               ["profile", 8800, 9000], ["answer", 0, 9000]], verdict="hack"),
]


def test_unions_and_gaps():
    assert timeline.union([[0, 2], [1, 3], [5, 6]]) == [[0, 3], [5, 6]]
    assert timeline.minus([[0, 10]], [[2, 3], [5, 6]]) == [[0, 2], [3, 5], [6, 10]]
    assert timeline.minus([[0, 4]], [[0, 4]]) == []


def test_figures_of_a_known_run():
    t = timeline.analyse([{"label": str(r["sample"]), "verdict": r["verdict"],
                           "spans": [tuple(s) for s in r["times_ms"]["spans"]]} for r in RUN])
    assert t["answers"] == 2
    assert t["wall_s"] == 9.0
    assert t["verdicts_s"] == {"first": 6.0, "median": 7.5, "last": 9.0}
    assert t["builds"]["count"] == 2
    assert t["builds"]["any_running_s"] == 7.0
    assert abs(t["builds"]["mean_concurrency"] - 10 / 7) < 1e-9
    assert t["builds"]["last_end_s"] == 7.0
    d = t["device"]
    assert d["alone_s"] == 2.0
    assert d["checks_only_s"] == 1.5
    assert d["idle_s"] == 5.5  # 0-4, 6-7.5
    assert d["idle_before_first_check_s"] == 4.0
    assert d["idle_after_first_check_s"] == 1.5
    assert t["waits_s"]["device, shared"] == 0.5
    assert t["waits_s"]["build"] == 11.0  # 4 + 7: each answer began at 0
    assert t["last"]["label"] == "1"
    assert [n for n, _, _ in t["last"]["chain"]] == [
        "build_queue", "answer", "build", "load", "correctness", "timed_calls", "profile"]


def test_the_command(tmp_path):
    path = tmp_path / "run.jsonl"
    old = {"level": 1, "problem": 3, "sample": 0, "verdict": "correct",
           "times_ms": {"ops": {}}}  # a record from before spans
    # One as `kernelbench run` writes its turns.
    lines = [json.dumps(RUN[0]), json.dumps({"turn": {"result": RUN[1]}}), json.dumps(old)]
    path.write_text("\n".join(lines) + "\n")
    out = subprocess.run([sys.executable, timeline.__file__, str(path), "--per-answer",
                          "--json", str(tmp_path / "t.json")],
                         capture_output=True, text=True, check=True).stdout
    assert "2 answers with spans (1 without)" in out
    assert "held alone 2.0 s (22% of the wall)" in out
    assert json.loads((tmp_path / "t.json").read_text())["device"]["idle_s"] == 5.5
    empty = tmp_path / "old.jsonl"
    empty.write_text(json.dumps(old) + "\n")
    r = subprocess.run([sys.executable, timeline.__file__, str(empty)],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "no answer with spans (1 without)" in r.stdout
