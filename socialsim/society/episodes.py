"""Evolution played through the donation env (``donation_v0``, scripted seats, full records):
the small-population form of :class:`~socialsim.society.generations.EvolvingSociety`, with the
same rules and, for the same seed, the same generations.

Generation ``g`` of the run seeded ``seed`` is one episode of ``donation_v0`` with
``schedule="random"``, ``rounds`` rounds and seed ``generation_seed(seed, g)``; seat
``agent_i`` is played by the scripted agent of agent ``i``'s strategy. Every donor's stock
starts at ``rounds * cost``, so that no donor ever lacks the cost (the society has no stocks).
Fitness is read from the record: what each agent gained (helps received times ``benefit``
minus helps given times ``cost``). The update between generations is the rule's, drawn from
``update_generator(generation_seed(seed, g))``, exactly as the society does. The env pairs the
agents by the same permutations and draws gossip reach from the same child stream as the
society, and its scripted discriminators judge by the same norms, so a generation's
donations, payoffs and update are the society's: ``tests/test_evolution.py`` compares them.
The env has no execution error: compare with ``error=0``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from socialsim.episode import EpisodeSpec
from socialsim.runner import play_episode
from socialsim.society.evolution import Evolution
from socialsim.society.generations import (
    generation_seed,
    generation_statistics,
    shown_strategies,
    statistics_table,
    update_generator,
)
from socialsim.society.population import STRATEGIES, check_count, check_population, strategy_names

ENV_ID = "donation_v0"


def generation_spec(
    strategies: np.ndarray, seed: int, generation: int, rounds: int, **options: Any
) -> EpisodeSpec:
    """The episode of one generation: seat ``agent_i`` plays ``STRATEGIES[strategies[i]]``;
    ``options`` are the env's (``cost``, ``benefit``, ``gossip``, ``gossip_reach``)."""
    n = len(strategies)
    cost = options.get("cost", 1.0)
    return EpisodeSpec(
        ENV_ID,
        generation_seed(seed, generation),
        {f"agent_{i}": {"kind": STRATEGIES[code]} for i, code in enumerate(strategies)},
        {
            "n_agents": n,
            "schedule": "random",
            "rounds": rounds,
            "initial_resources": rounds * cost,
            **options,
        },
        episode=generation,
        cell={"generation": generation},
        experiment="evolution",
    )


def helps(record: Any, n_agents: int) -> tuple[np.ndarray, np.ndarray]:
    """Per agent, the helps it gave and received in an episode's record."""
    given = np.zeros(n_agents, dtype=np.int64)
    received = np.zeros(n_agents, dtype=np.int64)
    index = {agent: i for i, agent in enumerate(record.summary["agents"])}
    for interaction in record.summary["interactions"]:
        if interaction["action"] == "cooperate":
            given[index[interaction["donor"]]] += 1
            received[index[interaction["recipient"]]] += 1
    return given, received


def evolve_in_env(
    population: Mapping[str, int],
    *,
    seed: int,
    rounds: int,
    generations: int,
    evolution: Evolution | None = None,
    cost: float = 1.0,
    benefit: float = 5.0,
    gossip: bool = True,
    gossip_reach: float = 1.0,
) -> tuple[Any, list[Any], list[np.ndarray]]:
    """Play ``generations`` generations through the env; the statistics (a DataFrame indexed
    by ``(replicate, generation)``, replicate 0 only, as ``EvolvingSociety`` gives them), the
    episodes' records, one per generation, and the lineage: for each generation after the
    first, seat ``i``'s parent in the generation before (``Generation.parents``)."""
    population = check_population(population)
    evolution = Evolution() if evolution is None else evolution
    check_count("rounds", rounds, 1)
    strategies = np.asarray([STRATEGIES.index(s) for s in strategy_names(population)])
    shown = shown_strategies(population, evolution)
    options = {"cost": cost, "benefit": benefit, "gossip": gossip, "gossip_reach": gossip_reach}
    rows, records, lineage, fitness = [], [], [], None
    for generation in range(check_count("generations", generations, 0)):
        if fitness is not None:
            update = update_generator(generation_seed(seed, generation - 1))
            strategies, parents = evolution.update(strategies, fitness, update)
            lineage.append(parents)
        record = play_episode(generation_spec(strategies, seed, generation, rounds, **options))
        if record.status != "done":
            raise RuntimeError(f"generation {generation}: the episode failed: {record.error}")
        given, received = helps(record, len(strategies))
        fitness = received * benefit - given * cost  # the society's formula, in its order
        row = generation_statistics(strategies, given, received, rounds, cost, benefit, shown)
        rows.append({name: np.atleast_1d(value) for name, value in row.items()})
        records.append(record)
    return statistics_table(rows, 1), records, lineage
