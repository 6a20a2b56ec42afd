"""The module over a local library: reads, writes, errors, value types."""

import pathlib

import pytest

import skilldb
from conftest import make_skill, report_dict


def test_query_with_fields_filters_as_of_and_batch(lib):
    first = lib.version
    result = lib.query("shared memory tiling", k=5, fields="title,summary,tags,usage")
    assert result.version == first
    assert result.hits[0].id == "smem-tiling"
    assert result.hits[0].title == "Shared memory tiling"
    assert result.hits[0].tags == ["cuda"]
    assert result.hits[0].usage is not None
    lib.put(make_skill("smem-tiling-2", "Shared memory tiling, double buffered",
                       "Tile through shared memory with two buffers.", tags=["hopper"]))
    assert lib.query("shared memory", as_of=first).hits[0].id == "smem-tiling"
    assert [h.id for h in lib.query("shared memory", tags=["hopper"])] == ["smem-tiling-2"]
    texts = ["shared memory", "warp shuffle", "float4"]
    batch = lib.query_batch(texts, threads=2, fields=["title"])
    assert [r.to_dict() for r in batch] == [lib.query(t, fields=["title"]).to_dict()
                                            for t in texts]


def test_errors_are_exceptions_carrying_the_status_code(lib, tmp_path):
    with pytest.raises(skilldb.NotFoundError) as missing:
        lib.get("no-such-skill")
    assert missing.value.code == "not_found"
    assert isinstance(missing.value, skilldb.Error)
    assert "no-such-skill" in str(missing.value)
    with pytest.raises(skilldb.InvalidArgumentError) as bad:
        lib.put(skilldb.Skill("Bad Id!", "title"))
    assert bad.value.code == "invalid_argument"
    with pytest.raises(skilldb.NotFoundError):
        skilldb.open(str(tmp_path / "absent"))
    with pytest.raises(skilldb.InvalidArgumentError):
        lib.query("x", language="fortran")
    lib.close()
    with pytest.raises(skilldb.FailedPreconditionError):
        lib.query("x")


def test_values_have_reprs_and_convert_to_dicts(lib):
    skill = lib.get("warp-reduce")
    assert repr(skill) == "Skill(id='warp-reduce', title='Warp shuffle reduction', status='active')"
    assert skilldb.Skill.from_dict(skill.to_dict()) == skill
    hit = lib.query("warp", fields="all")[0]
    assert repr(hit).startswith("Hit(id='warp-reduce', score=")
    assert hit.to_dict()["body"] == skill.body
    assert repr(lib.log()[0]).startswith("CommitInfo(version=1")
    assert "Library(path=" in repr(lib)


def test_history_log_and_diff(lib):
    lib.put(make_skill("warp-reduce", "Warp shuffle reduction", "A better body."),
            message="revise")
    history = lib.history("warp-reduce")
    assert [r.version for r in history] == [2, 1]
    assert history[1].skill.body.startswith("Reduce across a warp")
    log = lib.log()
    assert [c.message for c in log] == ["revise", "three skills"]
    diff = lib.diff(1, 2)
    assert [(d.id, d.kind) for d in diff] == [("warp-reduce", "updated")]
    assert diff[0].after.body == "A better body."
    assert [c.id for c in lib.changes(2)] == ["warp-reduce"]


def test_usage_is_recorded_in_one_batch(lib):
    lib.record_usage([("warp-reduce", "selected"), ("warp-reduce", "applied", 3),
                      {"id": "smem-tiling", "event": "succeeded", "count": 2}])
    assert lib.usage("warp-reduce").applied == 3
    assert lib.usage("smem-tiling").succeeded == 2
    with pytest.raises(skilldb.NotFoundError):
        lib.record_usage([("warp-reduce", "applied"), ("nope", "applied")])
    assert lib.usage("warp-reduce").applied == 3  # nothing recorded on error
    with pytest.raises(skilldb.InvalidArgumentError):
        lib.record_usage([("warp-reduce", "liked")])


def test_propose_replays_a_recorded_report(lib):
    fast = make_skill("async-copy", "Asynchronous copies",
                      "cp.async moves data to shared memory without registers.")
    outcome = lib.propose(fast, report=report_dict(speedup=2.0), author="test")
    assert outcome.accepted
    assert outcome.version == lib.version
    assert lib.get("async-copy").evidence_json
    slow = make_skill("slow-idea", "A slow idea", "Words that only the slow idea has.")
    outcome = lib.propose(slow, report=report_dict(speedup=1.01))
    assert not outcome.accepted
    assert outcome.reasons
    assert lib.audit()[-1].event == "rejected"
    with pytest.raises(skilldb.InvalidArgumentError):
        lib.propose(slow)  # neither a verifier nor a report


def test_enqueue_keeps_a_proposal_readable_by_id(lib):
    q = lib.enqueue(make_skill("queued-one", "Queued", "Queued words."),
                    report=report_dict())
    assert q.state == "queued"
    assert lib.queued(q.id).candidate.id == "queued-one"
    assert [p.id for p in lib.list_queued(state="queued")] == [q.id]
    assert repr(q) == f"QueuedProposal(id='{q.id}', state='queued')"


def test_advantages_are_the_trainers_leave_one_out():
    decisions = [
        {"task": "t", "agent": "policy", "rollout": "a", "turn": 0, "reward": 1.0},
        {"task": "t", "agent": "policy", "rollout": "b", "turn": 0, "reward": 0.0},
        {"task": "t", "agent": "policy", "rollout": "c", "turn": 0, "reward": 0.5},
    ]
    returns, advantages = skilldb.compute_advantages(decisions, normalization="none")
    assert returns == [1.0, 0.0, 0.5]
    assert advantages == pytest.approx([1.0 - 0.25, 0.0 - 0.75, 0.5 - 0.5])
    assert skilldb.policy_turn_reward(True, 2.0) == pytest.approx(0.5 + 0.5 * 2.0)
    assert skilldb.policy_turn_reward(True, 2.0, True) == 0.0
    assert skilldb.summary_reward(True) == 1.0


def test_type_stubs_were_generated_at_build_time():
    stub = pathlib.Path(skilldb._skilldb.__file__).with_name("_skilldb.pyi")
    text = stub.read_text()
    assert "def query(self, text: str" in text
    assert "class VerificationReport" in text
