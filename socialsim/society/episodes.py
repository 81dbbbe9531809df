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
from dataclasses import replace
from typing import Any

import numpy as np

from socialsim.episode import EpisodeSpec
from socialsim.runner import play_episode
from socialsim.society.distilled import roster
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
    strategies: np.ndarray,
    seed: int,
    generation: int,
    rounds: int,
    distilled: Mapping[str, str] | None = None,
    **options: Any,
) -> EpisodeSpec:
    """The episode of one generation: seat ``agent_i`` plays ``STRATEGIES[strategies[i]]``, or
    for codes past them the distilled strategy of that place in ``distilled`` (name -> its
    policy file, whose strategy of that name it is, or -> (file, the strategy's name in it));
    ``options`` are the env's (``cost``,
    ``benefit``, ``gossip``, ``gossip_reach``)."""
    n = len(strategies)
    cost = options.get("cost", 1.0)
    kinds = [{"kind": s} for s in STRATEGIES]
    kinds += [
        {"kind": "distilled", "policy": str(path), "name": strategy}
        for path, strategy in map(policy_of, (distilled or {}).items())
    ]
    return EpisodeSpec(
        ENV_ID,
        generation_seed(seed, generation),
        {f"agent_{i}": dict(kinds[code]) for i, code in enumerate(strategies)},
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


def policy_of(item: tuple[str, Any]) -> tuple[str, str]:
    """A ``distilled`` entry as (policy file, strategy name in it)."""
    name, entry = item
    if isinstance(entry, (tuple, list)):
        return str(entry[0]), str(entry[1])
    return str(entry), name


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
    distilled: Mapping[str, str] | None = None,
) -> tuple[Any, list[Any], list[np.ndarray]]:
    """Play ``generations`` generations through the env; the statistics (a DataFrame indexed
    by ``(replicate, generation)``, replicate 0 only, as ``EvolvingSociety`` gives them), the
    episodes' records, one per generation, and the lineage: for each generation after the
    first, seat ``i``'s parent in the generation before (``Generation.parents``).
    ``distilled`` names distilled strategies (name -> policy file) that ``population`` may
    count; the society plays them as ``distilled={name: load(file)[name]}``."""
    from socialsim.distill.strategy import load, pick

    loaded = {}
    for name, entry in (distilled or {}).items():
        path, strategy = policy_of((name, entry))
        loaded[name] = pick(load(path), strategy, path)
    names = roster(loaded)
    population = check_population(population, names)
    evolution = Evolution() if evolution is None else evolution
    if evolution.names != names:
        evolution = replace(evolution, names=names)
    check_count("rounds", rounds, 1)
    strategies = np.asarray([names.index(s) for s in strategy_names(population, names)])
    shown = shown_strategies(population, evolution)
    options = {"cost": cost, "benefit": benefit, "gossip": gossip, "gossip_reach": gossip_reach}
    rows, records, lineage, fitness = [], [], [], None
    for generation in range(check_count("generations", generations, 0)):
        if fitness is not None:
            update = update_generator(generation_seed(seed, generation - 1))
            strategies, parents = evolution.update(strategies, fitness, update)
            lineage.append(parents)
        spec = generation_spec(strategies, seed, generation, rounds, distilled, **options)
        record = play_episode(spec)
        if record.status != "done":
            raise RuntimeError(f"generation {generation}: the episode failed: {record.error}")
        given, received = helps(record, len(strategies))
        fitness = received * benefit - given * cost  # the society's formula, in its order
        row = generation_statistics(
            strategies, given, received, rounds, cost, benefit, shown, names
        )
        rows.append({name: np.atleast_1d(value) for name, value in row.items()})
        records.append(record)
    return statistics_table(rows, 1), records, lineage
