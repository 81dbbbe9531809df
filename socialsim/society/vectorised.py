"""The gossip society as arrays: the same model as :mod:`socialsim.society.mesa_model`, for scale.

This engine plays exactly the rules of the Mesa model (see its docstring) on numpy arrays, one
round per :meth:`VectorSociety.step`, and draws from its ``numpy`` Generator in the same order:
per round ``rng.permutation(n_agents)`` (the first half of the permutation donates to the
second half, position by position; the last agent sits out when ``n_agents`` is odd), then,
only when ``error > 0``, ``rng.random(n_agents // 2)`` (the pair's donor slips when its draw is
below ``error``). So for the same arguments and seed both engines produce the same statistics,
value for value; ``tests/test_society.py`` checks it.

Because every tone is public, all observers that follow one norm hold the same view of an
agent, and :func:`socialsim.envs.gossip.norms.reputation` can be kept up to date as tones
arrive with two facts per agent: is it bad under image scoring (the valences of the tones about
it sum below 0) and is it bad under standing/stern judging (its latest non-neutral tone is bad).
The engine packs them with the agent's strategy into one byte, ``state = strategy * 4 +
bad_image * 2 + bad_standing``, so that a round reads every agent it needs in one gather; the
decisions and tones are then lookups in two small tables built from ``norms.decide`` and
``norms.assess``.

| | |
|---|---|
| Import | `from socialsim.society.vectorised import VectorSociety` |
| Agents | `n_agents` = sum of the population counts; agent `i` has strategy `strategy_names[i]` |
| Memory | 13 bytes per agent (state, valence sum, helps given and received) |
| Benchmark | `experiments/bench/society_bench.py` (its docstring has the figures) |
"""

from __future__ import annotations

import math
from collections.abc import Mapping
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


def mean_round_payoff(given: int, received: int, count: int, cost: float, benefit: float) -> float:
    """Mean round payoff of a strategy's ``count`` agents, ``given`` helps and ``received`` helps
    among them. Both engines compute it with this one formula, so their floats agree."""
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


class VectorSociety:
    """The random-matching donation game with tone-based reputation, on arrays.

    Arguments are those of :class:`socialsim.society.mesa_model.SocietyModel`. After each
    :meth:`step`, ``statistics`` holds one dict per round played (the same keys as
    :func:`statistic_columns`); :attr:`payoff` is every agent's cumulative payoff.
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
        self.population = check_population(population)
        check_parameters(cost, benefit, error, gossip)
        self.cost, self.benefit = float(cost), float(benefit)
        self.gossip, self.error = gossip, float(error)
        self.rng = np.random.default_rng(seed)
        codes = np.asarray(
            [STRATEGIES.index(s) for s in strategy_names(self.population)], dtype=np.int8
        )
        self.n_agents = len(codes)
        self.present = [STRATEGIES.index(s) for s, count in self.population.items() if count]
        self.counts = np.bincount(codes, minlength=len(STRATEGIES))
        self.state = codes * 4  # strategy * 4 + bad_image * 2 + bad_standing; nobody is bad yet
        self.valence_sum = np.zeros(self.n_agents, dtype=np.int32)
        self.helps_given = np.zeros(self.n_agents, dtype=np.int32)
        self.helps_received = np.zeros(self.n_agents, dtype=np.int32)
        self.round = 0
        self.statistics: list[dict[str, float]] = []

    @property
    def strategy(self) -> np.ndarray:
        """Agent index -> strategy code (an index into :data:`STRATEGIES`)."""
        return self.state >> 2

    @property
    def payoff(self) -> np.ndarray:
        """Every agent's cumulative payoff."""
        return self.helps_received * self.benefit - self.helps_given * self.cost

    def draw(self) -> tuple[np.ndarray, np.ndarray | None]:
        """The random draws of the next round, in the order both engines make them: the pairing
        permutation, then (only with ``error > 0``) one slip draw per pair."""
        half = self.n_agents // 2
        order = self.rng.permutation(self.n_agents)
        slipped = self.rng.random(half) < self.error if self.error > 0 else None
        return order, slipped

    def step(self) -> dict[str, float]:
        """Play one round and return its statistics."""
        return self.play(*self.draw())

    def play(self, order: np.ndarray, slipped: np.ndarray | None) -> dict[str, float]:
        """Play one round with the given draws (see :meth:`draw`) and return its statistics."""
        half = self.n_agents // 2
        donors, recipients = order[:half], order[half : 2 * half]

        # Everything is read from the start of the round: the round is simultaneous.
        donor_state, recipient_state = np.take(self.state, donors), np.take(self.state, recipients)
        cooperate = _DECIDE[(donor_state & ~3) | (recipient_state & 3)]
        if slipped is not None:
            cooperate &= ~slipped
        # gather, add, scatter: faster than `a[index] += b` (donors and recipients are distinct)
        given = np.take(self.helps_given, donors)
        given += cooperate
        self.helps_given[donors] = given
        received = np.take(self.helps_received, recipients)
        received += cooperate
        self.helps_received[recipients] = received

        accuracy = math.nan
        if self.gossip:
            helped = cooperate.view(np.int8)
            verdict = _VERDICT[(recipient_state & ~3) | (helped << 1) | (recipient_state & 1)]
            sums = np.take(self.valence_sum, donors) + verdict
            self.valence_sum[donors] = sums
            bad_standing = np.where(verdict != 0, verdict < 0, (donor_state & 1).astype(bool))
            self.state[donors] = (
                (donor_state & ~3) | ((sums < 0).view(np.int8) << 1) | bad_standing.view(np.int8)
            )
            n_claims = int(np.count_nonzero(verdict))
            if n_claims:
                # a claim is true when its sign is the donor's: +1 for a help, -1 for a refusal
                accuracy = int(np.count_nonzero(verdict == helped * 2 - 1)) / n_claims

        self.round += 1
        # counts by (strategy, helped); the odd entries are the helps
        kinds = 2 * len(STRATEGIES)
        given = np.bincount((donor_state >> 2) * 2 + cooperate, minlength=kinds)[1::2]
        received = np.bincount((recipient_state >> 2) * 2 + cooperate, minlength=kinds)[1::2]
        row = {
            "cooperation_rate": int(np.count_nonzero(cooperate)) / half,
            "reputation_accuracy": accuracy,
        }
        for code in self.present:
            row[payoff_column(STRATEGIES[code])] = mean_round_payoff(
                int(given[code]),
                int(received[code]),
                int(self.counts[code]),
                self.cost,
                self.benefit,
            )
        self.statistics.append(row)
        return row

    def run(self, rounds: int, prefetch: bool = True) -> Any:
        """Play ``rounds`` rounds; the statistics of every round so far as a DataFrame (index
        ``round`` from 1).

        With ``prefetch`` a second thread draws the next round's pairing while this round is
        played, so that a second core takes the permutation, the largest single cost. Only
        that thread touches the Generator, one round after another, so the draws and the
        results are exactly those of ``prefetch=False``.
        """
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
            raise ValueError(f"rounds: must be an integer >= 0, got {rounds!r}")
        if not prefetch or rounds < 2:
            for _ in range(rounds):
                self.step()
        else:
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="society-draws") as pool:
                pending = pool.submit(self.draw)
                for played in range(1, rounds + 1):
                    draws = pending.result()
                    if played < rounds:  # never draw past the last round: the stream stays exact
                        pending = pool.submit(self.draw)
                    self.play(*draws)
        return statistics_frame(self.statistics, statistic_columns(self.population))


def statistics_frame(rows: list[dict[str, float]], columns: list[str]):
    """Per-round statistics as a float DataFrame indexed by ``round`` (1, 2, ...)."""
    import pandas as pd

    frame = pd.DataFrame(rows, columns=columns, dtype=float)
    frame.index = pd.RangeIndex(1, len(rows) + 1, name="round")
    return frame
