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
agent, and :func:`socialsim.envs.gossip.norms.reputation` can be kept up to date as tones
arrive with two facts per agent: is it bad under image scoring (the valences of the tones about
it sum below 0) and is it bad under standing/stern judging (its latest non-neutral tone is bad).
The engine packs them with the agent's strategy into one number, ``state = strategy * 4 +
bad_image * 2 + bad_standing`` (20 states), and a pair into one key, ``slipped * 400 +
donor_state * 20 + recipient_state``. Everything a pair does is a lookup by its key in tables
built from ``norms.decide`` and ``norms.assess``: whether the donor helps, the valence of the
recipient's tone, the donor's new standing, and the tone as a claim (none, true or false). A
round's statistics are then one ``bincount`` of the claims and, for the payoffs, the helps
counters summed over each strategy's block of agents. A round costs about twenty-five array
calls whatever the number of agents or replicates, into buffers allocated once, and no Python
loop over agents (one loop over replicates, for their draws).

``run(prefetch=None)`` chooses by size: from :data:`PREFETCH_MIN_AGENTS` agents in all
(replicates x agents), given a second CPU, a second thread draws the next round's permutations
while this round is played, so that a second core takes the largest single cost; below it the
thread's hand-off costs more than it saves. The thread alone touches the Generators, one round
after another, so the draws and the results are the same either way.

| | |
|---|---|
| Import | `from socialsim.society.vectorised import ReplicatedSociety, VectorSociety` |
| Agents | `n_agents` = sum of the population counts; agent `i` has strategy `strategy_names[i]` |
| Replicates | `ReplicatedSociety(population, seeds=[...])`: replicate `r` is the run seeded `seeds[r]` |
| Memory | per agent and replicate: 14 bytes of state (state, valence sum, helps given and received) and about 50 of round buffers |
| Benchmark | `experiments/bench/society_bench.py` (its docstring has the figures) |
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from socialsim.envs.gossip import norms
from socialsim.envs.gossip.norms import NORMS

STRATEGIES: tuple[str, ...] = ("always_cooperate", "always_defect", *NORMS)
STATISTICS = ("cooperation_rate", "reputation_accuracy")


def _decide_table() -> np.ndarray:
    """Does the donor help? Indexed by ``strategy * 4 + bad_image * 2 + bad_standing`` (the
    recipient's reputation under image scoring and under standing/stern), from ``norms.decide``."""
    table = np.zeros(4 * len(STRATEGIES), dtype=bool)
    for code, strategy in enumerate(STRATEGIES):
        for bad_image in (0, 1):
            for bad_standing in (0, 1):
                if strategy == "always_cooperate":
                    helps = True
                elif strategy == "always_defect":
                    helps = False
                else:
                    bad = bad_image if strategy == "image_scoring" else bad_standing
                    helps = norms.decide(strategy, -1 if bad else 1) == "cooperate"
                table[code * 4 + bad_image * 2 + bad_standing] = helps
    return table


def _verdict_table() -> np.ndarray:
    """Valence of the tone a recipient publishes about its donor, indexed by
    ``recipient_strategy * 4 + cooperated * 2 + recipient_bad_standing``, from ``norms.assess``.
    Always-cooperate and always-defect recipients judge by image scoring (honest reports)."""
    table = np.zeros(4 * len(STRATEGIES), dtype=np.int8)
    for code, strategy in enumerate(STRATEGIES):
        norm = strategy if strategy in NORMS else "image_scoring"
        for cooperated in (0, 1):
            for bad_standing in (0, 1):
                # image scoring ignores the recipient; standing and stern read the standing view
                tone = norms.assess(
                    norm, "cooperate" if cooperated else "defect", -1 if bad_standing else 1
                )
                table[code * 4 + cooperated * 2 + bad_standing] = norms.valence(tone)
    return table


_DECIDE = _decide_table()
_VERDICT = _verdict_table()


def mean_round_payoff(given: Any, received: Any, count: int, cost: float, benefit: float) -> Any:
    """Mean round payoff of a strategy's ``count`` agents, ``given`` helps and ``received`` helps
    among them (integers, or float arrays of integers, one per round). Both engines compute it
    with this one formula, so their floats agree."""
    return (received * benefit - given * cost) / count


def check_population(population: Mapping[str, int]) -> dict[str, int]:
    """``population`` as a plain dict of strategy -> count, or ``ValueError`` naming the problem."""
    if not isinstance(population, Mapping) or not population:
        raise ValueError(f"population: must map strategies to agent counts, got {population!r}")
    checked = {}
    for strategy, count in population.items():
        if strategy not in STRATEGIES:
            raise ValueError(
                f"population: unknown strategy {strategy!r}; allowed: {', '.join(STRATEGIES)}"
            )
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise ValueError(f"population.{strategy}: must be an integer >= 0, got {count!r}")
        checked[strategy] = int(count)
    total = sum(checked.values())
    if total < 2:
        raise ValueError(f"population: needs at least 2 agents in all, got {total}")
    return checked


def check_parameters(cost: float, benefit: float, error: float, gossip: bool) -> None:
    for name, value in (("cost", cost), ("benefit", benefit)):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or value < 0
        ):
            raise ValueError(f"{name}: must be a finite number >= 0, got {value!r}")
    if isinstance(error, bool) or not isinstance(error, (int, float)) or not 0.0 <= error <= 1.0:
        raise ValueError(f"error: must be a probability in [0, 1], got {error!r}")
    if not isinstance(gossip, bool):
        raise ValueError(f"gossip: must be true or false, got {gossip!r}")


def strategy_names(population: Mapping[str, int]) -> list[str]:
    """Agent index -> strategy: the counts laid out in blocks, in the mapping's order."""
    return [
        strategy for strategy, count in check_population(population).items() for _ in range(count)
    ]


def payoff_column(strategy: str) -> str:
    return f"payoff_{strategy}"


def statistic_columns(population: Mapping[str, int]) -> list[str]:
    """Columns of the per-round statistics: the two rates, then the mean round payoff of each
    strategy present, in the population's order."""
    return [
        *STATISTICS,
        *(payoff_column(s) for s, count in check_population(population).items() if count),
    ]


STATES = 4 * len(STRATEGIES)  # strategy * 4 + bad_image * 2 + bad_standing
PAIRS = 2 * STATES * STATES  # pair key: slipped * STATES**2 + donor_state * STATES + recipient
# Agents in all (replicates x agents) from which run() draws in a second thread by default.
PREFETCH_MIN_AGENTS = 30_000


def _pair_tables(gossip: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What a donor-recipient pair does, by pair key: does the donor help; the valence of the
    recipient's tone; the donor's new ``strategy * 4 + bad_standing`` (its image bit is read from
    its valence sum); and the tone as a claim: 0 none (neutral), 1 true, 2 false."""
    # int32, the type of the counters they are added to (np.add.at's fast path needs one type)
    helps = np.zeros(PAIRS, dtype=np.int32)
    verdict = np.zeros(PAIRS, dtype=np.int32)
    standing = np.zeros(PAIRS, dtype=np.int16)
    claim = np.zeros(PAIRS, dtype=np.intp)
    for key in range(PAIRS):
        slipped, pair = divmod(key, STATES * STATES)
        donor, recipient = divmod(pair, STATES)
        helped = bool(_DECIDE[(donor & ~3) | (recipient & 3)]) and not slipped
        tone = int(_VERDICT[(recipient & ~3) | (helped << 1) | (recipient & 1)]) if gossip else 0
        helps[key], verdict[key] = helped, tone
        standing[key] = (donor & ~3) | (tone < 0 if tone else donor & 1)
        # a claim is true when its sign is the donor's: +1 for a help, -1 for a refusal
        claim[key] = 0 if tone == 0 else 1 if tone == (1 if helped else -1) else 2
    return helps, verdict, standing, claim


_PAIR_TABLES = {gossip: _pair_tables(gossip) for gossip in (False, True)}


def check_seeds(seeds: Iterable[Any]) -> list[Any]:
    """``seeds`` as a list, one per replicate, or ``ValueError``."""
    if isinstance(seeds, (str, bytes, Mapping)) or not isinstance(seeds, Iterable):
        raise ValueError(f"seeds: must be a sequence of seeds, one per replicate, got {seeds!r}")
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds: needs at least one seed (one replicate)")
    return seeds


class ReplicatedSociety:
    """``len(seeds)`` replicates of one society, played together as ``(replicates, n_agents)``
    arrays; replicate ``r`` is exactly the single run seeded ``seeds[r]``.

    The other arguments are those of :class:`socialsim.society.mesa_model.SocietyModel`.
    ``rngs[r]`` is replicate ``r``'s Generator; ``state``, ``valence_sum``, ``helps_given``
    and ``helps_received`` are ``(replicates, n_agents)`` arrays (the last two the halves of
    ``helps``, ``(2, replicates, n_agents)``); :meth:`statistics` is every
    round played so far, indexed by ``(replicate, round)``.
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
            [STRATEGIES.index(s) for s in strategy_names(self.population)], dtype=np.int16
        )
        self.replicates, self.n_agents = len(self.rngs), len(codes)
        shape, half = (self.replicates, self.n_agents), self.n_agents // 2
        self.present = [STRATEGIES.index(s) for s, count in self.population.items() if count]
        self.counts = np.bincount(codes, minlength=len(STRATEGIES))
        self.state = np.tile(codes * 4, (self.replicates, 1))  # nobody is bad yet
        self.valence_sum = np.zeros(shape, dtype=np.int32)
        self.helps = np.zeros((2, *shape), dtype=np.int32)  # given, received
        self.helps_given, self.helps_received = self.helps
        self.round = 0
        self._helps, self._verdict, self._standing, self._claim = _PAIR_TABLES[gossip]
        # Per round, per replicate: the claims (none, true, false) and the helps given and
        # received so far by each strategy present (so a round's helps are a difference; the
        # agents of a strategy are one block, summed by reduceat).
        self._blocks = np.cumsum([0, *(int(self.counts[code]) for code in self.present[:-1])])
        self._claims: list[np.ndarray] = []
        self._helps_so_far = [np.zeros((2, self.replicates, len(self.present)), dtype=np.int64)]
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
        # The round's pairs, replicate after replicate: flat (replicates * half,) arrays.
        self._slipped = np.empty(self.replicates * half, dtype=bool)
        self._key = np.empty(self.replicates * half, dtype=np.intp)
        # Several replicates: donors and recipients copied out contiguous, each read many times.
        self._donors = np.empty((self.replicates, half), dtype=np.intp)
        self._recipients = np.empty((self.replicates, half), dtype=np.intp)
        self._claim_offset = np.repeat(np.arange(self.replicates) * 3, half)
        # flat views (an agent's index is replicate * n_agents + agent), made once
        self._flat = [a.reshape(-1) for a in (self.state, self.valence_sum, *self.helps)]
        self._flat_uniforms = [uniforms.reshape(-1) for uniforms in self._uniforms]
        self._flat_pairs = (self._donors.reshape(-1), self._recipients.reshape(-1))

    @property
    def strategy(self) -> np.ndarray:
        """Agent -> strategy code (an index into :data:`STRATEGIES`), per replicate."""
        return self.state >> 2

    @property
    def payoff(self) -> np.ndarray:
        """Every agent's cumulative payoff, per replicate."""
        return self.helps_received * self.benefit - self.helps_given * self.cost

    def _draw(self, buffer: int) -> None:
        """The next round's draws of every replicate into ``buffer``: in each replicate's
        Generator the pairing permutation (``shuffle`` of ``arange`` is ``permutation``), then
        (only with ``error > 0``) one slip draw per pair."""
        self._order[buffer][...] = self._agents
        if self.error > 0:
            for rng, agents, draws in self._draw_rows[buffer]:
                rng.shuffle(agents)
                rng.random(out=draws)
        else:
            for rng, agents, _ in self._draw_rows[buffer]:
                rng.shuffle(agents)

    def _play(self, buffer: int) -> None:
        """Play one round of every replicate with the draws in ``buffer``."""
        half = self.n_agents // 2
        order = self._order[buffer]
        if self.replicates == 1:
            donors, recipients = order[0, :half], order[0, half : 2 * half]
        else:
            np.copyto(self._donors, order[:, :half])
            np.copyto(self._recipients, order[:, half : 2 * half])
            donors, recipients = self._flat_pairs
        state, valence_sum, helps_given, helps_received = self._flat

        # Everything is read from the start of the round: the round is simultaneous. Every
        # index is in range by construction: take(mode="clip") skips the bounds checks.
        key = self._key
        np.multiply(state.take(donors, mode="clip"), STATES, out=key)
        key += state.take(recipients, mode="clip")
        if self.error > 0:
            np.less(self._flat_uniforms[buffer], self.error, out=self._slipped)
            np.add(key, STATES * STATES, out=key, where=self._slipped)
        helped = self._helps.take(key, mode="clip")
        np.add.at(helps_given, donors, helped)
        np.add.at(helps_received, recipients, helped)
        if self.gossip:
            np.add.at(valence_sum, donors, self._verdict.take(key, mode="clip"))
            new_state = self._standing.take(key, mode="clip")
            bad_image = valence_sum.take(donors, mode="clip") < 0
            np.add(new_state, 2, out=new_state, where=bad_image)
            state[donors] = new_state

        claim = self._claim.take(key, mode="clip")
        if self.replicates > 1:
            claim += self._claim_offset
        claims = np.bincount(claim, minlength=self.replicates * 3)
        self._claims.append(claims.reshape(self.replicates, 3))
        self._helps_so_far.append(np.add.reduceat(self.helps, self._blocks, axis=2, dtype=np.int64))
        self.round += 1

    def step(self) -> dict[str, np.ndarray]:
        """Play one round of every replicate; its statistics, one value per replicate."""
        self._draw(0)
        self._play(0)
        given, received = self._helps_so_far[-1] - self._helps_so_far[-2]
        return self.columns(self._claims[-1], given, received)

    def run(self, rounds: int, prefetch: bool | None = None) -> Any:
        """Play ``rounds`` rounds of every replicate; :meth:`statistics` of every round so far.

        With ``prefetch`` a second thread draws the next round while this one is played;
        ``None`` (the default) prefetches from :data:`PREFETCH_MIN_AGENTS` agents in all when
        the process may use a second CPU. Only
        that thread touches the Generators, and never past the last round, so the draws and
        the results are exactly those of ``prefetch=False``.
        """
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
            raise ValueError(f"rounds: must be an integer >= 0, got {rounds!r}")
        if prefetch is None:
            prefetch = (
                self.replicates * self.n_agents >= PREFETCH_MIN_AGENTS
                and len(os.sched_getaffinity(0)) > 1
            )
        if not isinstance(prefetch, bool):
            raise ValueError(f"prefetch: must be true, false or None, got {prefetch!r}")
        if not prefetch or rounds < 2:
            for _ in range(rounds):
                self._draw(0)
                self._play(0)
        else:
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="society-draws") as pool:
                pending = pool.submit(self._draw, 0)
                for played in range(rounds):
                    pending.result()
                    if played + 1 < rounds:
                        pending = pool.submit(self._draw, (played + 1) % 2)
                    self._play(played % 2)
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
        claims = np.zeros((self.replicates, 0, 3), dtype=np.int64)
        if self._claims:
            claims = np.stack(self._claims, axis=1)
        given, received = np.diff(np.stack(self._helps_so_far, axis=2), axis=2)
        return claims, given, received

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
        import pandas as pd

        columns = self.society.columns(*(counts[0] for counts in self.society.round_counts()))
        frame = pd.DataFrame(columns, columns=statistic_columns(self.population), dtype=float)
        frame.index = pd.RangeIndex(1, self.round + 1, name="round")
        return frame


def statistics_frame(rows: list[dict[str, float]], columns: list[str]):
    """Per-round statistics as a float DataFrame indexed by ``round`` (1, 2, ...)."""
    import pandas as pd

    frame = pd.DataFrame(rows, columns=columns, dtype=float)
    frame.index = pd.RangeIndex(1, len(rows) + 1, name="round")
    return frame
