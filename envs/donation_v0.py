"""The donation game with gossip (ALIGN's main game): indirect reciprocity among strangers.

| | |
|---|---|
| Import | `from socialsim.envs import donation_v0` |
| Agents | `agent_0 .. agent_{N-1}` (N = `n_agents`, default 9; an entrant is the last) |
| Action space | `Discrete(7)`: 0 defect, 1 cooperate, 2-6 tones `praising, neutral, mocking, complaint, criticism` |
| Observation | `{"observation": Box(-inf, inf, (1 + 2 + N + 5N,), float32), "action_mask": Box(0, 1, (7,), int8)}` |
| Parallel / AEC | `parallel_env()` / `env()` (the one AEC form of `socialsim.envs.aec`: only agents with a decision are selected); `raw_env` is the AEC class |

A round pairs a donor with a recipient. The donor cooperates (pays `cost`, the recipient gains
`benefit`) or defects (nothing changes). With gossip on, the recipient then publishes to everyone
a tone about the donor, plus free text for language agents. The donor's action itself reaches
the recipient alone (a private `action` message); everyone else learns of it only through
gossip. Pairs never meet twice in the reference schedule, so direct reciprocity is impossible.

### Arguments

``donation_v0.env(n_agents=9, cost=1, benefit=5, initial_resources=10, discount=0.99,
gossip=True, schedule=None, rounds=None, entrant=None, entrant_round=None,
pairs_per_round=None, gossip_reach=1, render_mode=None)``

* `n_agents`: agents, >= 2, counting the entrant if there is one.
* `cost`, `benefit`: what cooperation costs the donor and gives the recipient (>= 0).
* `initial_resources`: everyone's starting stock. A donor whose stock is below `cost` cannot
  cooperate (the mask forbids it).
* `discount`: recorded for the metrics (discounted return); rewards are undiscounted.
* `gossip`: with `False` the recipient has no decision and nothing is published.
* `schedule`: `"align"` (default) is the reference's order: every unordered pair meets once,
  N(N-1)/2 rounds of one pair, roles alternating per agent, found by the reference's
  depth-first search (for N=9: agent_0->agent_1, agent_2->agent_0, ..., agent_7->agent_8).
  `"random"`: each round a seeded random set of disjoint donor->recipient pairs (as many as
  fit, or `pairs_per_round`) playing at the same time, for `rounds` rounds (default 2(N-1)).
* `rounds`: with `"align"`, play only the first `rounds` rounds.
* `entrant`: `None` (or `"none"`, as TOML has no null); `"isolated"` (the reference: the entrant `agent_{N-1}` meets each other agent
  once in index order, donor first, then alternating; the others never meet each other); or
  `"joins"` (random matching; the entrant sits out until round `entrant_round`, default half
  way). The seat is ordinary: the scripted `entrant` agent plays it unless an experiment puts
  another agent there.
* `gossip_reach`: q in [0, 1], the probability that a donor knows its recipient's reputation
  (Nowak & Sigmund 1998). Below 1, a tone goes only to its author and the agent it is about,
  and as each round starts a donor is told, with probability q, every tone published about its
  recipient so far (a private `reputation` message; see `socialsim.envs.gossip.reach`); the
  rules message states it. At 1 (the default) gossip is public and the rules do not mention it.
  Below 1 the observation's tone counts are what the agent's inbox holds (see Observation).
* `render_mode`: `None`, `"ansi"` (`render()` returns the round, the last round's gossip and
  the tones published about each agent: what the public sees) or `"human"` (prints it).

### State

`state()` (for centralised critics) is `[round / rounds, resources (N), role one-hot (N x R),
counterpart one-hot (N x N), tone counts (N x 5)]` as float32, with `state_space` its Box.

### Observation

`[own resources, one-hot role (donor, recipient), one-hot counterpart (N), tone counts about
each agent (N x 5)]` (with `gossip_reach` below 1, only the tones that reached the agent: those
it wrote, those about itself, and for an agent it was told about, the tones the latest
`reputation` message listed) and the action mask for the decision due: `donate` allows 0 and 1 (only 0
if the stock is below `cost`), `gossip` allows 2-6, nothing otherwise. `infos[agent]` holds
`decision` (`"donate"`, `"gossip"` or `None`), `round`, `role` and `counterpart`.

### Action

An index of `Discrete(7)`, or for language agents `{"action": 1 or "cooperate", "justification":
"..."}` and `{"tone": 3 or "complaint", "message": "..."}` (`tone` indexes the five tones).
Malformed actions raise `ValueError` (state unchanged). A tone when a donation is due falls back
to defect, a donation when gossip is due to the neutral tone, flagged in
`infos[agent]["invalid_action"]`.

### Rewards

At the donor's step: cooperate gives the donor `-cost` and the recipient `+benefit`; defect 0.
Gossip steps pay nothing. With everyone cooperating on the N=9 reference schedule every agent
ends with 26 (welfare 144).

### Version History

* v0: initial release; `gossip_reach` added later (its default keeps every record as it was;
  below 1 the observation counts only the tones the agent was told).
"""

from __future__ import annotations

from socialsim.envs.aec import entry_points
from socialsim.envs.gossip.games import DonationEnv

raw_env, env, parallel_env = entry_points(DonationEnv)

__all__ = ["DonationEnv", "env", "parallel_env", "raw_env"]
