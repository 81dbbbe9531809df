"""The donor game of cultural evolution among LLM agents (Vallinder & Hughes 2024), in our words.

| | |
|---|---|
| Import | `from socialsim.envs import culture_v0` |
| Agents | `agent_0` ... `agent_{n-1}` (12 by default; an even number) |
| Decision | `donate`, for the round's donors |
| Action space | `Discrete(21)`: 0..10 give 0, 0.1, ..., 1 of one's resources; 11..20 punish 0.1..1 (masked unless `punishment`); or `{"donate": int, "strategy": str}` |
| Observation | `Box(-1, inf, (2 + 2 * trace_depth,))`: own resources, the recipient's, then the given and punishing fractions of its trace (-1: none); and `action_mask` |

Every agent starts with ``initial_resources`` (10). Each round half the agents donate, each to
one recipient; the roles alternate from round to round, the pairs drawn anew. A donor gives a
fraction of its resources and the recipient gets it times ``multiplier`` (2); with
``punishment`` it may instead spend a fraction to take ``punishment_loss`` (2) times as much
from the recipient (down to 0). Before deciding, a donor is told privately (``recipient``) its
recipient and the recipient's last ``trace_depth`` (3) decisions as a donor. After each round
donor and recipient are told the ``interaction``. A language agent may add ``strategy`` text to
an action: it is posted to itself (``strategy``), so the record keeps it. A masked action falls
back to giving nothing (flagged). Rewards: each step's change of resources. The ceiling,
everyone giving everything, is :func:`socialsim.envs.culture.protocol.ceiling` (30,720 average
final resources at the defaults); ``summary()`` gives final ``resources``, ``mean_resources``,
``donated_fraction`` (the mean given fraction over every decision) and ``ceiling``.

Version History
---------------
* v0: first version.
"""

from __future__ import annotations

from socialsim.envs.aec import entry_points
from socialsim.envs.culture.env import CultureEnv

raw_env, env, parallel_env = entry_points(CultureEnv)

__all__ = ["CultureEnv", "env", "parallel_env", "raw_env"]
