"""kb_runner's kept outputs when a reference runner is shared by sessions
(ReferencePool): each session's ids carry its tag ("s<N>/"); its clear
takes only its own, and a timed call's keep_last evicts only its own; a
float64 copy ("s1/t0/f64") is the session's too. A session's outputs
encoded for the wire are a copy of what they were when encoded."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

torch = pytest.importorskip("torch")

import kb_runner  # noqa: E402
import kb_wire  # noqa: E402


def runner():
    return kb_runner.Runner("reference", None, "/nonexistent", "cpu", 0)


def test_clear_takes_only_the_sessions_own():
    r = runner()
    t = torch.zeros(1)
    for key in ("s1/t0", "s1/t0/f64", "s2/t0", "s12/t0"):
        r.keep(key, [t], [t], 0)
    r.pending["s1/r0c0"] = [t]
    r.pending["s2/r0c0"] = [t]
    assert r.op_clear({"prefix": "s1/"}, b"") == {"ok": True}
    assert sorted(r.kept) == ["s12/t0", "s2/t0"]
    assert r.order == ["s2/t0", "s12/t0"]
    assert list(r.pending) == ["s2/r0c0"]
    r.op_clear({}, b"")  # no prefix: everything (a runner of one session)
    assert not r.kept and not r.order and not r.pending


def test_keep_last_evicts_only_the_sessions_own():
    r = runner()
    t = torch.zeros(1)
    r.keep("s2/t0", [t], [t], 0)
    for i in range(5):
        r.keep("s1/r0c%d" % i, [t], [t], 2)
    assert sorted(r.kept) == ["s1/r0c3", "s1/r0c4", "s2/t0"]
    r.keep("s2/r0c0", [t], [t], 1)  # s2's newest one: its trial goes
    assert sorted(r.kept) == ["s1/r0c3", "s1/r0c4", "s2/r0c0"]


def test_wire_bytes_are_a_copy_of_a_cpu_tensor():
    t = torch.arange(4, dtype=torch.float32)
    raw = kb_wire.tensor_bytes(t)
    t.add_(100)  # a forward that changes its inputs after they were encoded
    back = kb_wire.tensor_from_bytes(bytes(raw), "float32", [4])
    assert torch.equal(back, torch.arange(4, dtype=torch.float32))
    assert len(raw) == 16


def test_inputs_are_read_from_the_received_blob_and_own_their_memory():
    """decode_values reads each tensor where it lies in the frame's blob
    (misaligned after a bool tensor, or in a read-only bytes object: then
    through a copy), and the tensors it returns own their memory: the
    blob's storage is reused for the next frame."""
    for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.int64):
        x = (torch.randn(3, 5) * 10).to(dtype)
        flag = torch.tensor([True, False, True])  # 3 bytes: x starts at offset 3
        w = kb_wire.BlobWriter()
        desc = kb_wire.encode_values([flag, x], w)
        assert desc[1]["offset"] == 3
        blob = bytearray(b"".join(bytes(p) for p in w.parts))
        back = kb_wire.decode_values(desc, blob)
        assert torch.equal(back[0], flag) and torch.equal(back[1], x)
        assert torch.equal(kb_wire.decode_values(desc, bytes(blob))[1], x)
        blob[:] = bytes(len(blob))
        assert torch.equal(back[1], x), dtype


def test_a_build_the_cache_lost_is_the_verifiers_error(tmp_path):
    """The run step's shim: a library the build step reported built but the
    cache lacks, or a thunk library whose caller is missing, is the
    verifier's failure (VerifierError: verdict "error"); a call the build
    step never saw stays the answer's (its compile error)."""
    import kb_caller
    import kb_load
    cpp = "int f() { return 1; }"
    key = kb_load.extension_key("lost", cpp, None, ["f"], {}, True, "")
    lost = kb_load.ExtensionShim("run", str(tmp_path), built=[key], arch="")
    with pytest.raises(kb_load.VerifierError, match="no longer has it"):
        lost("lost", cpp, functions=["f"])
    unseen = kb_load.ExtensionShim("run", str(tmp_path), built=[], arch="")
    with pytest.raises(RuntimeError, match="no library was built") as e:
        unseen("lost", cpp, functions=["f"])
    assert not isinstance(e.value, kb_load.VerifierError)
    # Thunks whose caller the cache lacks.
    os.makedirs(tmp_path / key)
    (tmp_path / key / ("lost" + kb_caller.META_SUFFIX)).write_text("{}")
    with pytest.raises(kb_load.VerifierError, match="generic caller"):
        lost("lost", cpp, functions=["f"])


def test_complex_outputs_are_compared_as_their_real_pairs():
    """A complex output is kept, described and sent as view_as_real's
    (real, imaginary) pairs, a conjugate view resolved first; a tuple's
    complex members too."""
    z = torch.complex(torch.tensor([1.0, 2.0]), torch.tensor([3.0, -4.0]))
    outs, kind = kb_runner.flatten_output(z.conj())
    assert kind == "tensor"
    assert outs[0].dtype == torch.float32 and list(outs[0].shape) == [2, 2]
    assert outs[0].tolist() == [[1.0, -3.0], [2.0, 4.0]]
    outs, kind = kb_runner.flatten_output((z, torch.ones(3)))
    assert kind == "tuple" and list(outs[0].shape) == [2, 2] and outs[1].dtype == torch.float32
    r = runner()
    assert r.describe_outputs(outs)[0]["shape"] == [2, 2]
    # Described as complex, so a real [..., 2] answer does not pass for it.
    described = r.describe_outputs(outs, kb_runner.complex_outputs((z, torch.ones(3))))
    assert described[0]["complex"] is True and "complex" not in described[1]
    real_pairs, _ = kb_runner.flatten_output(torch.view_as_real(z))
    assert "complex" not in r.describe_outputs(
        real_pairs, kb_runner.complex_outputs(torch.view_as_real(z)))[0]


def test_complex_inputs_travel_whole_and_are_replayed():
    """A complex input handed between runners keeps its dtype, shape and
    values (its bytes are float64 pairs, the shape says so), and is never
    classified as a distribution to draw from."""
    import kb_inputs
    z = torch.randn(4, 3, dtype=torch.complex64)
    w = kb_wire.BlobWriter()
    desc = kb_wire.encode_values([z, 2.0], w)
    assert desc[0]["shape"] == [4, 3, 2] and desc[0]["dtype"] == "float64"
    back = kb_wire.decode_values(desc, b"".join(bytes(p) for p in w.parts))
    assert back[0].dtype == torch.complex64 and torch.equal(back[0], z) and back[1] == 2.0
    assert kb_inputs.classify(z) == {"dist": "replay"}
    assert kb_inputs.replay_needed(kb_inputs.describe([z]))


def test_an_input_with_nan_is_unchanged_when_its_bits_are():
    """The inputs-modified check compares bits: NaN equals itself there
    (torch.equal says it does not), and a changed element is still seen."""
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.complex64):
        x = torch.tensor([1.0, float("nan"), 3.0]).to(dtype)
        assert kb_runner.same_values(x.clone(), x), dtype
        y = x.clone()
        y[0] = 2.0
        assert not kb_runner.same_values(x, y), dtype
    assert kb_runner.same_values(torch.arange(3), torch.arange(3))
    assert not kb_runner.same_values(torch.arange(3), torch.arange(3).flip(0))
    assert not kb_runner.same_values(torch.zeros(3), torch.zeros(3, dtype=torch.float64))
    assert kb_runner.same_values(torch.zeros(2, 2).t(), torch.zeros(2, 2).t())


def test_integer_inputs_drawn_only_when_they_look_uniform_draws():
    """Integer inputs are drawn afresh (randint) only when they look like
    independent uniform draws; a permutation, sorted offsets, a few repeated
    ids or a small tensor are replayed as get_inputs() made them."""
    import kb_inputs
    g = torch.Generator().manual_seed(3)
    assert kb_inputs.classify(torch.randint(0, 1000, (8192,), generator=g)) == \
        {"dist": "randint", "low": 0, "high": 1000}
    assert kb_inputs.classify(torch.randint(0, 10, (4096,), generator=g))["dist"] == "randint"
    assert kb_inputs.classify(torch.randint(0, 50000, (4096,), generator=g))["dist"] == "randint"
    assert kb_inputs.classify(torch.randperm(8192, generator=g)) == {"dist": "replay"}
    assert kb_inputs.classify(torch.arange(8192)) == {"dist": "replay"}
    offsets = torch.sort(torch.randint(0, 100000, (4096,), generator=g)).values
    assert kb_inputs.classify(offsets) == {"dist": "replay"}
    ids = torch.tensor([0, 7, 99])[torch.randint(0, 3, (4096,), generator=g)]
    assert kb_inputs.classify(ids) == {"dist": "replay"}
    assert kb_inputs.classify(torch.randint(0, 10, (64,), generator=g)) == {"dist": "replay"}
    assert kb_inputs.classify(offsets.flip(0)) == {"dist": "replay"}  # descending
    rows = torch.sort(torch.randint(0, 1000, (64, 128), generator=g), dim=1).values
    assert kb_inputs.classify(rows) == {"dist": "replay"}  # sorted by rows
    assert kb_inputs.classify(torch.randint(0, 1000, (64, 128), generator=g))["dist"] == "randint"


def test_a_thread_started_without_threading_is_named():
    """Watch.new_threads names a Python thread _thread started (threading
    does not list it), and no longer once it has ended."""
    import _thread
    import time
    import kb_guard
    w = kb_guard.Watch([])
    assert w.new_threads() == []
    done = _thread.allocate_lock()
    done.acquire()
    _thread.start_new_thread(lambda: (time.sleep(0.3), done.release()), ())
    time.sleep(0.05)
    names = w.new_threads()
    assert len(names) == 1 and "started outside threading" in names[0], names
    done.acquire()
    time.sleep(0.05)
    assert w.new_threads() == []


PROBLEM = """import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x * 2

N = 64

def get_inputs():
    return [torch.arange(N, dtype=torch.float32)]

def get_init_inputs():
    return []
"""

ANSWER = """import torch
import torch.nn as nn

N = 4  # the problem's size, rebound where the answer runs

class ModelNew(nn.Module):
    def forward(self, x):
        return x * 2
"""


def test_a_candidates_inputs_come_from_the_runners_own_copy_of_the_problem(tmp_path):
    """Under this verifier's protocol the answer cannot change the inputs the
    candidate runner makes (replayed get_inputs()) by rebinding the
    problem's globals, which it shares; under KernelBench's it can, as in
    KernelBench's harness."""
    import torch.utils.cpp_extension as cpp_ext
    load_inline = cpp_ext.load_inline  # the candidate's load installs its shim
    try:
        for protocol, n in (("skilldb", 64), ("kernelbench", 4)):
            r = kb_runner.Runner("candidate", None, str(tmp_path), "cpu", 0)
            reply = r.op_load({"problem": PROBLEM, "answer": ANSWER, "backend": "cuda",
                               "protocol": protocol, "ext_root": str(tmp_path)}, b"")
            reply = reply[0] if isinstance(reply, tuple) else reply
            assert reply["ok"], reply
            r.specs = [{"kind": "tensor", "dist": "replay", "dtype": "float32", "shape": [64]}]
            assert r.make_inputs(1)[0].numel() == n, protocol
    finally:
        cpp_ext.load_inline = load_inline


def test_the_private_copy_draws_what_a_single_load_draws(tmp_path):
    """A problem's module-level random tensors are the same in the runner's
    own copy as in the answer's, and as one load of the problem makes."""
    import kb_load
    import torch.utils.cpp_extension as cpp_ext
    problem = PROBLEM.replace("N = 64", "N = 64\nW = torch.randn(N)").replace(
        "return [torch.arange(N, dtype=torch.float32)]", "return [W.clone()]")
    torch.manual_seed(5)
    want = kb_load.load_problem(problem)[0]["W"]
    load_inline = cpp_ext.load_inline
    try:
        torch.manual_seed(5)
        r = kb_runner.Runner("candidate", None, str(tmp_path), "cpu", 0)
        r.op_load({"problem": problem, "answer": ANSWER.replace("N = 4", "W = None"),
                   "backend": "cuda", "protocol": "skilldb", "ext_root": str(tmp_path)}, b"")
    finally:
        cpp_ext.load_inline = load_inline
    r.specs = [{"kind": "tensor", "dist": "replay", "dtype": "float32", "shape": [64]}]
    assert torch.equal(r.make_inputs(1)[0], want)


def test_check_inputs_skips_replayed_inputs():
    """Inputs get_inputs() made are not made again to compare (the same seed
    need not give the same values): the trials checked them."""
    r = runner()
    r.role = "candidate"
    r.specs = [{"kind": "tensor", "dist": "replay", "dtype": "float32", "shape": [2]}]
    r.keep("r0c1", [torch.zeros(2)], [torch.zeros(2)], 0)
    assert r.op_check_inputs({"id": "r0c1", "seed": 3}, b"")["modified"] == []
    r.specs = [{"kind": "tensor", "dist": "randn", "dtype": "float32", "shape": [2]}]
    assert r.op_check_inputs({"id": "r0c1", "seed": 3}, b"")["modified"] == [0]


def test_storage_bytes_counts_each_storage_once_and_whole():
    base = torch.zeros(4, 8)  # 128 bytes
    other = torch.zeros(3, dtype=torch.float64)  # 24 bytes
    assert sorted(kb_runner.storage_bytes([base[1:], base, other, 7, torch.zeros(0)])) == [24, 128]


def test_prime_plans_a_rounds_blocks_within_its_budget():
    """op_prime makes `count` sets of the storages the last trial's call held
    (inputs and outputs), capped by max_bytes; on a CPU it only answers the
    plan (the allocation is the GPU's: kb_protocols.cc's TimeSkilldb)."""
    r = runner()
    assert r.op_prime({"count": 31}, b"") == {"ok": True, "sets": 31, "bytes": 0, "allocated": 0}
    r.call_blocks = kb_runner.storage_bytes([torch.zeros(16), torch.zeros(16), torch.zeros(8)])
    assert r.op_prime({"count": 31, "max_bytes": 1 << 20}, b"") == {
        "ok": True, "sets": 31, "bytes": 31 * 160, "allocated": 0}
    assert r.op_prime({"count": 31, "max_bytes": 1000}, b"")["sets"] == 6
    assert r.op_prime({"count": 10 ** 9}, b"")["sets"] == 10000
    assert r.op_prime({"count": -3}, b"")["sets"] == 0


def test_a_trial_records_the_blocks_its_call_held(tmp_path):
    """The sets op_prime makes are the last trial's input and output
    storages (PROBLEM: 64 float32 in, 64 out)."""
    r = kb_runner.Runner("reference", None, str(tmp_path), "cpu", 0)
    reply = r.op_load({"problem": PROBLEM, "protocol": "skilldb"}, b"")
    reply = reply[0] if isinstance(reply, tuple) else reply
    assert reply["ok"], reply
    reply, _ = r.op_trial({"id": "t0", "seed": 1}, b"")
    assert reply["ok"], reply
    assert r.call_blocks == [256, 256]
    assert r.op_prime({"count": 3}, b"")["bytes"] == 3 * 512
