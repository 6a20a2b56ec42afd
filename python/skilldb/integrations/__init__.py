"""Adapters of skilldb to RL training frameworks.

- ``skilldb.integrations.verl``: ``compute_score`` (sync and async) that
  verifies through a skilldb server's KernelGYM-compatible /evaluate, and
  ``SkillDBAgentLoop``, an agent loop for the three agents (selection,
  policy, summary) with per-turn rewards and agent ids.
- ``skilldb.integrations.openrlhf``: ``reward_func`` and an agent
  (``AgentInstance`` with reset/step; ``AgentExecutor`` where OpenRLHF is
  installed).

Both talk to ``skilldb serve`` over HTTP with the standard library only, so
the reward files import where the frameworks load them by path.
"""
