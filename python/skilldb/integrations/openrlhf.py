"""OpenRLHF adapters: a reward function and a multi-turn agent.

Reward (``--reward.remote_url /path/to/skilldb/integrations/openrlhf.py``;
OpenRLHF imports ``reward_func`` from a path ending in .py)::

    reward_func(queries, prompts, labels, **kwargs)
        -> {"rewards": tensor, "scores": tensor, "extra_logs": {...}}

``queries`` are prompt plus response texts, ``prompts`` the prompts,
``labels`` the dataset labels: each a JSON object with ``skilldb_task``
and/or ``reference_code`` (or a task name). The response's last fenced code
block is evaluated through ``skilldb serve``'s KernelGYM-compatible
/evaluate ($SKILLDB_SERVER_URL); the reward is the trainer's policy turn
reward.

Agent (``--train.agent_func_path /path/to/skilldb/integrations/openrlhf.py``):
``AgentInstance`` (reset/step, one per prompt) gives per-turn rewards and the
verifier's feedback as the environment's answer; ``AgentExecutor`` wraps it
in OpenRLHF's MultiTurnAgentExecutor where OpenRLHF is installed.

Tensors are torch tensors when torch is importable (OpenRLHF calls
``.item()`` on them), plain floats otherwise.
"""

import asyncio
import json

from skilldb.integrations import kernelgym

try:
    import torch  # type: ignore
except Exception:  # noqa: BLE001
    torch = None

try:
    from openrlhf.utils.agent import (  # type: ignore
        AgentInstanceBase,
        MultiTurnAgentExecutor,
    )
except Exception:  # noqa: BLE001 - OpenRLHF absent (it does not install here)
    AgentInstanceBase, MultiTurnAgentExecutor = object, None


def _tensor(values):
    return torch.tensor(values, dtype=torch.float32) if torch is not None else list(values)


def _task_of(label):
    if isinstance(label, dict):
        return label
    if isinstance(label, str):
        try:
            parsed = json.loads(label)
            if isinstance(parsed, dict):
                return parsed
        except ValueError:
            pass
        return {"skilldb_task": label}
    return {}


def _response_of(query, prompt):
    return query[len(prompt):] if prompt and query.startswith(prompt) else query


def reward_func(queries, prompts, labels, **kwargs):
    """OpenRLHF's reward function (called once per sample by its agent
    executor, or with a batch)."""
    rewards, speedups, correct = [], [], []
    for query, prompt, label in zip(queries, prompts, labels):
        code = kernelgym.extract_kernel_code(_response_of(query, prompt))
        result = kernelgym.evaluate(kernelgym.make_payload(code, _task_of(label)),
                                    url=kwargs.get("server_url"))
        reward, info = kernelgym.reward_of(result)
        rewards.append(reward)
        speedups.append(info["speedup"])
        correct.append(1.0 if info["correctness"] else 0.0)
    return {"rewards": _tensor(rewards), "scores": _tensor(rewards),
            "extra_logs": {"speedup": _tensor(speedups), "correct": _tensor(correct)}}


class AgentInstance(AgentInstanceBase):
    """One prompt's episode: each step evaluates the action's kernel, the
    reward is that turn's policy reward, the feedback is the verifier's
    verdict; done when the kernel is correct and faster, or after
    `max_turns` (default 3, $SKILLDB_AGENT_MAX_TURNS)."""

    def __init__(self, *args, **kwargs):
        import os

        self.max_turns = int(kwargs.get("max_turns",
                                        os.environ.get("SKILLDB_AGENT_MAX_TURNS", 3)))
        self.server_url = kwargs.get("server_url")
        self.turn = 0
        self.task = {}

    async def reset(self, states, **kwargs):
        self.turn = 0
        self.task = _task_of(states.get("label"))
        return {"observation": states["observation"]}

    async def step(self, state_dict, **kwargs):
        self.turn += 1
        code = kernelgym.extract_kernel_code(state_dict.get("action_text", ""))
        result = await asyncio.to_thread(
            kernelgym.evaluate, kernelgym.make_payload(code, self.task), self.server_url)
        reward, info = kernelgym.reward_of(result)
        done = (info["correctness"] and info["speedup"] > 1.0) or self.turn >= self.max_turns
        feedback = "" if done else "\n\nVerifier: " + kernelgym.feedback_text(result) + \
            "\nImprove the kernel.\n"
        return {
            "rewards": _tensor([reward]),
            "scores": _tensor([reward]),
            "environment_feedback": feedback,
            "done": bool(done),
            "sampling_params": state_dict.get("sampling_params"),
            "extra_logs": {"speedup": _tensor([info["speedup"]]),
                           "turn": _tensor([float(self.turn)])},
        }


if MultiTurnAgentExecutor is not None:
    class AgentExecutor(MultiTurnAgentExecutor):  # type: ignore[misc, valid-type]
        """What OpenRLHF loads from --train.agent_func_path."""

        def __init__(self):
            super().__init__(AgentInstance)
