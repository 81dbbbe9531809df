"""The gossip society across generations: each generation plays ``rounds`` rounds, then the
population changes by a rule of :mod:`socialsim.society.evolution`, for many replicates of up
to millions of agents in one array program (:class:`EvolvingSociety`).

Seeds. Replicate ``r`` of a run with ``seeds`` plays generation ``g`` with the Generator
``default_rng(generation_seed(seeds[r], g))`` (and its reach child, as a society built with
that seed does), and the update after generation ``g`` draws from
:func:`update_generator` ``(generation_seed(seeds[r], g))``, the seed's second child. The
donation env played generation by generation (:mod:`socialsim.society.episodes`) uses the same
seeds, so the env and the society give the same generations.

Statistics, one row per replicate and generation (:func:`generation_statistics`):
``cooperation`` (the share of the generation's donations that helped), ``mean_payoff`` (what an
agent gained in the generation, on average: helps received times ``benefit`` minus helps given
times ``cost``) and ``share_<strategy>`` for each strategy of the first generation and of the
mutation pool, as the generation played.

Replicates are independent: ``run`` splits them between two processes once for all its
generations, updates included (:func:`socialsim.society.parallel.split`).

    from socialsim.society.evolution import Evolution
    from socialsim.society.generations import EvolvingSociety

    run = EvolvingSociety(
        {"always_cooperate": 300, "always_defect": 300, "stern_judging": 400},
        seeds=range(20), rounds=50, gossip_reach=0.9,
        evolution=Evolution("selection", mutation=0.01,
                            pool=("always_cooperate", "always_defect", "stern_judging")),
    )
    table = run.run(30)                      # DataFrame indexed by (replicate, generation)
    table.groupby("generation").mean()
"""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from socialsim.society.evolution import Evolution
from socialsim.society.parallel import split
from socialsim.society.population import STRATEGIES, check_count, check_seeds
from socialsim.society.vectorised import PARALLEL_MIN_WORK, ReplicatedSociety

#: the child of a generation's seed that the update between generations draws from (the first
#: child draws who knows whom: ``socialsim.envs.gossip.reach``)
UPDATE_STREAM = 1


def generation_seed(seed: int, generation: int) -> int:
    """The seed of generation ``generation`` of the run seeded ``seed``: a 63-bit integer
    from ``numpy.random.SeedSequence([seed, generation])``."""
    state = np.random.SeedSequence([seed, generation]).generate_state(2, np.uint32)
    return int((int(state[0]) << 31) ^ int(state[1]))


def update_generator(seed: int) -> np.random.Generator:
    """The Generator of the update after the generation played with ``seed``."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(UPDATE_STREAM,)))


def share_column(strategy: str) -> str:
    return f"share_{strategy}"


def generation_statistics(
    strategies: np.ndarray,
    helps_given: np.ndarray,
    helps_received: np.ndarray,
    rounds: int,
    cost: float,
    benefit: float,
    shown: Iterable[str],
    names: Sequence[str] = STRATEGIES,
) -> dict[str, np.ndarray]:
    """One generation's statistics (see the module docstring) from its ``(..., n_agents)``
    arrays, one value per leading index; ``shown`` names the strategies whose share is given."""
    n = strategies.shape[-1]
    payoff = helps_received * benefit - helps_given * cost  # the society's own formula
    columns = {
        "cooperation": helps_given.sum(axis=-1) / (rounds * (n // 2)),
        "mean_payoff": payoff.mean(axis=-1),
    }
    for strategy in shown:
        columns[share_column(strategy)] = (strategies == names.index(strategy)).mean(axis=-1)
    return columns


def shown_strategies(population: Mapping[str, int], evolution: Evolution) -> list[str]:
    """The strategies whose shares a run reports: the first generation's and the pool's."""
    named = {s for s, count in population.items() if count} | set(evolution.pool)
    return [s for s in evolution.names if s in named]


def check_generation_seeds(seeds: Iterable[Any]) -> list[int]:
    seeds = check_seeds(seeds)
    for seed in seeds:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seeds: each must be an integer >= 0, got {seed!r}")
    return [int(seed) for seed in seeds]


class EvolvingSociety:
    """``len(seeds)`` replicates of a society that evolves by ``evolution`` every ``rounds``
    rounds. The other arguments are those of :class:`ReplicatedSociety`; ``society`` is the
    generation being played (its ``strategy``, ``payoff``... arrays), ``generation`` its number
    from 0, :meth:`statistics` every generation's statistics so far."""

    def __init__(
        self,
        population: Mapping[str, int],
        *,
        seeds: Iterable[Any],
        rounds: int,
        evolution: Evolution | None = None,
        cost: float = 1.0,
        benefit: float = 5.0,
        gossip: bool = True,
        error: float = 0.0,
        gossip_reach: float = 1.0,
        distilled: Mapping[str, Any] | None = None,
    ):
        self.seeds = check_generation_seeds(seeds)
        self.rounds = check_count("rounds", rounds, 1)
        self.evolution = Evolution() if evolution is None else evolution
        if not isinstance(self.evolution, Evolution):
            raise ValueError(f"evolution: must be an Evolution, got {evolution!r}")
        self.society = ReplicatedSociety(
            population,
            seeds=[generation_seed(seed, 0) for seed in self.seeds],
            cost=cost,
            benefit=benefit,
            gossip=gossip,
            error=error,
            gossip_reach=gossip_reach,
            distilled=distilled,
        )
        if self.evolution.names != self.society.names:  # the codes of a roster with distilled
            self.evolution = replace(self.evolution, names=self.society.names)
        self.society.counting = False  # the generations are read from the agents' state
        self.shown = shown_strategies(self.society.population, self.evolution)
        self.generation = 0
        self.parents: np.ndarray | None = None  # none before the first update
        self._update_due = False
        self._rows: list[dict[str, np.ndarray]] = []

    def step(self, parallel: bool | None = None) -> dict[str, np.ndarray]:
        """Play the next generation (after updating the last one played, if any); its
        statistics, one value per replicate. ``parallel`` is :meth:`ReplicatedSociety.play`'s."""
        if self._update_due:
            self._update()
        society = self.society
        society.play(self.rounds, parallel=parallel)
        self._update_due = True
        row = generation_statistics(
            society.strategy,
            society.helps_given,
            society.helps_received,
            self.rounds,
            society.cost,
            society.benefit,
            self.shown,
            society.names,
        )
        self._rows.append(row)
        return row

    def _update(self) -> None:
        """Each replicate's next generation by the rule, from this one's strategies and
        payoffs; then its agents are born and it draws from the next generation's seed."""
        society, g = self.society, self.generation
        strategies, payoff = society.strategy, society.payoff
        born = [
            self.evolution.update(strategies[r], payoff[r], update_generator(generation_seed(s, g)))
            for r, s in enumerate(self.seeds)
        ]
        self.generation = g + 1
        #: per replicate, the agent of the generation before whose strategy each one inherited
        self.parents = np.stack([generation.parents for generation in born])
        society.newborn(
            np.stack([generation.strategies for generation in born]),
            [generation_seed(seed, g + 1) for seed in self.seeds],
        )

    @property
    def replicates(self) -> int:
        return len(self.seeds)

    def run(self, generations: int, parallel: bool | None = None) -> Any:
        """Play ``generations`` more generations; :meth:`statistics` of every one so far.

        With ``parallel``, two replicates or more (on Linux) are split once for the whole run:
        a forked process plays the first half's generations, updates included, while this one
        plays the rest; one replicate draws ahead in a thread (:meth:`ReplicatedSociety.play`).
        ``None`` asks for it when this process may use a second CPU, from
        :data:`~socialsim.society.vectorised.PARALLEL_MIN_WORK` agent-rounds. The results are
        those of ``parallel=False``."""
        check_count("generations", generations, 0)
        society = self.society
        if parallel is None:
            work = self.replicates * society.n_agents * self.rounds * generations
            parallel = len(os.sched_getaffinity(0)) > 1 and (
                self.replicates == 1 or work >= PARALLEL_MIN_WORK
            )
        if parallel and self.replicates > 1 and sys.platform == "linux" and generations:
            split(self, lambda part: part._generations(generations, False))
        else:
            self._generations(generations, parallel)
        return self.statistics()

    def _generations(self, generations: int, parallel: bool | None) -> None:
        for _ in range(generations):
            self.step(parallel)

    def _part(self, first: int, stop: int) -> EvolvingSociety:
        """Replicates ``first`` to ``stop - 1`` as a run of their own, from where they are."""
        part = copy.copy(self)
        part.seeds = self.seeds[first:stop]
        part.society = self.society._part(first, stop)
        part.parents = None if self.parents is None else self.parents[first:stop]
        part._rows = []
        return part

    def _played(self) -> tuple:
        """What a part played, for :meth:`_take`."""
        return self.society._played(), self._rows, self.parents, self.generation, self._update_due

    def _take(self, parts: list[tuple]) -> None:
        """Take back what consecutive parts of the replicates, from the first, played."""
        self.society._take([part[0] for part in parts])
        for rows in zip(*(part[1] for part in parts), strict=True):
            self._rows.append(
                {name: np.concatenate([row[name] for row in rows]) for name in rows[0]}
            )
        if parts[0][2] is not None:
            self.parents = np.concatenate([part[2] for part in parts])
        self.generation, self._update_due = parts[0][3], parts[0][4]

    def statistics(self) -> Any:
        """Every generation's statistics so far, a float DataFrame indexed by ``(replicate,
        generation)``: ``.loc[r]`` is replicate ``r``'s, seeded ``seeds[r]``."""
        return statistics_table(self._rows, len(self.seeds))


def statistics_table(rows: list[dict[str, np.ndarray]], replicates: int) -> Any:
    """Per-generation rows (each a dict of columns, one value per replicate) as a DataFrame
    indexed by ``(replicate, generation)``."""
    import pandas as pd

    index = pd.MultiIndex.from_product(
        [range(replicates), range(len(rows))], names=["replicate", "generation"]
    )
    names = list(rows[0]) if rows else ["cooperation", "mean_payoff"]
    data = {name: np.stack([row[name] for row in rows], axis=-1).ravel() for name in names}
    if not rows:
        data = {name: [] for name in names}
    return pd.DataFrame(data, index=index, columns=names, dtype=float)
