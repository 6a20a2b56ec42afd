"""`skilldb serve` as a process: the remote library, the proposal queue,
KernelGYM's client flow with the host verifier, tokens, metrics."""

import json
import urllib.error
import urllib.request

import pytest

import skilldb
from conftest import host_candidate, make_skill, report_dict


def http(method, url, body=None, token=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=120) as res:
            return res.status, res.read().decode(), dict(res.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), dict(e.headers)


def test_a_remote_library_answers_as_the_local_one(seeded_path, serve):
    server = serve(seeded_path, "--verifier", "none")
    remote = skilldb.connect(server.url)
    assert remote.remote
    local = skilldb.open(seeded_path, read_only=True)
    for text in ("shared memory", "warp shuffle reduction"):
        assert remote.query(text, fields="all").to_dict() == \
            local.query(text, fields="all").to_dict()
    assert remote.get("warp-reduce") == local.get("warp-reduce")
    assert [c.to_dict() for c in remote.log()] == [c.to_dict() for c in local.log()]
    remote.record_usage([("warp-reduce", "applied", 2)])
    assert remote.usage("warp-reduce").applied == 2
    with pytest.raises(skilldb.NotSupportedError):
        remote.put(make_skill("direct", "Direct", "No direct writes."))
    with pytest.raises(skilldb.NotFoundError):
        remote.get("absent")


def test_a_proposal_goes_through_the_servers_durable_queue(seeded_path, serve):
    server = serve(seeded_path, "--verifier", "none")
    remote = skilldb.connect(server.url)
    outcome = remote.propose(make_skill("async-copy", "Asynchronous copies",
                                        "cp.async words only here."),
                             report=report_dict(speedup=2.0))
    assert outcome.accepted
    assert remote.get("async-copy").title == "Asynchronous copies"
    queued = remote.list_queued(state="committed")
    assert [q.candidate.id for q in queued] == ["async-copy"]
    status, body, headers = http("POST", server.url + "/v1/proposals", {
        "candidate": make_skill("slow", "Slow", "Slow words.").to_dict(),
        "replay_report": report_dict(speedup=1.0)})
    assert status == 202
    assert headers["Location"] == "/v1/proposals/" + json.loads(body)["id"]


def test_kernelgym_clients_get_a_real_verdict_from_the_host_verifier(seeded_path, serve):
    server = serve(seeded_path, "--verifier", "host", "--eval-rounds", "1")
    payload = {"task_id": "drk_host_1", "reference_code": "class Model: pass  # unused",
               "kernel_code": host_candidate("fast.cc"), "backend": "cpp",
               "skilldb_task": "sum_dim1_fp32", "num_perf_trials": 30,
               "detect_decoy_kernel": True}
    status, body, _ = http("POST", server.url + "/evaluate", payload)
    assert status == 200, body
    result = json.loads(body)
    assert result["status"] == "completed"
    assert result["compiled"] is True
    assert result["correctness"] is True
    assert result["kernel_runtime"] > 0 and result["reference_runtime"] > 0
    assert result["speedup"] == pytest.approx(
        result["reference_runtime"] / result["kernel_runtime"])
    assert result["metadata"]["skilldb"]["verifier"] == "host"
    # Dr. Kernel's client: poll /status, then fetch /results.
    status, body, _ = http("GET", server.url + "/status/drk_host_1")
    assert status == 200 and json.loads(body)["status"] == "completed"
    status, body, _ = http("GET", server.url + "/results/drk_host_1")
    assert json.loads(body)["speedup"] == result["speedup"]
    wrong = dict(payload, task_id="drk_host_2", kernel_code=host_candidate("wrong.cc"))
    status, body, _ = http("POST", server.url + "/evaluate", wrong)
    verdict = json.loads(body)
    assert verdict["status"] == "completed"
    assert verdict["correctness"] is False
    assert verdict["error_code"] == "CORRECTNESS_ERROR"
    assert verdict["speedup"] == 0.0


def test_writes_need_the_token_and_errors_are_json(seeded_path, serve, tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text("# writers\nsecret-token-0123456789\n")
    server = serve(seeded_path, "--verifier", "none", "--token-file", str(tokens))
    usage = {"records": [{"id": "warp-reduce", "event": "selected"}]}
    status, body, headers = http("POST", server.url + "/v1/usage", usage)
    assert status == 401
    assert json.loads(body)["error"]["code"] == "unauthenticated"
    status, _, _ = http("POST", server.url + "/v1/usage", usage, token="secret-token-0123456789")
    assert status == 200
    remote = skilldb.connect(server.url, token="secret-token-0123456789")
    remote.record_usage([("warp-reduce", "selected")])
    assert remote.usage("warp-reduce").selected == 2
    status, body, _ = http("GET", server.url + "/v1/skills/absent")
    assert status == 404 and json.loads(body)["error"]["code"] == "not_found"
    status, body, headers = http("GET", server.url + "/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert 'skilldb_http_requests_total{route="usage",code="401"} 1' in body
    status, body, _ = http("GET", server.url + "/openapi.json")
    assert "/v1/proposals/{id}" in json.loads(body)["paths"]


def test_acknowledged_proposals_survive_a_killed_server(seeded_path, serve):
    """Every proposal answered 202 is in the library's store: after SIGKILL
    (no shutdown at all) a new server commits each exactly once."""
    # No queue workers: every proposal is still queued when the server dies.
    server = serve(seeded_path, "--verifier", "none", "--queue-workers", "0")
    ids = []
    for i in range(6):
        words = " ".join(f"durable{i}word{j}" for j in range(12))
        skill = make_skill(f"durable-{i}", f"Durable {i}", words)
        status, body, _ = http("POST", server.url + "/v1/proposals",
                               {"candidate": skill.to_dict(),
                                "replay_report": report_dict(speedup=2.0)})
        assert status == 202, body
        ids.append(json.loads(body)["id"])
    status, body, _ = http("GET", server.url + "/v1/proposals/" + ids[-1])
    assert status == 200 and json.loads(body)["state"] == "queued"
    server.proc.kill()  # SIGKILL right after the last 202
    server.proc.wait()
    again = serve(seeded_path, "--verifier", "none")
    remote = skilldb.connect(again.url)
    # One worker takes the queue first in, first out: once a proposal made
    # now is decided, every one queued before the kill is too.
    after = remote.propose(make_skill("after-kill", "After the kill",
                                      "restart marker words only here"),
                           report=report_dict(speedup=2.0))
    assert after.accepted
    for i, pid in enumerate(ids):
        q = remote.queued(pid)
        assert q.state == "committed", (pid, q.state, q.reasons)
        assert remote.get(f"durable-{i}").title == f"Durable {i}"
    committed = [c for c in remote.log() if c.added == 1]
    assert len(committed) == len(ids) + 1  # each once, and the marker
