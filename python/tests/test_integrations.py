"""The RL framework adapters, called as the frameworks call them.

verl and OpenRLHF themselves do not install here in reasonable time (verl
pulls torch, ray and tensordict, several GB; OpenRLHF's pinned flash-attn is
an sdist that needs torch and CUDA to build): these tests call the adapters
with the frameworks' documented signatures and call patterns
(/work/notes/kernelbench_spec.md sections 8-9), against a real server with
the host verifier. Each evaluation reuses one task_id (KernelGYM's
idempotency), so the suite verifies the kernel once.
"""

import asyncio
import json
import types

import pytest

import skilldb
from conftest import host_candidate
from skilldb.integrations import kernelgym, openrlhf, verl

TASK = {"skilldb_task": "sum_dim1_fp32", "backend": "cpp"}


@pytest.fixture(scope="module")
def host_server(tmp_path_factory):
    from conftest import SKILLS, Served, make_skill

    path = str(tmp_path_factory.mktemp("integrations") / "lib")
    with skilldb.open(path, create=True, sync_commits=False) as lib:
        lib.put_many([make_skill(*s) for s in SKILLS])
    server = Served(path, "--verifier", "host", "--eval-rounds", "1")
    yield server
    server.stop()


def answer(code):
    return f"Here is the kernel.\n```cpp\n{code}\n```\nDone."


def test_verl_compute_score_as_the_reward_manager_calls_it(host_server):
    extra_info = {"task_id": "verl_reward_1", **TASK}
    # NaiveRewardManager: compute_score(data_source=..., solution_str=...,
    # ground_truth=..., extra_info=..., **reward_kwargs).
    score = verl.compute_score(data_source="kernelbench",
                               solution_str=answer(host_candidate("fast.cc")),
                               ground_truth=TASK, extra_info=extra_info,
                               server_url=host_server.url)
    assert score["correctness"] is True
    assert score["score"] == pytest.approx(
        skilldb.policy_turn_reward(True, score["speedup"]))
    # The async reward loop awaits the coroutine function.
    again = asyncio.run(verl.compute_score_async(
        "kernelbench", answer(host_candidate("fast.cc")), TASK, extra_info,
        server_url=host_server.url))
    assert again["score"] == score["score"]


class FakeTokenizer:
    """verl's tokenizer surface: apply_chat_template and decode."""

    def apply_chat_template(self, messages, tokenize=True, add_generation_prompt=True):
        return list(json.dumps(messages).encode())

    def decode(self, ids, skip_special_tokens=True):
        return bytes(ids).decode()


class ScriptedServerManager:
    """verl's AsyncLLMServerManager.generate signature, answering scripted
    model outputs (named as scripted: no model runs here)."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.calls = 0

    async def generate(self, request_id, *, prompt_ids, sampling_params,
                       image_data=None, video_data=None):
        text = self.answers[self.calls]
        self.calls += 1
        ids = list(text.encode())
        return types.SimpleNamespace(token_ids=ids, log_probs=[-0.1] * len(ids))


def test_verl_agent_loop_runs_the_three_agents_with_per_turn_rewards(host_server):
    skill = {"id": "row-accumulate", "title": "Accumulate whole rows",
             "summary": "Walk contiguous rows.", "body": "Sum contiguous rows of x "
             "instead of striding over columns.", "code": "for (...) acc += x[i];",
             "tags": ["reduction"]}
    manager = ScriptedServerManager([
        "warp-reduce\nvector-loads",
        answer(host_candidate("fast.cc")),
        answer(json.dumps(skill)),
    ])
    loop = verl.SkillDBAgentLoop(server_manager=manager, tokenizer=FakeTokenizer(),
                                 server_url=host_server.url, max_turns=2)
    out = asyncio.run(loop.run({"temperature": 1.0},
                               raw_prompt=[{"role": "user", "content":
                                           "sum over dim 1: reduce with warp "
                                           "shuffles and vectorized float4 loads"}],
                               extra_info={"task_id": "verl_agent_1", **TASK},
                               reward_model={"ground_truth": TASK}))
    extra = out["extra_fields"]
    assert extra["turn_agents"] == ["selection", "policy", "summary"]
    policy_reward = extra["turn_scores"][1]
    assert policy_reward > 0.5
    assert extra["turn_scores"][0] == policy_reward  # selection: its downstream return
    assert extra["skilldb"][0]["selected"] == ["warp-reduce", "vector-loads"]
    mask = out["response_mask"]
    assert len(mask) == len(out["response_ids"])
    for start, end, agent in extra["agent_spans"]:
        assert set(mask[start:end]) == {1}
    assert 0 in mask  # environment tokens between the agents' turns
    assert extra["skilldb"][2]["accepted"] is True
    lib = skilldb.connect(host_server.url)
    assert lib.get("row-accumulate").title == "Accumulate whole rows"
    assert lib.usage("warp-reduce").selected >= 1
    advantages = verl.per_agent_advantages(
        [{"task": "t", "rollout": "r0", **extra},
         {"task": "t", "rollout": "r1", "turn_agents": ["selection", "policy"],
          "turn_scores": [0.0, 0.0]}], normalization="none")
    # Leave-one-out in the (task, agent, turn) group: the other rollout's
    # policy turn earned 0.
    assert advantages[0][1] == pytest.approx(policy_reward)


def test_openrlhf_reward_func_and_agent_as_the_executor_calls_them(host_server, monkeypatch):
    monkeypatch.setenv("SKILLDB_SERVER_URL", host_server.url)
    label = json.dumps({**TASK})
    prompt = "Write a kernel for sum over dim 1.\n"
    query = prompt + answer(host_candidate("fast.cc"))
    # SingleTurnAgentExecutor: asyncio.to_thread(reward_func, queries=[...],
    # prompts=[...], labels=[...]), once per sample.
    out = asyncio.run(asyncio.to_thread(openrlhf.reward_func, queries=[query],
                                        prompts=[prompt], labels=[label]))
    rewards = list(out["rewards"])
    assert rewards[0] > 0.5
    assert list(out["scores"]) == rewards
    assert list(out["extra_logs"]["correct"]) == [1.0]

    agent = openrlhf.AgentInstance()  # made per prompt with no arguments
    state = asyncio.run(agent.reset({"observation": prompt, "label": label}))
    assert state["observation"] == prompt
    step = asyncio.run(agent.step({"observation_text": prompt,
                                   "action_text": answer(host_candidate("wrong.cc")),
                                   "label": label, "sampling_params": None}))
    assert list(step["rewards"]) == [0.0]
    assert step["done"] is False
    assert "correct: False" in step["environment_feedback"]
    step = asyncio.run(agent.step({"observation_text": prompt,
                                   "action_text": answer(host_candidate("fast.cc")),
                                   "label": label, "sampling_params": None}))
    assert list(step["rewards"])[0] > 0.5
    assert step["done"] is True


def test_kernel_code_is_the_last_fenced_block():
    text = "plan\n```python\nfirst\n```\nthen\n```cuda\nsecond\n```\n"
    assert kernelgym.extract_kernel_code(text) == "second\n"
    assert kernelgym.extract_kernel_code("no fence") == "no fence"
