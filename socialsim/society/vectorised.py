"""The gossip society as arrays: the same model as :mod:`socialsim.society.mesa_model`, for scale.

This engine plays exactly the rules of the Mesa model (see its docstring) on numpy arrays, one
round per :meth:`VectorSociety.step`, and draws from its ``numpy`` Generator in the same order:
per round ``rng.permutation(n_agents)`` (paired in order as the donation env's random schedule
pairs it: ``order[0]`` donates to ``order[1]``, ``order[2]`` to ``order[3]``...; the last agent
sits out when ``n_agents`` is odd), then, only when ``error > 0``, ``rng.random(n_agents // 2)``
(the pair's donor slips when its draw is below ``error``); and, only when ``gossip_reach < 1``,
``random(n_agents // 2)`` from the Generator's reach child
(:func:`~socialsim.envs.gossip.reach.reach_generator`: pair ``k``'s donor knows its
recipient's reputation when its draw is below ``gossip_reach``). So for the same arguments and
seed both engines produce the same statistics, value for value; ``tests/test_society.py``
checks it.

Replicates in one array program: :class:`ReplicatedSociety` plays ``R = len(seeds)``
independent copies of one population as ``(R, n_agents)`` arrays, one array call per
operation for all of them. Replicate ``r`` draws from its own ``default_rng(seeds[r])`` (and
its reach child) as above, so it is exactly ``VectorSociety(population, seed=seeds[r])``
(``tests/test_society_batched.py`` checks it): the fast form of many seeds of a population::

    from socialsim.society.vectorised import ReplicatedSociety

    batch = ReplicatedSociety({"stern_judging": 800, "always_defect": 200}, seeds=range(100))
    stats = batch.run(1000)                  # DataFrame indexed by (replicate, round)
    stats.loc[7]                             # == VectorSociety(..., seed=7).run(1000)
    stats.groupby("round").mean()            # the mean over replicates, round by round
    batch.payoff                             # (100, 1000) cumulative payoffs

:class:`VectorSociety` is the one-replicate case (a Generator ``rng``, 1-D ``payoff``).

Every agent's reputation under every norm is one int64 state per agent, and what a pair does
is a lookup by its key, in tables built from ``norms.decide`` and ``norms.assess``
(:mod:`socialsim.society.pair_tables`); a round's statistics are counts of the pairs' bins.
A round is drawn (its pairs: :func:`~socialsim.society.kernels.shuffle`, numpy's shuffle
exactly; its reach) and then played (:func:`~socialsim.society.kernels.play_pairs`): one
compiled pass over the pairs with numba (the ``fast`` extra), about twenty array calls into
buffers allocated once without it, the same results either way; no Python loop over agents
(one over replicates, for their draws: see the benchmark).

``run(parallel=None)`` may use a second CPU, with the same results: see :mod:`.parallel`.

Import: ``from socialsim.society.vectorised import ReplicatedSociety, VectorSociety``. Agent
``i`` has strategy ``strategy_names(population)[i]``. Memory per agent and replicate: 16 bytes of
state (record and helps given, helps received) and about 45 of round buffers (30 compiled).
Distilled strategies (``distilled=``) play as :mod:`.distilled` says. Benchmarks:
``experiments/bench/society_bench.py``, ``evolution_bench.py`` (their docstrings have the figures).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from socialsim.envs.gossip.reach import reach_generator
from socialsim.society.distilled import DrawnPlay, playable, roster
from socialsim.society.kernels import NO_RULES, PairBuffers, compiled, play_pairs, shuffle
from socialsim.society.pair_tables import (
    CODE,
    COUNTS,
    HELPS,
    MAX_ROUNDS,
    PAIR_TABLES,
    RECORD,
    count_projection,
)
from socialsim.society.parallel import run_drawing_ahead, run_split
from socialsim.society.population import (
    check_count,
    check_parameters,
    check_population,
    check_seeds,
    mean_round_payoff,
    payoff_column,
    statistic_columns,
    statistics_frame,
)

# Agents (replicates x agents) played round after round together: a block's buffers (about 60
# bytes an agent) stay in a core's cache from the draws to the play and the next round; blocks
# of 20k to 32k agents played fastest (``society_bench.py --profile``).
BLOCK_AGENTS = 25_000
# Agents from which run() draws a lone replicate's next round in a thread by default: a round
# of fewer draws in calls too short for two threads to overlap under the GIL.
DRAW_AHEAD_MIN_AGENTS = 10_000
# Agent-rounds (replicates x agents x rounds) from which run() splits the replicates between
# two processes by default: the fork, the hand-back and the join take about 30 ms (the fork 9 ms,
# 23 ms beside 6 GiB of arrays), so a split saves time from about here (20 x 10^3 agents x 250
# rounds: 138 against 145 ms) and more the longer the run (100 x 10^3 x 100: 0.21 against 0.34 s).
PARALLEL_MIN_WORK = 5_000_000


class ReplicatedSociety:
    """``len(seeds)`` replicates of one society, played together as ``(replicates, n_agents)``
    arrays; replicate ``r`` is exactly the single run seeded ``seeds[r]``.

    The other arguments are those of :class:`socialsim.society.mesa_model.SocietyModel`;
    ``distilled`` names distilled strategies (:class:`socialsim.distill.strategy.Strategy`)
    that ``population`` may count beside the scripted ones (:mod:`.distilled`; their agents'
    draws need integer seeds).
    ``rngs[r]`` is replicate ``r``'s Generator; ``state`` (every agent's public record, see
    :mod:`socialsim.society.pair_tables`, and helps given) and ``helps_received`` are
    ``(replicates, n_agents)`` arrays, as are ``record`` and ``helps_given`` read from the
    state; :meth:`statistics` is every round played so far, indexed by ``(replicate, round)``.
    """

    def __init__(
        self,
        population: Mapping[str, int],
        *,
        seeds: Iterable[Any],
        cost: float = 1.0,
        benefit: float = 5.0,
        gossip: bool = True,
        error: float = 0.0,
        gossip_reach: float = 1.0,
        distilled: Mapping[str, Any] | None = None,
    ):
        self.names = roster(distilled)
        self.distilled = playable(distilled)
        self.population = check_population(population, self.names)
        check_parameters(cost, benefit, error, gossip, gossip_reach)
        self.cost, self.benefit = float(cost), float(benefit)
        self.gossip, self.error = gossip, float(error)
        self.gossip_reach = float(gossip_reach)
        seeds = check_seeds(seeds)
        rngs = [np.random.default_rng(seed) for seed in seeds]
        # strategy_names' blocks, without a Python loop over agents (a part is made often)
        blocks = [(self.names.index(s), count) for s, count in self.population.items()]
        codes = np.repeat(*np.array(blocks, dtype=np.int32).T)
        self.replicates, self.n_agents = len(rngs), len(codes)
        shape, half = (self.replicates, self.n_agents), self.n_agents // 2
        self.present = [self.names.index(s) for s, count in self.population.items() if count]
        self.counts = np.bincount(codes, minlength=len(self.names))
        # no tones, nobody is bad, no helps
        self.state = np.tile(codes.astype(np.int64) * 4 * RECORD, (self.replicates, 1))
        self.helps_received = np.zeros(shape, dtype=np.int64)  # add.at's fast path: one type
        self.round = 0
        self.counting = True  #: keep each round's counts for statistics() (costs a bincount)
        self._effect, self._count_bin = PAIR_TABLES[gossip]
        self._projection = COUNTS
        self._drawn: DrawnPlay | None = None  # with distilled strategies: their draws
        if self.distilled:
            self._drawn = DrawnPlay(gossip, self.distilled, shape, seeds)
            self._projection = count_projection(len(self.names))
        # Per round, (replicates, COUNTS columns): the claims, the helps by strategy.
        self._counts: list[np.ndarray] = []
        # Per-round buffers, allocated once; the draws have two, the second for drawing ahead
        # in a thread. An agent's index into the flat arrays is replicate * n_agents + agent
        # (int32 when compiled: half the bytes for the shuffle to move).
        small = compiled() is not None and self.replicates * self.n_agents < 2**31
        self._agents = np.arange(
            self.replicates * self.n_agents, dtype=np.int32 if small else np.intp
        ).reshape(shape)
        self._order = [np.empty_like(self._agents) for _ in range(2)]
        self._uniforms = [np.empty((self.replicates, half)) for _ in range(2)]
        self._reach = [np.empty((self.replicates, half)) for _ in range(2)]
        self.use_generators(rngs, [reach_generator(rng) for rng in rngs])
        self._buffers = PairBuffers(self.replicates, half) if compiled() is None else None
        self._flat = [a.reshape(-1) for a in (self.state, self.helps_received)]

    def use_generators(
        self, rngs: list[np.random.Generator], reach_rngs: list[np.random.Generator]
    ) -> None:
        """Draw from now on from ``rngs`` (pairs, slips) and ``reach_rngs``, one per replicate."""
        self.rngs, self.reach_rngs = rngs, reach_rngs
        # (Generators, the rows of the order, the uniforms, the reach) per replicate and buffer
        self._draw_rows = [
            list(zip(rngs, reach_rngs, order, uniforms, reach, strict=True))
            for order, uniforms, reach in zip(self._order, self._uniforms, self._reach, strict=True)
        ]

    def newborn(self, strategies: np.ndarray, seeds: Iterable[Any]) -> None:
        """A new generation: agent ``i`` of replicate ``r`` is born with strategy code
        ``strategies[r, i]``, no tones, no helps; replicate ``r`` draws as one seeded
        ``seeds[r]`` would. Rounds count from 0; :meth:`statistics` ends (read the state)."""
        codes = np.asarray(strategies)
        if codes.shape != self.state.shape or not 0 <= codes.min() <= codes.max() < len(self.names):
            raise ValueError(
                f"strategies: must be {self.state.shape} codes 0-{len(self.names) - 1}"
            )
        seeds = check_seeds(seeds)
        rngs = [np.random.default_rng(seed) for seed in seeds]
        if len(rngs) != self.replicates:
            raise ValueError(f"seeds: needs one per replicate ({self.replicates}), got {len(rngs)}")
        np.multiply(codes.astype(np.int64), 4 * RECORD, out=self.state)
        self.helps_received[...] = 0
        self.round, self._counts, self.present = 0, [], []
        self.use_generators(rngs, [reach_generator(rng) for rng in rngs])
        if self._drawn is not None:
            self._drawn.seed(seeds)

    @property
    def record(self) -> np.ndarray:
        """Every agent's public record (see :mod:`~socialsim.society.pair_tables`), per
        replicate."""
        return (self.state >> 32).astype(np.int32)

    @property
    def helps_given(self) -> np.ndarray:
        """Per agent and replicate: the helps it gave."""
        return self.state & HELPS

    @property
    def strategy(self) -> np.ndarray:
        """Agent -> strategy code (an index into :attr:`names`), per replicate."""
        return (self.record & CODE) >> 2

    @property
    def valence_sum(self) -> np.ndarray:
        """Per agent and replicate: the sum of the valences of the tones about it."""
        return self.record >> 5  # floor division by VALENCE

    @property
    def payoff(self) -> np.ndarray:
        """Every agent's cumulative payoff, per replicate."""
        return self.helps_received * self.benefit - self.helps_given * self.cost

    def _draw(self, buffer: int = 0) -> None:
        """Draw the next round of every replicate into ``buffer``: its pairs, then its reach."""
        self._draw_pairs(buffer)
        self._draw_reach(buffer)

    def _arrange(self, buffer: int) -> None:
        """Put the agents in order in ``buffer``: what the next shuffle starts from."""
        self._order[buffer][...] = self._agents

    def _draw_pairs(self, buffer: int = 0, arranged: bool = False) -> None:
        """In each replicate's Generator, the pairing permutation (``shuffle`` of ``arange`` is
        ``permutation``; ``arranged``: :meth:`_arrange` was called), then (only with
        ``error > 0``) one slip draw per pair."""
        if not arranged:
            self._arrange(buffer)
        slips = self.error > 0
        for rng, _, agents, uniforms, _ in self._draw_rows[buffer]:
            shuffle(rng, agents)
            if slips:
                rng.random(out=uniforms)

    def _draw_reach(self, buffer: int = 0) -> None:
        """In each replicate's reach Generator (only with ``gossip_reach < 1``), one draw per
        pair."""
        if self.gossip_reach < 1:
            for _, reach_rng, _, _, reach in self._draw_rows[buffer]:
                reach_rng.random(out=reach)

    def _play(self, buffer: int = 0) -> None:
        """Play one round of every replicate with the draws in ``buffer``
        (:func:`~socialsim.society.kernels.play_pairs`)."""
        bins = 6 * len(self.names) ** 2 if self.counting else 0
        counts = np.zeros((self.replicates, bins), np.int64)
        if self._drawn is not None:
            self._drawn.play(
                self._order[buffer],
                *self._flat,
                (self._uniforms[buffer], self.error, self._reach[buffer], self.gossip_reach),
                counts,
                self.round + 1,
                self._buffers,
            )
        else:
            play_pairs(
                self._order[buffer],
                *self._flat,
                self._effect,
                self._uniforms[buffer],
                self.error,
                self._reach[buffer],
                self.gossip_reach,
                self._count_bin,
                counts,
                NO_RULES,
                NO_RULES,
                buffers=self._buffers,
            )
        self.round += 1
        if self.counting:
            self._counts.append(counts @ self._projection)

    def step(self) -> dict[str, np.ndarray]:
        """Play one round of every replicate; its statistics, one value per replicate."""
        self._draw()
        self._play()
        return self.columns(*self._split(self._counts[-1]))

    def _split(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Counts (rows of :data:`COUNTS`'s columns) -> claims, helps given and received by
        the strategies present."""
        n = len(self.names)
        given, received = counts[..., 3 : 3 + n], counts[..., 3 + n :]
        return counts[..., :3], given[..., self.present], received[..., self.present]

    def run(
        self, rounds: int, parallel: bool | None = None, block_agents: int | None = None
    ) -> Any:
        """:meth:`play` ``rounds`` rounds; :meth:`statistics` of every round so far."""
        self.play(rounds, parallel, block_agents)
        return self.statistics()

    def play(
        self, rounds: int, parallel: bool | None = None, block_agents: int | None = None
    ) -> None:
        """Play ``rounds`` rounds of every replicate.

        The replicates are played in blocks of ``block_agents`` agents (default
        :data:`BLOCK_AGENTS`), each block all its rounds before the next, whose buffers stay in
        a core's cache; a machine with another cache may want another size.

        With ``parallel``, two replicates or more (on Linux) are split: a forked process plays
        the first half while this one plays the rest; a lone replicate (or any batch elsewhere)
        has a thread draw each next round while this one is played. ``None`` (the default)
        asks for it when this process may use a second CPU, from :data:`PARALLEL_MIN_WORK`
        agent-rounds for a split and :data:`DRAW_AHEAD_MIN_AGENTS` agents for a lone
        replicate. Each replicate's draws are made in its own Generator's order, by one process
        and thread at a time, so the results and the Generators' states afterwards are exactly
        those of ``parallel=False``.
        """
        why = f" (a generation holds {MAX_ROUNDS:,} rounds: 24 bits of helps given)"
        check_count("rounds", rounds, 0, MAX_ROUNDS - self.round, why)
        if parallel is None:
            parallel = len(os.sched_getaffinity(0)) > 1 and (
                self.replicates * self.n_agents * rounds >= PARALLEL_MIN_WORK
                if self.replicates > 1
                else self.n_agents >= DRAW_AHEAD_MIN_AGENTS
            )
        if not isinstance(parallel, bool):
            raise ValueError(f"parallel: must be true, false or None, got {parallel!r}")
        block_agents = check_count(
            "block_agents", BLOCK_AGENTS if block_agents is None else block_agents, 1
        )
        if not parallel or rounds < 2:
            self._play_rounds(rounds, block_agents)
        elif self.replicates > 1 and sys.platform == "linux":
            run_split(self, rounds, block_agents)
        else:
            run_drawing_ahead(self, rounds)

    def _play_rounds(self, rounds: int, block_agents: int) -> None:
        """Play ``rounds`` rounds here, in blocks of ``block_agents`` agents (at least one
        replicate): each block of replicates all its rounds, then the next."""
        block = max(1, block_agents // self.n_agents)
        if self.replicates <= block or rounds < 2:
            for _ in range(rounds):
                self._draw()
                self._play()
            return
        parts = []
        for first in range(0, self.replicates, block):
            part = self._part(first, min(first + block, self.replicates))
            part._play_rounds(rounds, block_agents)
            parts.append(part._played())
        self._take(parts)

    def _part(self, first: int, stop: int) -> ReplicatedSociety:
        """Replicates ``first`` to ``stop - 1`` as a batch of their own, from where they are:
        their Generators themselves, copies of their state."""
        part = ReplicatedSociety(
            self.population,
            seeds=self.rngs[first:stop],  # default_rng(a Generator) is that Generator
            cost=self.cost,
            benefit=self.benefit,
            gossip=self.gossip,
            error=self.error,
            gossip_reach=self.gossip_reach,
            distilled=self.distilled,
        )
        part.use_generators(self.rngs[first:stop], self.reach_rngs[first:stop])
        if self._drawn is not None:
            part._drawn.take_seeds(self._drawn, first, stop)
        part.state[...] = self.state[first:stop]
        part.helps_received[...] = self.helps_received[first:stop]
        part.round, part.counting = self.round, self.counting
        return part

    def _played(self) -> tuple:
        """What a part played, for :meth:`_take`: its state, helps received, round counts
        ``(rounds, replicates, ...)``, its Generators' states (a fork's are copies), round."""
        states = [rng.bit_generator.state for rng in self.rngs + self.reach_rngs]
        counts = np.zeros((0, self.replicates, self._projection.shape[1]))
        if self._counts:
            counts = np.stack(self._counts)
        return self.state, self.helps_received, counts, states, self.round

    def _take(self, parts: list[tuple]) -> None:
        """Take back what consecutive parts of the replicates, from the first, played."""
        first = 0
        for state, received, _, generators, _ in parts:
            stop = first + len(state)
            self.state[first:stop], self.helps_received[first:stop] = state, received
            mine = self.rngs[first:stop] + self.reach_rngs[first:stop]
            for rng, generator in zip(mine, generators, strict=True):
                rng.bit_generator.state = generator
            first = stop
        self._counts.extend(np.concatenate([part[2] for part in parts], axis=1))
        self.round = parts[0][4]

    def columns(
        self, claims: np.ndarray, given: np.ndarray, received: np.ndarray
    ) -> dict[str, np.ndarray]:
        """The statistics (:func:`statistic_columns`) of rounds from their counts: ``claims``
        ``(..., 3)`` (none, true, false), the helps ``given`` and ``received`` ``(..., present
        strategies)``."""
        n_claims = claims[..., 1] + claims[..., 2]
        accuracy = np.full(n_claims.shape, math.nan)
        np.divide(claims[..., 1], n_claims, out=accuracy, where=n_claims > 0)
        columns = {
            "cooperation_rate": given.sum(axis=-1) / (self.n_agents // 2),
            "reputation_accuracy": accuracy,
        }
        for j, code in enumerate(self.present):
            columns[payoff_column(self.names[code])] = mean_round_payoff(
                given[..., j], received[..., j], int(self.counts[code]), self.cost, self.benefit
            )
        return columns

    def round_counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The counts of every round so far, the arguments of :meth:`columns`, each
        ``(replicates, rounds, ...)``."""
        counts = np.zeros((self.replicates, 0, self._projection.shape[1]))
        if self._counts:
            counts = np.stack(self._counts, axis=1)
        return self._split(counts)

    def statistics(self) -> Any:
        """Per-round statistics of every replicate so far, a float DataFrame indexed by
        ``(replicate, round)`` (``replicate`` 0, 1, ... in the order of ``seeds``; ``round``
        from 1): ``.loc[r]`` is the table of the single run seeded ``seeds[r]``."""
        import pandas as pd

        if not self.present or not self.counting:
            raise ValueError(
                "statistics: no per-round counts kept (counting is off, or a new generation was"
                " born); read the agents' state, as socialsim.society.generations does"
            )

        index = pd.MultiIndex.from_product(
            [range(self.replicates), range(1, self.round + 1)], names=["replicate", "round"]
        )
        columns = {
            name: values.ravel() for name, values in self.columns(*self.round_counts()).items()
        }
        columns_ = statistic_columns(self.population, self.names)
        return pd.DataFrame(columns, index=index, columns=columns_)


class VectorSociety:
    """The random-matching donation game with tone-based reputation, on arrays: one replicate
    of :class:`ReplicatedSociety`.

    Arguments are those of :class:`socialsim.society.mesa_model.SocietyModel`. :meth:`step`
    returns the round's statistics (the keys of :func:`statistic_columns`), :meth:`run` the
    table of every round so far; :attr:`payoff` is every agent's cumulative payoff.
    """

    def __init__(self, population: Mapping[str, int], *, seed: int | None = None, **options: Any):
        # cost, benefit, gossip, error, gossip_reach, distilled: ReplicatedSociety's
        self.society = ReplicatedSociety(population, seeds=[seed], **options)
        self.population, self.n_agents = self.society.population, self.society.n_agents
        self.rng = self.society.rngs[0]

    @property
    def round(self) -> int:
        return self.society.round

    @property
    def strategy(self) -> np.ndarray:
        """Agent index -> strategy code (an index into the society's ``names``)."""
        return self.society.strategy[0]

    @property
    def payoff(self) -> np.ndarray:
        """Every agent's cumulative payoff."""
        return self.society.payoff[0]

    @property
    def statistics(self) -> list[dict[str, float]]:
        """One dict of statistics per round played."""
        return self.frame().to_dict("records")

    def step(self) -> dict[str, float]:
        """Play one round and return its statistics."""
        return {name: float(value[0]) for name, value in self.society.step().items()}

    def run(self, rounds: int, parallel: bool | None = None) -> Any:
        """Play ``rounds`` rounds (see :meth:`ReplicatedSociety.run` for ``parallel``: here, a
        thread drawing ahead); the statistics of every round so far as a DataFrame (index
        ``round`` from 1)."""
        self.society.run(rounds, parallel=parallel)
        return self.frame()

    def frame(self) -> Any:
        """The statistics of every round so far as a DataFrame (index ``round`` from 1)."""
        columns = self.society.columns(*(counts[0] for counts in self.society.round_counts()))
        return statistics_frame(columns, statistic_columns(self.population, self.society.names))
