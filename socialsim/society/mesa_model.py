"""A population-scale gossip society: a Mesa 3 model of the random-matching donation game.

Scripted agents meet at random every round, one as donor and one as recipient. The donor
helps (pays ``cost``, the recipient gains ``benefit``) or refuses; the recipient then
publishes a tone about the donor, judged by its norm; every tone is public, and reputations
are read from the tones published so far. It is the donation game of
``socialsim.envs.donation_v0`` with ``schedule="random"`` and scripted players, without the
PettingZoo adapter, the bus or text, so that it scales to populations the env is not made for.
:mod:`socialsim.society.vectorised` plays the same model on numpy arrays (10^5 agents),
with the same statistics for the same seed.

| | |
|---|---|
| Import | `from socialsim.society.mesa_model import SocietyModel, run_society` |
| Strategies | `always_cooperate`, `always_defect`, `image_scoring`, `simple_standing`, `stern_judging` |
| Engines | `"mesa"` (this module: `SocietyModel`, a `mesa.Model`), `"numpy"` (`VectorSociety`; `ReplicatedSociety` for many seeds at once) |
| Statistics | per round: `cooperation_rate`, `reputation_accuracy`, `payoff_<strategy>` |

## Usage

```python
from socialsim.society.mesa_model import run_society

stats = run_society({"stern_judging": 80, "always_defect": 20}, rounds=200, seed=1)
stats[["cooperation_rate", "payoff_stern_judging", "payoff_always_defect"]].mean()

# the same model at scale, on arrays
big = run_society({"image_scoring": 90_000, "always_defect": 10_000}, rounds=1000, seed=1, engine="numpy")

# many seeds of one population in one array program: .loc[r] is the run seeded r
from socialsim.society.vectorised import ReplicatedSociety
runs = ReplicatedSociety({"stern_judging": 80, "always_defect": 20}, seeds=range(100)).run(200)
runs.groupby("round").mean()

# or as a Mesa model, stepping it yourself
model = SocietyModel({"simple_standing": 50, "always_defect": 50}, seed=1)
for _ in range(100):
    model.step()
model.datacollector.get_model_vars_dataframe()
```

## Arguments

* `population` (mapping strategy -> count): agents are laid out in blocks in the mapping's
  order (agent 0 is the first strategy's first agent). At least 2 agents.
* `cost` [1], `benefit` [5]: the donation game's payoffs.
* `gossip` [True]: with gossip off nothing is published, every reputation stays unknown and
  discriminators help everyone (they cannot tell).
* `gossip_reach` [1]: q, the probability that a donor knows its recipient's reputation
  (Nowak & Sigmund 1998), drawn per donation; a donor that does not know treats its recipient
  as a stranger. Discriminators out-earn defectors above a threshold q* that is near c/b for
  image scoring with rare defectors and higher for other norms and more defectors
  (:mod:`socialsim.society.threshold` measures it; `envs/gossip/reach.py` gives the values).
* `error` [0]: execution error, the probability that a donor who means to help fails to (it
  counts, and is judged, as a refusal). It makes the norms' differences show.
* `seed`: the seed of the model's numpy Generator, the only source of randomness.

## Rules of a round

1. Pairing: `order = rng.permutation(n_agents)`; agent `order[2k]` donates to agent
   `order[2k + 1]` for `k < n_agents // 2` (an odd agent out sits the round out), as the
   donation env's random schedule pairs its permutations. With `error > 0`, then
   `slips = rng.random(n_agents // 2) < error`, one per pair. With `gossip_reach < 1`, then
   `knows = reach.random(n_agents // 2) < gossip_reach`, one per pair, where `reach` is the
   reach child of the model's Generator (`reach.reach_generator`).
2. Donations, all from the reputations at the start of the round: `always_cooperate` helps,
   `always_defect` refuses, a discriminator helps unless the recipient's reputation under its
   own norm is bad (`norms.decide`; strangers are helped, and so is a recipient whose
   reputation the donor does not know this round). A slipping donor refuses.
3. Gossip: each recipient publishes `norms.assess(norm, action, its own reputation)` about its
   donor, the norm being its strategy, or `image_scoring` (honest reporting) for the
   always-cooperate and always-defect agents. Reputations are `norms.reputation` of the tones
   published about an agent so far (kept up to date tone by tone).

## Statistics (one row per round, `DataCollector` model variables)

* `cooperation_rate`: share of the round's donors who helped.
* `reputation_accuracy`: share of the round's non-neutral tones whose valence agrees with what
  the donor did (praising a help, a bad tone a refusal), as in
  ``socialsim.analysis.cooperation.reputation_accuracy``; `nan` when no claim was made.
* `payoff_<strategy>`: the mean payoff of the round per agent of that strategy (sitting out and
  the recipient's side included), for every strategy present. Cumulate for wealth.

## Version History

* v0: initial release.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

import mesa

from socialsim.envs.gossip import norms
from socialsim.envs.gossip.reach import reach_generator
from socialsim.society.population import (
    STRATEGIES,
    check_count,
    check_parameters,
    check_population,
    mean_round_payoff,
    payoff_column,
    statistic_columns,
    statistics_frame,
    strategy_names,
)
from socialsim.society.vectorised import VectorSociety

ENGINES = ("mesa", "numpy")


class SocietyAgent(mesa.Agent):
    """One member of the society: a strategy and the public record of tones about it."""

    def __init__(self, model: SocietyModel, index: int, strategy: str):
        super().__init__(model)
        self.index = index
        self.strategy = strategy
        self.norm = strategy if strategy in norms.NORMS else None
        # Always-cooperate and always-defect agents report honestly what they saw.
        self.gossip_norm = self.norm or "image_scoring"
        self.tones_about: list[str] = []
        self.valence_sum = 0
        self.latest_judgement = 0  # valence of the latest non-neutral tone about it, 0: none
        self.helps_given = 0
        self.helps_received = 0
        self.recipient: SocietyAgent | None = None  # set while this agent donates this round
        self.donor: SocietyAgent | None = None  # set while this agent receives this round
        self.slipped = False
        self.aware = True  # whether, as donor this round, it knows its recipient's reputation
        self.action: str | None = None

    @property
    def payoff(self) -> float:
        """Cumulative payoff (the numpy engine's formula, so that both agree to the bit)."""
        return self.helps_received * self.model.benefit - self.helps_given * self.model.cost

    def hear(self, tone: str) -> None:
        """A tone about this agent goes public."""
        self.tones_about.append(tone)
        value = norms.valence(tone)
        self.valence_sum += value
        if value:
            self.latest_judgement = value

    def reputation(self, norm: str) -> int | None:
        """How an observer following ``norm`` sees this agent: ``norms.reputation`` of the tones
        published about it, kept up to date tone by tone (a read costs O(1), not O(tones))."""
        if not self.tones_about:
            return None
        if norm == "image_scoring":
            return 1 if self.valence_sum >= 0 else -1
        return self.latest_judgement or 1

    def intends(self, recipient: SocietyAgent) -> str:
        if self.strategy == "always_cooperate":
            return "cooperate"
        if self.strategy == "always_defect":
            return "defect"
        known = recipient.reputation(self.norm) if self.aware else None
        return norms.decide(self.norm, known)

    def donate(self) -> None:
        """Donor phase: help or refuse the recipient of this round (if any)."""
        recipient = self.recipient
        if recipient is None:
            return
        action = self.intends(recipient)
        if self.slipped:
            action = "defect"
        self.action = action
        if action == "cooperate":
            self.helps_given += 1
            recipient.helps_received += 1

    def gossip(self) -> None:
        """Recipient phase: judge this round's donor by this agent's norm and publish the tone."""
        donor = self.donor
        if donor is None:
            return
        tone = norms.assess(self.gossip_norm, donor.action, self.reputation(self.gossip_norm))
        self.model.published.append((donor, tone))


class SocietyModel(mesa.Model):
    """The gossip society as a Mesa model (see the module docstring for the rules).

    ``datacollector`` holds one row of statistics per :meth:`step`.
    """

    def __init__(
        self,
        population: Mapping[str, int],
        *,
        cost: float = 1.0,
        benefit: float = 5.0,
        gossip: bool = True,
        error: float = 0.0,
        gossip_reach: float = 1.0,
        seed: int | None = None,
    ):
        self.population = check_population(population)
        check_parameters(cost, benefit, error, gossip, gossip_reach)
        # rng=seed makes model.rng = np.random.default_rng(seed), the same stream as the numpy
        # engine; shuffle_do draws from the model's own stdlib Random, which changes no outcome
        # because every decision of a round reads the state at the start of the round.
        super().__init__(rng=seed)
        self.cost, self.benefit, self.gossip, self.error = (
            float(cost),
            float(benefit),
            gossip,
            float(error),
        )
        self.gossip_reach = float(gossip_reach)
        self.reach_rng = reach_generator(self.rng)
        self.members = [
            SocietyAgent(self, i, s) for i, s in enumerate(strategy_names(self.population))
        ]
        self.published: list[tuple[SocietyAgent, str]] = []
        self.helps_given: Counter[str] = Counter()  # this round's helps, by strategy
        self.helps_received: Counter[str] = Counter()
        self.pairs = 0
        self.cooperations = 0
        self.claims = 0
        self.true_claims = 0
        reporters: dict[str, Any] = {
            "cooperation_rate": lambda m: m.cooperations / m.pairs,
            "reputation_accuracy": lambda m: m.true_claims / m.claims if m.claims else math.nan,
        }
        for strategy in self.population:
            if self.population[strategy]:
                reporters[payoff_column(strategy)] = lambda m, s=strategy: m.mean_round_payoff(s)
        self.datacollector = mesa.DataCollector(model_reporters=reporters)

    def mean_round_payoff(self, strategy: str) -> float:
        """Mean payoff of the round per agent of ``strategy``."""
        return mean_round_payoff(
            self.helps_given.get(strategy, 0),
            self.helps_received.get(strategy, 0),
            self.population[strategy],
            self.cost,
            self.benefit,
        )

    def step(self) -> None:
        n = len(self.members)
        half = n // 2
        order = self.rng.permutation(n)
        slips = self.rng.random(half) < self.error if self.error > 0 else None
        reach = self.reach_rng.random(half) if self.gossip_reach < 1 else None
        for agent in self.members:
            agent.recipient = agent.donor = None
            agent.slipped = False
            agent.aware = True
            agent.action = None
        for k in range(half):
            donor, recipient = self.members[order[2 * k]], self.members[order[2 * k + 1]]
            donor.recipient, recipient.donor = recipient, donor
            donor.slipped = bool(slips[k]) if slips is not None else False
            donor.aware = reach is None or bool(reach[k] < self.gossip_reach)

        self.agents.shuffle_do("donate")
        self.published = []
        if self.gossip:
            self.agents.shuffle_do("gossip")
        # Tones go public after everyone has judged: a round is simultaneous.
        for donor, tone in self.published:
            donor.hear(tone)

        self.pairs = half
        helpers = [a for a in self.members if a.recipient is not None and a.action == "cooperate"]
        self.cooperations = len(helpers)
        self.helps_given = Counter(a.strategy for a in helpers)
        self.helps_received = Counter(a.recipient.strategy for a in helpers)
        verdicts = [(norms.valence(tone), donor.action) for donor, tone in self.published]
        claims = [
            (value > 0) == (action == "cooperate") for value, action in verdicts if value != 0
        ]
        self.claims, self.true_claims = len(claims), sum(claims)
        self.datacollector.collect(self)

    def statistics(self):
        """The per-round statistics so far, as :func:`run_society` returns them."""
        rows = self.datacollector.get_model_vars_dataframe().to_dict("records")
        return statistics_frame(rows, statistic_columns(self.population))


def run_society(
    population: Mapping[str, int],
    rounds: int,
    *,
    cost: float = 1.0,
    benefit: float = 5.0,
    gossip: bool = True,
    error: float = 0.0,
    gossip_reach: float = 1.0,
    seed: int | None = None,
    engine: str = "mesa",
):
    """Play ``rounds`` rounds of the society and return its per-round statistics (a DataFrame
    indexed by ``round`` from 1). ``engine`` is ``"mesa"`` or ``"numpy"``; both give the same
    values for the same arguments."""
    if engine not in ENGINES:
        raise ValueError(f"engine: unknown engine {engine!r}; allowed: {', '.join(ENGINES)}")
    check_count("rounds", rounds, 0)
    kwargs = {
        "cost": cost,
        "benefit": benefit,
        "gossip": gossip,
        "error": error,
        "gossip_reach": gossip_reach,
        "seed": seed,
    }
    if engine == "numpy":
        return VectorSociety(population, **kwargs).run(rounds)
    model = SocietyModel(population, **kwargs)
    for _ in range(rounds):
        model.step()
    return model.statistics()


__all__ = ["ENGINES", "STRATEGIES", "SocietyAgent", "SocietyModel", "run_society"]
