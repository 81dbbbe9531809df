"""The trust (investment) game with gossip.

| | |
|---|---|
| Import | `from socialsim.envs import trust_v0` |
| Agents | `agent_0 .. agent_{N-1}` (N = `n_agents`, default 5) |
| Action space | `Discrete(16)`: 0-10 send k/10 of the most allowed, 11-15 tones `praising, neutral, mocking, complaint, criticism` |
| Observation | `{"observation": Box(-inf, inf, (1 + 2 + N + 5N,), float32), "action_mask": Box(0, 1, (16,), int8)}` |
| Parallel / AEC | `parallel_env()` / `env()` (the one AEC form of `socialsim.envs.aec`: only agents with a decision are selected); `raw_env` is the AEC class |

Each round an investor sends I in [0, own resources]; the responder receives `multiplier` x I
and returns R in [0, `multiplier` x I]; then (gossip on) both publish a tone about the other.
The responder learns I privately before deciding; the investor learns R privately.

**Amounts.** PettingZoo fixes one space per agent, and amounts are real numbers, so the RL view
is a grid: action k in 0-10 sends k/10 of the most allowed now (the investor's stock, or
`multiplier` x I for the responder) - always legal. Language agents send an exact amount with
`{"amount": 2.5, "justification": "..."}`. A negative amount, or one above the stock or above
`multiplier` x I, is a `ValueError` naming `amount` (the reference accepted them), with the
state unchanged.

### Arguments

``trust_v0.env(n_agents=5, multiplier=3, initial_resources=5, discount=0.99, gossip=True,
schedule=None, rounds=None, entrant=None, entrant_round=None, pairs_per_round=None, render_mode=None)``

* `schedule`: `"align"` (default) is the donation game's reference schedule (investor ->
  responder): for N=5 (0,1), (2,0), (0,3), (4,0), (1,2), (3,1), (1,4), (2,3), (4,2), (3,4).
  `"random"`: seeded random disjoint pairs per round.
* `entrant`: as in `donation_v0` (the reference's trust game has none).
* `render_mode`: `None`, `"ansi"` (`render()` returns the round, the last round's gossip and
  the tones published about each agent: what the public sees) or `"human"` (prints it).

### State

`state()` (for centralised critics) is `[round / rounds, resources (N), role one-hot (N x R),
counterpart one-hot (N x N), tone counts (N x 5)]` as float32, with `state_space` its Box.

### Observation

`[own resources, one-hot role (investor, responder), one-hot counterpart, tone counts (N x 5)]`.
Decisions: `"invest"`, `"return"` (mask 0-10), `"gossip"` (mask 11-15).

### Rewards

Investing pays the investor -I and the responder +3I at once; returning pays the responder -R
and the investor +R. Over a round: investor R - I, responder 3I - R.

### Version History

* v0: initial release.
"""

from __future__ import annotations

from socialsim.envs.aec import entry_points
from socialsim.envs.gossip.games import TrustEnv

raw_env, env, parallel_env = entry_points(TrustEnv)

__all__ = ["TrustEnv", "env", "parallel_env", "raw_env"]
