"""The prisoner's dilemma with gossip: the donation game played both ways at once.

| | |
|---|---|
| Import | `from socialsim.envs import prisoners_v0` |
| Agents | `agent_0 .. agent_{N-1}` (N = `n_agents`, default 5; an entrant is the last) |
| Action space | `Discrete(7)`: 0 D (defect), 1 C (cooperate), 2-6 tones `praising, neutral, mocking, complaint, criticism` |
| Observation | `{"observation": Box(-inf, inf, (1 + 1 + N + 5N,), float32), "action_mask": Box(0, 1, (7,), int8)}` |
| Parallel / AEC | `parallel_env()` / `env()` (the one AEC form of `socialsim.envs.aec`: only agents with a decision are selected); `raw_env` is the AEC class |

Each round one match: both players choose C or D without seeing the other's choice, then (with
gossip on) both publish a tone about the other. Each learns the other's move privately.

| (row, column) | C | D |
|---|---|---|
| C | (b-c, b-c) | (-c, b) |
| D | (b, -c) | (0, 0) |

### Arguments

``prisoners_v0.env(n_agents=5, cost=1, benefit=5, initial_resources=0, discount=0.99,
gossip=True, schedule=None, rounds=None, entrant=None, entrant_round=None,
pairs_per_round=None, render_mode=None)``

* `schedule`: `"align"` (default) is the reference's round-robin by the circle method (a bye
  for odd N), one match per round: for N=5 exactly (1,4), (2,3), (0,4), (1,2), (0,3),
  (4,2), (0,2), (3,1), (0,1), (3,4). `"random"`: seeded random disjoint pairs per round.
* `entrant`: `"isolated"` (the entrant meets each other agent once, in index order, as the
  first player) or `"joins"` (random matching; it joins at round `entrant_round`).
* `initial_resources`: the starting value of the "own resources" observation, which then
  accumulates payoffs (the reference's PD has no stock).
* The other arguments are those of `donation_v0`.
* `render_mode`: `None`, `"ansi"` (`render()` returns the round, the last round's gossip and
  the tones published about each agent: what the public sees) or `"human"` (prints it).

### State

`state()` (for centralised critics) is `[round / rounds, resources (N), role one-hot (N x R),
counterpart one-hot (N x N), tone counts (N x 5)]` as float32, with `state_space` its Box.

### Observation

`[own resources, one-hot role (player), one-hot counterpart, tone counts (N x 5)]`; mask: `play`
allows 0-1, `gossip` allows 2-6. `infos[agent]["decision"]` is `"play"`, `"gossip"` or `None`.

### Action

An index, or `{"action": "C" | "D" | 0 | 1, "justification": str}` and `{"tone": ...,
"message": str}`. Fallbacks for forbidden choices: D for a move, neutral for gossip.

### Rewards

The payoff of the match at the move step; gossip pays nothing. With everyone cooperating and
N=5 every agent returns 16 (4 matches x 4).

### Version History

* v0: initial release.
"""

from __future__ import annotations

from socialsim.envs.aec import entry_points
from socialsim.envs.gossip.games import PrisonersEnv

raw_env, env, parallel_env = entry_points(PrisonersEnv)

__all__ = ["PrisonersEnv", "env", "parallel_env", "raw_env"]
