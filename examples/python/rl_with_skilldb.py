"""A worked example: an RL rollout worker that uses a skilldb server the way
verl and OpenRLHF reach it.

    skilldb --db ./lib serve --listen 127.0.0.1:8712 --verifier host &
    PYTHONPATH=build/python python3 examples/python/rl_with_skilldb.py \
        http://127.0.0.1:8712 verify/tasks/sum_dim1_fp32/candidates/fast.cc

What it does, each step as a training stack would:
1. retrieval for the Selection Agent (BM25 over the server's library, the
   skills' text in the prompt, `selected` usage recorded in one batch);
2. a reward for the Policy Agent's answer through verl's compute_score
   (KernelGYM's /evaluate on the server: correctness, speedup, hack
   findings) and the same through OpenRLHF's reward_func;
3. a multi-turn episode with OpenRLHF's agent API (reset/step, per-turn
   rewards, the verifier's feedback as the environment's answer);
4. the Summary Agent's skill proposed to the durable queue, verified by the
   server's verifier, and the decision read back;
5. per-agent advantages (the trainer's leave-one-out, per-agent
   normalization) over the turns.

The framework configuration that points at the same functions:

    # verl (0.8: custom_reward_function; 0.9: reward.custom_reward_function)
    custom_reward_function:
      path: <site-packages>/skilldb/integrations/verl.py
      name: compute_score_async
      reward_kwargs: {server_url: "http://127.0.0.1:8712"}
    # the three-agent loop: actor_rollout_ref.rollout.agent.agent_loop_config_path
    #   - name: skilldb_three_agent
    #     _target_: skilldb.integrations.verl.SkillDBAgentLoop
    # OpenRLHF
    #   --reward.remote_url <site-packages>/skilldb/integrations/openrlhf.py
    #   --train.agent_func_path <site-packages>/skilldb/integrations/openrlhf.py
"""

import asyncio
import json
import sys

import skilldb
from skilldb.integrations import openrlhf, verl

TASK = {"skilldb_task": "sum_dim1_fp32", "backend": "cpp"}


def main(url, kernel_path):
    kernel = open(kernel_path).read()
    answer = f"```cpp\n{kernel}\n```"
    lib = skilldb.connect(url)

    # 1. Selection: BM25 candidates with the fields a prompt needs.
    hits = lib.query("reduction over a dimension, sum of rows", k=3,
                     fields="title,summary,body")
    for h in hits:
        print(f"candidate skill {h.id}: {h.title}")
    lib.record_usage([(h.id, "selected") for h in hits])

    # 2. Rewards as verl and OpenRLHF compute them.
    score = verl.compute_score("kernelbench", answer, TASK,
                               {"task_id": "example-1", **TASK}, server_url=url)
    print("verl compute_score:", json.dumps(score))
    rewards = openrlhf.reward_func(["prompt" + answer], ["prompt"], [json.dumps(TASK)],
                                   server_url=url)
    print("openrlhf reward_func:", list(rewards["rewards"]))

    # 3. A multi-turn episode through OpenRLHF's agent API.
    agent = openrlhf.AgentInstance(server_url=url, max_turns=2)
    asyncio.run(agent.reset({"observation": "Write the kernel.", "label": json.dumps(TASK)}))
    step = asyncio.run(agent.step({"observation_text": "", "action_text": answer,
                                   "label": json.dumps(TASK), "sampling_params": None}))
    print("agent step: reward", list(step["rewards"]), "done", step["done"])

    # 4. The Summary Agent's skill, verified by the server and decided.
    skill = skilldb.Skill("example-row-accumulate", "Accumulate contiguous rows",
                          summary="Sum along the reduced dimension row by row.",
                          body="Walk the reduced dimension in the outer loop so the "
                               "inner loop reads contiguous memory.",
                          code=kernel[:400], tags=["reduction"], language="any")
    request = {"task": TASK["skilldb_task"],
               "candidate": {"name": "example", "language": "cpp", "source": kernel}}
    try:
        outcome = lib.propose(skill, request=request, author="example")
        print("proposal:", outcome)
    except skilldb.Error as e:
        print(f"proposal failed ({e.code}): {e}")

    # 5. Per-agent advantages over a small batch of turns.
    decisions = [
        {"task": "sum", "agent": "selection", "rollout": "r0", "turn": 0, "reward": score["score"]},
        {"task": "sum", "agent": "policy", "rollout": "r0", "turn": 0, "reward": score["score"]},
        {"task": "sum", "agent": "selection", "rollout": "r1", "turn": 0, "reward": 0.0},
        {"task": "sum", "agent": "policy", "rollout": "r1", "turn": 0, "reward": 0.0},
    ]
    returns, advantages = skilldb.compute_advantages(decisions)
    print("advantages:", [round(a, 3) for a in advantages])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
