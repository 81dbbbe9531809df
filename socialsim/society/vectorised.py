"""The gossip society as arrays: the same model as :mod:`socialsim.society.mesa_model`, for scale.

This engine plays exactly the rules of the Mesa model (see its docstring) on numpy arrays, one
round per :meth:`VectorSociety.step`, and draws from its ``numpy`` Generator in the same order:
per round ``rng.permutation(n_agents)`` (the first half of the permutation donates to the
second half, position by position; the last agent sits out when ``n_agents`` is odd), then,
only when ``error > 0``, ``rng.random(n_agents // 2)`` (the pair's donor slips when its draw is
below ``error``). So for the same arguments and seed both engines produce the same statistics,
value for value; ``tests/test_society.py`` checks it.

Replicates in one array program: :class:`ReplicatedSociety` plays ``R = len(seeds)``
independent copies of one population as ``(R, n_agents)`` arrays, every round one array call
per operation for all of them. Replicate ``r`` draws from its own ``default_rng(seeds[r])`` in
the order above, so it is exactly ``VectorSociety(population, seed=seeds[r])`` (the same
statistics, payoffs and final Generator state); ``tests/test_society_batched.py`` checks it.
This is the fast form of the common experiment, many seeds of a small population::

    from socialsim.society.vectorised import ReplicatedSociety

    batch = ReplicatedSociety({"stern_judging": 800, "always_defect": 200}, seeds=range(100))
    stats = batch.run(1000)                  # DataFrame indexed by (replicate, round)
    stats.loc[7]                             # == VectorSociety(..., seed=7).run(1000)
    stats.groupby("round").mean()            # the mean over replicates, round by round
    batch.payoff                             # (100, 1000) cumulative payoffs

:class:`VectorSociety` is the one-replicate case of the same engine, with a single
Generator (``rng``), 1-D ``payoff`` and a table indexed by ``round``.

Because every tone is public, all observers that follow one norm hold the same view of an
agent: :func:`socialsim.envs.gossip.norms.reputation` is kept up to date with two facts per
agent, bad under image scoring (the valences of the tones about it sum below 0) and bad under
standing/stern judging (its latest non-neutral tone is bad), both in one record per agent
(:data:`VALENCE`), the high half of the agent's int64 state, whose low half counts the helps it
gave (:data:`RECORD`). A pair is one key, and everything it does is a lookup by its key in tables
built from ``norms.decide`` and ``norms.assess``; a round's statistics are one ``bincount``.
A round costs about twenty array calls whatever the number of agents or replicates, into
buffers allocated once, and no Python loop over agents (one loop over replicates, for their
draws, which are about two thirds of a round of 10^3 agents: see the benchmark).

``run(prefetch=None)`` chooses by size: from :data:`PREFETCH_MIN_AGENTS` agents in all in
populations of :data:`PREFETCH_MIN_POPULATION` or more, given a second CPU, a second thread
draws the next round while this one is played (``shuffle`` and ``random`` release the GIL), and
the main thread draws with it what is left once its play is done; below either size the
hand-off costs more than it saves (a replicate of 10^3 agents draws in calls too short for the
two threads to overlap). Each replicate's draws are made by one thread, in order, so the results
are the same either way.

| | |
|---|---|
| Import | `from socialsim.society.vectorised import ReplicatedSociety, VectorSociety` |
| Agents | `n_agents` = sum of the population counts; agent `i` has strategy `strategy_names[i]` |
| Replicates | `ReplicatedSociety(population, seeds=[...])`: replicate `r` is the run seeded `seeds[r]` |
| Memory | per agent and replicate: 16 bytes of state (record and helps given, helps received) and about 60 of round buffers |
| Benchmark | `experiments/bench/society_bench.py` (its docstring has the figures) |
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from socialsim.envs.gossip import norms
from socialsim.envs.gossip.norms import NORMS
from socialsim.society.population import (
    STRATEGIES,
    check_parameters,
    check_population,
    check_seeds,
    mean_round_payoff,
    payoff_column,
    statistic_columns,
    statistics_frame,
    strategy_names,
)


def _helps(strategy: int, bad_image: int, bad_standing: int) -> bool:
    """Does a donor of ``strategy`` (an index into :data:`STRATEGIES`) mean to help a recipient
    whose reputation is bad under image scoring / under standing and stern judging?"""
    name = STRATEGIES[strategy]
    if name in ("always_cooperate", "always_defect"):
        return name == "always_cooperate"
    bad = bad_image if name == "image_scoring" else bad_standing
    return norms.decide(name, -1 if bad else 1) == "cooperate"


def _tone(strategy: int, helped: bool, bad_standing: int) -> int:
    """Valence of the tone a recipient of ``strategy`` publishes about its donor, from
    ``norms.assess``. Always-cooperate and always-defect recipients judge by image scoring
    (honest reports); image scoring ignores the recipient, standing and stern read its standing."""
    name = STRATEGIES[strategy]
    norm = name if name in NORMS else "image_scoring"
    action = "cooperate" if helped else "defect"
    return norms.valence(norms.assess(norm, action, -1 if bad_standing else 1))


# An agent's public record is a 32-bit integer, ``valence_sum * VALENCE + strategy * 4 +
# bad_standing * 2``: its image is bad exactly when the record is negative (the valence sum of
# the tones about it is), so one add per tone keeps both views of its reputation.
VALENCE = 32
CODE = VALENCE - 1  # the record's low bits: strategy * 4 + bad_standing * 2
# A pair's key: slipped * SLIPPED + donor (record & CODE) * VALENCE + recipient (record & CODE
# | bad_image), i.e. what the donor is, what the recipient is and how it is seen, and the slip.
SLIPPED = VALENCE * VALENCE
KEYS = 2 * SLIPPED
# An agent's state is one int64, ``record * RECORD + helps_given``: the record in the high 32
# bits (so the state is negative exactly when the record is), the helps it gave in the low 32,
# so that what a donor's round changes is one add.
RECORD = 1 << 32
# A round's counts per replicate: one bincount of the pairs by (helped, claim, donor's strategy,
# recipient's strategy); a claim is 0 none (a neutral tone), 1 true, 2 false.
BINS = (2, 3, len(STRATEGIES), len(STRATEGIES))
# Agents in all (replicates x agents) from which run() draws in a second thread by default.
PREFETCH_MIN_AGENTS = 30_000
# ... and agents per population (100 replicates of 10^3 agents play faster without the thread).
PREFETCH_MIN_POPULATION = 10_000


def _pair_tables(gossip: bool) -> tuple[np.ndarray, np.ndarray]:
    """What a donor-recipient pair does, by pair key: what the round adds to the donor's
    state (:data:`RECORD`: the tone's valence and the change of its standing to its record,
    whether it helped to its helps given), and the pair's bin of the round's counts. Keys that
    no pair can have stay 0."""
    effect = np.zeros(KEYS, dtype=np.int64)
    count_bin = np.zeros(KEYS, dtype=np.intp)
    codes = [(s, bit) for s in range(len(STRATEGIES)) for bit in (0, 1)]  # strategy, standing
    for slipped in (0, 1):
        for donor, donor_bad in codes:
            for recipient, recipient_bad in codes:
                for bad_image in (0, 1):
                    low = (donor * 4 + donor_bad * 2, recipient * 4 + recipient_bad * 2)
                    key = slipped * SLIPPED + low[0] * VALENCE + low[1] + bad_image
                    helped = _helps(donor, bad_image, recipient_bad) and not slipped
                    tone = _tone(recipient, helped, recipient_bad) if gossip else 0
                    # standing follows the latest non-neutral tone
                    now_bad = (tone < 0) if tone else donor_bad
                    record_change = tone * VALENCE + (now_bad - donor_bad) * 2
                    effect[key] = record_change * RECORD + helped
                    # a claim is true when its sign is the donor's: +1 a help, -1 a refusal
                    claim = 0 if tone == 0 else 1 if tone == (1 if helped else -1) else 2
                    count_bin[key] = np.ravel_multi_index((helped, claim, donor, recipient), BINS)
    return effect, count_bin


_PAIR_TABLES = {gossip: _pair_tables(gossip) for gossip in (False, True)}


def _count_projection() -> np.ndarray:
    """Bins -> a round's counts: the claims (none, true, false), then the helps given by each
    donor strategy, then the helps received by each recipient strategy. Float, for BLAS: the
    counts are integers, exact in float64."""
    helped, claim, donor, recipient = np.unravel_index(np.arange(math.prod(BINS)), BINS)
    n = len(STRATEGIES)
    projection = np.zeros((math.prod(BINS), 3 + 2 * n))
    projection[np.arange(len(claim)), claim] = 1
    projection[helped == 1, 3 + donor[helped == 1]] = 1
    projection[helped == 1, 3 + n + recipient[helped == 1]] = 1
    return projection


_COUNTS = _count_projection()


class ReplicatedSociety:
    """``len(seeds)`` replicates of one society, played together as ``(replicates, n_agents)``
    arrays; replicate ``r`` is exactly the single run seeded ``seeds[r]``.

    The other arguments are those of :class:`socialsim.society.mesa_model.SocietyModel`.
    ``rngs[r]`` is replicate ``r``'s Generator; ``state`` (every agent's public record, see
    :data:`VALENCE`, and helps given, see :data:`RECORD`) and ``helps_received`` are
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
    ):
        self.population = check_population(population)
        check_parameters(cost, benefit, error, gossip)
        self.cost, self.benefit = float(cost), float(benefit)
        self.gossip, self.error = gossip, float(error)
        self.rngs = [np.random.default_rng(seed) for seed in check_seeds(seeds)]
        codes = np.asarray(
            [STRATEGIES.index(s) for s in strategy_names(self.population)], dtype=np.int32
        )
        self.replicates, self.n_agents = len(self.rngs), len(codes)
        shape, half = (self.replicates, self.n_agents), self.n_agents // 2
        self.present = [STRATEGIES.index(s) for s, count in self.population.items() if count]
        self.counts = np.bincount(codes, minlength=len(STRATEGIES))
        # no tones, nobody is bad, no helps
        self.state = np.tile(codes.astype(np.int64) * 4 * RECORD, (self.replicates, 1))
        self.helps_received = np.zeros(shape, dtype=np.int64)  # add.at's fast path: one type
        self.round = 0
        self._effect, self._count_bin = _PAIR_TABLES[gossip]
        # Per round, (replicates, _COUNTS columns): the claims, the helps by strategy.
        self._counts: list[np.ndarray] = []
        # Preallocated per-round buffers; the draws have two, the second for prefetching.
        # An agent's index into the flat arrays is replicate * n_agents + agent.
        self._agents = np.arange(self.replicates * self.n_agents).reshape(shape)
        self._order = [np.empty(shape, dtype=np.intp) for _ in range(2)]
        self._uniforms = [np.empty((self.replicates, half)) for _ in range(2)]
        # (Generator, its row of the order, its row of the uniforms) per replicate and buffer
        self._draw_rows = [
            list(zip(self.rngs, order, uniforms, strict=True))
            for order, uniforms in zip(self._order, self._uniforms, strict=True)
        ]
        # The round's pairs, replicate after replicate: (replicates, half) arrays. Donors and
        # recipients are copied out contiguous: np.add.at's fast path needs flat indices.
        pairs = (self.replicates, half)
        self._donors = np.empty(pairs, dtype=np.intp)
        self._recipients = np.empty(pairs, dtype=np.intp)
        self._key = np.empty(pairs, dtype=np.intp)
        self._bits = np.empty(pairs, dtype=np.intp)
        self._slipped = np.empty(pairs, dtype=bool)
        self._helped = np.empty(pairs, dtype=np.int64)
        self._bin_offset = np.repeat(np.arange(self.replicates) * math.prod(BINS), half)
        self._flat = [a.reshape(-1) for a in (self.state, self.helps_received)]
        self._flat_pairs = (self._donors.reshape(-1), self._recipients.reshape(-1))

    @property
    def record(self) -> np.ndarray:
        """Every agent's public record (see :data:`VALENCE`), per replicate."""
        return (self.state >> 32).astype(np.int32)

    @property
    def helps_given(self) -> np.ndarray:
        """Per agent and replicate: the helps it gave."""
        return self.state & (RECORD - 1)

    @property
    def strategy(self) -> np.ndarray:
        """Agent -> strategy code (an index into :data:`STRATEGIES`), per replicate."""
        return (self.record & CODE) >> 2

    @property
    def valence_sum(self) -> np.ndarray:
        """Per agent and replicate: the sum of the valences of the tones about it."""
        return self.record >> 5  # floor division by VALENCE

    @property
    def payoff(self) -> np.ndarray:
        """Every agent's cumulative payoff, per replicate."""
        return self.helps_received * self.benefit - self.helps_given * self.cost

    def _rows(self, buffer: int) -> Iterator[int]:
        """Start the next round's draws into ``buffer``: its order reset to ``arange``, and the
        replicates to draw, an iterator that the drawing threads share (each takes the next)."""
        self._order[buffer][...] = self._agents
        return iter(range(self.replicates))

    def _draw(self, buffer: int, rows: Iterator[int]) -> None:
        """Draw replicates taken from ``rows`` into ``buffer`` until none is left: in each
        replicate's Generator the pairing permutation (``shuffle`` of ``arange`` is
        ``permutation``), then (only with ``error > 0``) one slip draw per pair."""
        draws = self._draw_rows[buffer]
        for replicate in rows:
            rng, agents, uniforms = draws[replicate]
            rng.shuffle(agents)
            if self.error > 0:
                rng.random(out=uniforms)

    def _play(self, buffer: int) -> None:
        """Play one round of every replicate with the draws in ``buffer``."""
        half = self.n_agents // 2
        order = self._order[buffer]
        if self.replicates == 1:  # the halves of one row are flat already
            donors, recipients = order[0, :half], order[0, half : 2 * half]
        else:
            np.copyto(self._donors, order[:, :half])
            np.copyto(self._recipients, order[:, half : 2 * half])
            donors, recipients = self._flat_pairs
        state, helps_received = self._flat

        # Everything is read from the start of the round: the round is simultaneous. Every
        # index is in range by construction, so take's modes agree: "wrap" is the cheapest.
        key, bits = self._key.reshape(-1), self._bits.reshape(-1)
        donor, recipient = state.take(donors, mode="wrap"), state.take(recipients, mode="wrap")
        # unsigned views where only bits are moved: numpy's logical shifts are SIMD loops
        np.right_shift(donor.view(np.uint64), 32 - 5, out=key.view(np.uint64))
        key &= CODE << 5  # (the donor's record & CODE) * VALENCE
        np.right_shift(recipient.view(np.uint64), 32, out=bits.view(np.uint64))
        bits &= CODE
        key |= bits
        np.right_shift(recipient.view(np.uint64), 63, out=bits.view(np.uint64))  # bad image
        key |= bits
        if self.error > 0:
            slipped = np.less(self._uniforms[buffer], self.error, out=self._slipped)
            np.bitwise_or(key, SLIPPED, out=key, where=slipped.reshape(-1))
        effect = self._effect.take(key, mode="wrap")
        np.add.at(state, donors, effect)
        helped = np.bitwise_and(effect, 1, out=self._helped.reshape(-1))
        np.add.at(helps_received, recipients, helped)

        count_bin = self._count_bin.take(key, mode="wrap")
        if self.replicates > 1:
            count_bin += self._bin_offset
        counts = np.bincount(count_bin, minlength=self.replicates * math.prod(BINS))
        self._counts.append(counts.reshape(self.replicates, -1) @ _COUNTS)
        self.round += 1

    def step(self) -> dict[str, np.ndarray]:
        """Play one round of every replicate; its statistics, one value per replicate."""
        self._draw(0, self._rows(0))
        self._play(0)
        return self.columns(*self._split(self._counts[-1]))

    def _split(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Counts (rows of :data:`_COUNTS`'s columns) -> claims, helps given and received by
        the strategies present."""
        n = len(STRATEGIES)
        given, received = counts[..., 3 : 3 + n], counts[..., 3 + n :]
        return counts[..., :3], given[..., self.present], received[..., self.present]

    def run(self, rounds: int, prefetch: bool | None = None) -> Any:
        """Play ``rounds`` rounds of every replicate; :meth:`statistics` of every round so far.

        With ``prefetch`` a second thread draws the next round while this one is played, and
        this thread draws with it the replicates still left once its play is done; ``None``
        (the default) prefetches from :data:`PREFETCH_MIN_AGENTS` agents in all, in populations
        of :data:`PREFETCH_MIN_POPULATION` or more, when the process may use a second CPU. Each
        replicate's draws of a round are made by one thread, after those of the round before and
        never past the last round, so the draws and the results are exactly those of
        ``prefetch=False``.
        """
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
            raise ValueError(f"rounds: must be an integer >= 0, got {rounds!r}")
        if prefetch is None:
            prefetch = (
                self.replicates * self.n_agents >= PREFETCH_MIN_AGENTS
                and self.n_agents >= PREFETCH_MIN_POPULATION
                and len(os.sched_getaffinity(0)) > 1
            )
        if not isinstance(prefetch, bool):
            raise ValueError(f"prefetch: must be true, false or None, got {prefetch!r}")
        if not prefetch or rounds < 2:
            for _ in range(rounds):
                self._draw(0, self._rows(0))
                self._play(0)
        else:
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="society-draws") as pool:
                rows = self._rows(0)
                pending = pool.submit(self._draw, 0, rows)
                for played in range(rounds):
                    buffer = played % 2
                    self._draw(buffer, rows)  # this thread takes what is left to draw
                    pending.result()
                    if played + 1 < rounds:
                        rows = self._rows(1 - buffer)
                        pending = pool.submit(self._draw, 1 - buffer, rows)
                    self._play(buffer)
        return self.statistics()

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
            columns[payoff_column(STRATEGIES[code])] = mean_round_payoff(
                given[..., j], received[..., j], int(self.counts[code]), self.cost, self.benefit
            )
        return columns

    def round_counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The counts of every round so far, the arguments of :meth:`columns`, each
        ``(replicates, rounds, ...)``."""
        counts = np.zeros((self.replicates, 0, _COUNTS.shape[1]))
        if self._counts:
            counts = np.stack(self._counts, axis=1)
        return self._split(counts)

    def statistics(self) -> Any:
        """Per-round statistics of every replicate so far, a float DataFrame indexed by
        ``(replicate, round)`` (``replicate`` 0, 1, ... in the order of ``seeds``; ``round``
        from 1): ``.loc[r]`` is the table of the single run seeded ``seeds[r]``."""
        import pandas as pd

        index = pd.MultiIndex.from_product(
            [range(self.replicates), range(1, self.round + 1)], names=["replicate", "round"]
        )
        columns = {
            name: values.ravel() for name, values in self.columns(*self.round_counts()).items()
        }
        return pd.DataFrame(columns, index=index, columns=statistic_columns(self.population))


class VectorSociety:
    """The random-matching donation game with tone-based reputation, on arrays: one replicate
    of :class:`ReplicatedSociety`.

    Arguments are those of :class:`socialsim.society.mesa_model.SocietyModel`. :meth:`step`
    returns the round's statistics (the keys of :func:`statistic_columns`), :meth:`run` the
    table of every round so far; :attr:`payoff` is every agent's cumulative payoff.
    """

    def __init__(
        self,
        population: Mapping[str, int],
        *,
        cost: float = 1.0,
        benefit: float = 5.0,
        gossip: bool = True,
        error: float = 0.0,
        seed: int | None = None,
    ):
        self.society = ReplicatedSociety(
            population, seeds=[seed], cost=cost, benefit=benefit, gossip=gossip, error=error
        )
        self.population, self.n_agents = self.society.population, self.society.n_agents
        self.rng = self.society.rngs[0]

    @property
    def round(self) -> int:
        return self.society.round

    @property
    def strategy(self) -> np.ndarray:
        """Agent index -> strategy code (an index into :data:`STRATEGIES`)."""
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

    def run(self, rounds: int, prefetch: bool | None = None) -> Any:
        """Play ``rounds`` rounds (see :meth:`ReplicatedSociety.run` for ``prefetch``); the
        statistics of every round so far as a DataFrame (index ``round`` from 1)."""
        self.society.run(rounds, prefetch=prefetch)
        return self.frame()

    def frame(self) -> Any:
        """The statistics of every round so far as a DataFrame (index ``round`` from 1)."""
        columns = self.society.columns(*(counts[0] for counts in self.society.round_counts()))
        return statistics_frame(columns, statistic_columns(self.population))
