"""How a population of scripted strategies changes between generations: pure functions of the
strategies, their fitness and a ``numpy`` Generator, shared by the society (many replicates of
up to millions of agents) and the donation env (small populations, full records), so that both
evolve by the same rule, draw for draw.

A population is a 1-D array of strategy codes, indices into
:data:`~socialsim.society.population.STRATEGIES` (``always_cooperate``, ``always_defect`` and
the norms of :mod:`socialsim.envs.gossip.norms`); fitness is one number per agent (what it
gained in the generation: helps received times ``benefit`` minus helps given times ``cost``).

| rule | what happens between generations | the draws, in this order |
|---|---|---|
| `selection` | the top ``survive`` share by fitness (``floor(survive * n)``, at least 1) survives; each other agent's place goes to a newborn child of a survivor; a newborn mutates with probability ``mutation`` | ``permutation(n)`` (breaks ties, orders the parents); if ``mutation > 0``: ``random(newborn)``, ``integers(0, len(pool) - 1, newborn)`` |
| `imitation` | every agent at once picks a uniformly random other agent as model and adopts its strategy with the Fermi probability ``1 / (1 + exp(-beta (f_model - f_own)))``; then every agent mutates with probability ``mutation`` | ``integers(0, n - 1, n)`` (the models), ``random(n)`` (adopt when below the probability); if ``mutation > 0``: ``random(n)``, ``integers(0, len(pool) - 1, n)`` |

Selection in detail, ``order`` being the permutation drawn: the survivors are the agents of
highest fitness, those tied at the cut surviving in ``order``'s order (the earlier first).
Survivors keep their places. The places of the others, in increasing index, go to newborns
whose parents are the survivors in ``order``'s order, cycling (with ``survive = 0.5`` every
survivor has one child; with less, the extra children go to survivors drawn by the
permutation, not to the fittest).

A mutant takes a uniformly drawn *other* strategy of the ``pool`` (every strategy by default):
its draw ``k`` in ``0 .. len(pool) - 2`` picks ``pool[k]``, skipping its own strategy
(``pool[k + 1]`` from its own position on). Every strategy that mutates must be in the pool.

    from socialsim.society.evolution import Evolution

    rule = Evolution("imitation", beta=0.5, mutation=0.01)
    born = rule.update(codes, fitness, np.random.default_rng(0))
    born.strategies, born.parents            # agent i's strategy, and whose it inherited
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from socialsim.society.kernels import permutation, selection_lineage
from socialsim.society.population import STRATEGIES

RULES = ("selection", "imitation")


class Generation(NamedTuple):
    """A new generation: agent ``i``'s strategy code, and ``parents[i]``, the agent of the
    generation before whose strategy it inherited (itself when it survived or kept its own;
    a mutant's parent is the one it would have inherited from)."""

    strategies: np.ndarray
    parents: np.ndarray


def _probability(name: str, value: Any, low_open: bool = False) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not (0.0 < value <= 1.0 if low_open else 0.0 <= value <= 1.0)
    ):
        allowed = "in (0, 1]" if low_open else "in [0, 1]"
        raise ValueError(f"{name}: must be a number {allowed}, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Evolution:
    """One rule of cultural evolution (see the module docstring) and its parameters.

    ``rule`` is ``"selection"`` (``survive``, ``mutation``) or ``"imitation"`` (``beta``,
    ``mutation``); ``pool`` names the strategies a mutant may take (default: every strategy).
    """

    rule: str = "selection"
    survive: float = 0.5
    mutation: float = 0.0
    beta: float = 1.0
    pool: Sequence[str] = STRATEGIES
    #: the names of the codes (a society's roster; with distilled strategies,
    #: ``socialsim.society.distilled.roster``, which EvolvingSociety sets)
    names: Sequence[str] = STRATEGIES
    pool_codes: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"rule: unknown rule {self.rule!r}; allowed: {', '.join(RULES)}")
        _probability("survive", self.survive, low_open=True)
        _probability("mutation", self.mutation)
        beta = self.beta
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not beta >= 0:
            raise ValueError(f"beta: must be a number >= 0, got {beta!r}")
        names = tuple(self.names)
        object.__setattr__(self, "names", names)
        if isinstance(self.pool, str) or not all(s in names for s in self.pool):
            raise ValueError(
                f"pool: must list strategies among {', '.join(names)}, got {self.pool!r}"
            )
        pool = tuple(dict.fromkeys(self.pool))
        if len(pool) < 2:
            raise ValueError(f"pool: a mutant needs another strategy to take, got {self.pool!r}")
        object.__setattr__(self, "pool", pool)
        codes = np.asarray([names.index(s) for s in pool], dtype=np.intp)
        object.__setattr__(self, "pool_codes", codes)

    def update(
        self, strategies: np.ndarray, fitness: np.ndarray, rng: np.random.Generator
    ) -> Generation:
        """The next generation, from this one's strategy codes and fitness."""
        strategies, fitness = np.asarray(strategies), np.asarray(fitness, dtype=float)
        if strategies.ndim != 1 or strategies.shape != fitness.shape or len(strategies) < 2:
            raise ValueError(
                "strategies and fitness: must be 1-D, one per agent, at least 2 agents; got "
                f"shapes {strategies.shape} and {fitness.shape}"
            )
        if self.rule == "selection":
            return select(
                strategies, fitness, rng, self.survive, self.mutation, self.pool_codes, self.names
            )
        return imitate(
            strategies, fitness, rng, self.beta, self.mutation, self.pool_codes, self.names
        )


def survivors(n: int, survive: float) -> int:
    """How many of ``n`` agents survive selection: ``floor(survive * n)``, at least 1."""
    return max(1, math.floor(survive * n))


def select(
    strategies: np.ndarray,
    fitness: np.ndarray,
    rng: np.random.Generator,
    survive: float,
    mutation: float,
    pool: np.ndarray,
    names: Sequence[str] = STRATEGIES,
) -> Generation:
    """Selection with mutation (see the module docstring). No sort: the cut is a partition, the
    rest one pass (:func:`~socialsim.society.kernels.selection_lineage`)."""
    n = len(strategies)
    kept = survivors(n, survive)
    order = permutation(rng, n)
    cut = np.partition(fitness, n - kept)[n - kept]  # the kept-th highest fitness
    lineage, places = selection_lineage(fitness, order, cut, kept)
    new = strategies[lineage]
    if mutation > 0:
        new[places] = mutate(new[places], rng, mutation, pool, names)
    return Generation(new, lineage)


def fermi(difference: np.ndarray, beta: float) -> np.ndarray:
    """The probability of adopting a model that gained ``difference`` more:
    ``1 / (1 + exp(-beta * difference))``."""
    with np.errstate(over="ignore"):  # exp overflows to inf: the probability is 0, as it is
        return 1.0 / (1.0 + np.exp(-beta * difference))


def imitate(
    strategies: np.ndarray,
    fitness: np.ndarray,
    rng: np.random.Generator,
    beta: float,
    mutation: float,
    pool: np.ndarray,
    names: Sequence[str] = STRATEGIES,
) -> Generation:
    """Pairwise comparison by the Fermi rule, every agent at once (see the module docstring)."""
    n = len(strategies)
    agents = np.arange(n)
    model = rng.integers(0, n - 1, size=n)
    model += model >= agents  # a uniformly drawn other agent
    adopt = rng.random(n) < fermi(fitness[model] - fitness, beta)
    lineage = np.where(adopt, model, agents)
    new = strategies[lineage]
    if mutation > 0:
        new = mutate(new, rng, mutation, pool, names)
    return Generation(new, lineage)


def mutate(
    strategies: np.ndarray,
    rng: np.random.Generator,
    mutation: float,
    pool: np.ndarray,
    names: Sequence[str] = STRATEGIES,
) -> np.ndarray:
    """Each agent takes, with probability ``mutation``, a uniformly drawn other strategy of
    ``pool``: draws ``random(n)``, then ``integers(0, len(pool) - 1, n)``."""
    n = len(strategies)
    mutates = rng.random(n) < mutation
    pick = rng.integers(0, len(pool) - 1, size=n)
    position = np.full(len(names), -1)
    position[pool] = np.arange(len(pool))
    own = position[strategies]
    outside = mutates & (own < 0)
    if outside.any():
        own_names = sorted({names[c] for c in strategies[outside]})
        raise ValueError(f"pool: a mutant's own strategy must be in the pool; {own_names} are not")
    return np.where(mutates, pool[pick + (pick >= own)], strategies)
