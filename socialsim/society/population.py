"""The gossip society's vocabulary, shared by the Mesa model and the numpy engine: the
strategies, the checked arguments (population, parameters, seeds) and the per-round statistics'
columns and formula, so that both engines read and report the same model."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from socialsim.envs.gossip.norms import NORMS
from socialsim.envs.gossip.reach import check_gossip_reach

STRATEGIES: tuple[str, ...] = ("always_cooperate", "always_defect", *NORMS)
STATISTICS = ("cooperation_rate", "reputation_accuracy")


def mean_round_payoff(given: Any, received: Any, count: int, cost: float, benefit: float) -> Any:
    """Mean round payoff of a strategy's ``count`` agents, ``given`` helps and ``received`` helps
    among them (integers, or float arrays of integers, one per round). Both engines compute it
    with this one formula, so their floats agree."""
    return (received * benefit - given * cost) / count


def check_population(
    population: Mapping[str, int], names: Sequence[str] = STRATEGIES
) -> dict[str, int]:
    """``population`` as a plain dict of strategy -> count, or ``ValueError`` naming the problem;
    ``names`` are the strategies allowed (a society's roster: the scripted ones, then any
    distilled ones, :func:`socialsim.society.distilled.roster`)."""
    if not isinstance(population, Mapping) or not population:
        raise ValueError(f"population: must map strategies to agent counts, got {population!r}")
    checked = {}
    for strategy, count in population.items():
        if strategy not in names:
            raise ValueError(
                f"population: unknown strategy {strategy!r}; allowed: {', '.join(names)}"
            )
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise ValueError(f"population.{strategy}: must be an integer >= 0, got {count!r}")
        checked[strategy] = int(count)
    total = sum(checked.values())
    if total < 2:
        raise ValueError(f"population: needs at least 2 agents in all, got {total}")
    return checked


def check_count(name: str, value: Any, least: int, most: int | None = None, why: str = "") -> int:
    """``value`` if it is an integer >= ``least`` (and <= ``most``, because ``why``), else
    ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{name}: must be an integer >= {least}, got {value!r}")
    if most is not None and value > most:
        raise ValueError(f"{name}: must be at most {most:,}{why}, got {value:,}")
    return value


def check_parameters(
    cost: float, benefit: float, error: float, gossip: bool, gossip_reach: float = 1.0
) -> None:
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
    check_gossip_reach(gossip_reach)


def strategy_names(population: Mapping[str, int], names: Sequence[str] = STRATEGIES) -> list[str]:
    """Agent index -> strategy: the counts laid out in blocks, in the mapping's order."""
    return [
        strategy
        for strategy, count in check_population(population, names).items()
        for _ in range(count)
    ]


def payoff_column(strategy: str) -> str:
    return f"payoff_{strategy}"


def statistic_columns(
    population: Mapping[str, int], names: Sequence[str] = STRATEGIES
) -> list[str]:
    """Columns of the per-round statistics: the two rates, then the mean round payoff of each
    strategy present, in the population's order."""
    return [
        *STATISTICS,
        *(payoff_column(s) for s, count in check_population(population, names).items() if count),
    ]


def check_seeds(seeds: Iterable[Any]) -> list[Any]:
    """``seeds`` as a list, one per replicate, or ``ValueError``."""
    if isinstance(seeds, (str, bytes, Mapping)) or not isinstance(seeds, Iterable):
        raise ValueError(f"seeds: must be a sequence of seeds, one per replicate, got {seeds!r}")
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds: needs at least one seed (one replicate)")
    return seeds


def statistics_frame(data: Any, columns: list[str]):
    """Per-round statistics (a list of rows, or a dict of columns) as a float DataFrame indexed
    by ``round`` (1, 2, ...)."""
    import pandas as pd

    frame = pd.DataFrame(data, columns=columns, dtype=float)
    frame.index = pd.RangeIndex(1, len(frame) + 1, name="round")
    return frame
