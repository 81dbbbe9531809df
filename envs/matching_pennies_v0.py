"""Repeated matching pennies: the smallest game that exercises the whole engine.

| | |
|---|---|
| Import | `from socialsim.envs import matching_pennies_v0` |
| Actions | a face each round: 0 heads, 1 tails |
| Agents | `matcher`, `mismatcher` |
| Parallel / AEC | `parallel_env()` (:class:`PenniesEnv`) / `env()` (the one AEC form of `socialsim.envs.aec`: matcher, then mismatcher); `raw_env` is the AEC class |
| Action space | `Discrete(2)`; or `{"face": 0 or 1, "message": str}` |
| Observation space | `Dict({"observation": Box(0, 2, (2,), int8), "action_mask": Box(0, 1, (2,), int8)})` |

Both players show a face at the same time, for ``rounds`` rounds. The matcher wins a round when
the faces match, otherwise the mismatcher wins. Before each round the env tells each player
privately a seeded "lucky face" (it changes nothing in the rules; it gives the runner's tests a
seeded env stream and a private channel).

Arguments
---------
``matching_pennies_v0.env(rounds=10, render_mode=None)``

* ``rounds`` — rounds per episode (>= 1).
* ``render_mode`` — ``None``, ``"ansi"`` (``render()`` returns the round, the last faces and the
  score as text) or ``"human"`` (it prints the same text).

Observation
-----------
``observation``: the faces shown last round, ``[matcher, mismatcher]`` (2 = none yet).
``action_mask``: all ones while the agent has a decision (every round); after the last round
only the no-op, 0 (ignored). ``infos[agent]["decision"]`` is ``"face"``, or ``None`` once the episode is over.
``state()`` (``state_space``): ``[round, matcher's last face, mismatcher's last face]``.

Bus messages: ``rules`` (public, to everyone, the first message, turn 1: ``game``, ``rounds``,
``agents``), ``lucky_face`` (private, to each player, before each round) and ``reveal``
(public, after each round: both faces and the winner).

Action
------
A face; anything else (``2``, ``"heads"``, ``True``) is a ``ValueError`` naming the agent, and
nothing changes. Every face is legal, so no action is ever flagged as invalid.

Rewards
-------
Each round +1 to the winner and -1 to the loser.

Version History
---------------
* v0: first version. A ``rules`` message opens every episode.
"""

from __future__ import annotations

from socialsim.envs.aec import entry_points
from socialsim.envs.pennies.env import PenniesEnv

raw_env, env, parallel_env = entry_points(PenniesEnv)

__all__ = ["PenniesEnv", "env", "parallel_env", "raw_env"]
