"""The product-choice market with buyer gossip.

| | |
|---|---|
| Import | `from socialsim.envs import market_v0` |
| Agents | sellers `agent_0 .. agent_{S-1}`, buyers `agent_S .. agent_{S+B-1}` (6 + 6 by default) |
| Action space | `Discrete(10)`: seller 0 H, 1 L; buyer 2 c (customised), 3 s (standard), 4 none; 5-9 tones |
| Observation | `{"observation": Box(-inf, inf, (1 + 2 + N + 5N,), float32), "action_mask": Box(0, 1, (10,), int8)}` |
| Parallel / AEC | `parallel_env()` / `env()` (the one AEC form of `socialsim.envs.aec`: only agents with a decision are selected); `raw_env` is the AEC class |

Each round one seller meets one buyer. At the same step the seller picks quality H or L and the
buyer, without seeing it, buys customised (c), standard (s) or nothing; then (gossip on) the
buyer publishes a tone about the seller. Roles never switch. Payoffs (seller, buyer):

| | c | s | none |
|---|---|---|---|
| H | (2, 3) | (0, 2) | (0, 0) |
| L | (3, 0) | (1, 1) | (0, 0) |

L strictly dominates H for the seller; (L, s) is the one-shot equilibrium, (H, c) the
efficient outcome.

### Arguments

``market_v0.env(n_sellers=6, n_buyers=6, discount=0.99, gossip=True, schedule=None,
rounds=None, render_mode=None)``

* `schedule`: `"align"` (default): every seller meets every buyer once, one pair per round, in
  an order shuffled by the episode seed (the reference's shuffle was unseeded). `"random"`:
  each round every seller meets a random distinct buyer, for `rounds` rounds (default B).
* `rounds`: with `"align"`, play only the first `rounds` pairs.
* `render_mode`: `None`, `"ansi"` (`render()` returns the round, the last round's gossip and
  the tones published about each agent: what the public sees) or `"human"` (prints it).

### State

`state()` (for centralised critics) is `[round / rounds, resources (N), role one-hot (N x R),
counterpart one-hot (N x N), tone counts (N x 5)]` as float32, with `state_space` its Box.

### Observation

`[cumulative payoff, one-hot role (seller, buyer), one-hot counterpart, tone counts (N x 5)]`.
Decisions: `"sell"` (mask 0-1), `"buy"` (mask 2-4), `"gossip"` (mask 5-9, buyers only).

### Action

An index, or `{"action": "H" | "L" | "c" | "s" | "none", "justification": str}` and
`{"tone": ..., "message": str}`. Fallbacks: L for a seller, none for a buyer, neutral for
gossip.

### Rewards

The payoffs of the deal at the trade step. `summary()` has `payoffs` (cumulative) instead of
`resources`.

### Version History

* v0: initial release.
"""

from __future__ import annotations

from socialsim.envs.aec import entry_points
from socialsim.envs.gossip.games import MarketEnv

raw_env, env, parallel_env = entry_points(MarketEnv)

__all__ = ["MarketEnv", "env", "parallel_env", "raw_env"]
