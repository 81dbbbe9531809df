"""The cells of an ``[evolution]`` experiment file played in the numpy society, for as many seeds
as an interval needs: the env run keeps every record of a few replicates, the society plays the
same generations for hundreds of seeds in seconds.

Replicate ``r`` of a cell in the file is the run seeded ``s = seed + r``
(:mod:`socialsim.society.experiment`); the society's replicate seeded ``s`` plays the same
generations, value for value (:mod:`socialsim.society.episodes`; ``tests/test_companion.py``
compares the two for the bundled ``align_evolution``). So a companion run of ``N`` seeds holds
the file's replicates as its first ones, and ``N - episodes`` more.

A cell maps onto the society when its env is ``donation_v0`` with ``schedule = "random"``, its
keyword arguments are among :data:`SOCIETY_KWARGS` (no entrant, no discount: the society has
neither), every donor's stock covers every cost (``initial_resources >= rounds * cost``, as the
society has no stocks), and its seats are scripted strategies laid out in blocks
(``agent_0`` to ``agent_{n-1}``, each strategy's seats consecutive, as
:func:`~socialsim.society.population.strategy_names` lays out a population). Anything else is a
``ValueError`` naming what the society cannot play.

    from socialsim.config import load
    from socialsim.society.companion import arms

    for arm in arms(load("align_evolution")):
        table = arm.run(1000)   # EvolvingSociety statistics, seeds seed .. seed + 999
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from socialsim.config.evolution import evolution_rule
from socialsim.envs.gossip.options import default_random_rounds
from socialsim.society.evolution import Evolution
from socialsim.society.generations import EvolvingSociety
from socialsim.society.population import STRATEGIES

ENV_ID = "donation_v0"
#: the donation env's keyword arguments the society plays (the rest of the game is fixed)
SOCIETY_KWARGS = (
    "n_agents",
    "schedule",
    "rounds",
    "initial_resources",
    "gossip",
    "gossip_reach",
    "cost",
    "benefit",
)


@dataclass(frozen=True)
class Arm:
    """One grid cell of an evolution file as a society: ``cell`` is its grid assignment,
    ``label`` names it (``gossip=True``), ``first_seed`` is its replicate 0's seed."""

    cell: dict[str, Any]
    label: str
    population: dict[str, int]
    rounds: int
    generations: int
    evolution: Evolution
    options: dict[str, Any]
    first_seed: int

    def society(self, seeds: int, first: int = 0) -> EvolvingSociety:
        """The cell's replicates ``first`` to ``first + seeds - 1`` (seeded ``first_seed +
        first`` on) as one :class:`EvolvingSociety`."""
        start = self.first_seed + first
        return EvolvingSociety(
            self.population,
            seeds=range(start, start + seeds),
            rounds=self.rounds,
            evolution=self.evolution,
            **self.options,
        )

    def run(self, seeds: int, first: int = 0, parallel: bool | None = None) -> Any:
        """Every generation of ``seeds`` replicates: a DataFrame indexed by ``(replicate,
        generation)`` (:meth:`EvolvingSociety.statistics`), replicate ``r`` seeded
        ``first_seed + first + r``."""
        return self.society(seeds, first).run(self.generations, parallel=parallel)


def arms(experiment: Any) -> list[Arm]:
    """Every grid cell of ``experiment`` (a loaded :class:`~socialsim.config.Experiment` with an
    ``[evolution]`` table) as an :class:`Arm`, in the file's order; ``ValueError`` naming what a
    cell holds that the society cannot play."""
    first = {}
    for spec in experiment.specs():  # generation 0's seats, each cell's replicate 0
        first.setdefault(repr(sorted(spec.cell.items())), spec)
    out = []
    for cell, config in experiment.cells:
        spec = first[repr(sorted(cell.items()))]
        where = f"cell {cell}: " if cell else ""
        if "evolution" not in config:
            raise ValueError(f"{where}evolution: the file has no [evolution] table")
        if spec.env_id != ENV_ID:
            raise ValueError(f"{where}env.id: the society plays {ENV_ID}, got {spec.env_id!r}")
        kwargs = dict(spec.env_kwargs)
        options = _options(kwargs, len(spec.seats), where)
        out.append(
            Arm(
                cell=dict(cell),
                label=", ".join(f"{k.split('.')[-1]}={v}" for k, v in cell.items()) or "(all)",
                population=_population(spec.seats, where),
                rounds=options.pop("rounds"),
                generations=config["evolution"]["generations"],
                evolution=evolution_rule(config["evolution"]),
                options=options,
                first_seed=spec.seed,
            )
        )
    return out


def _options(kwargs: dict[str, Any], n: int, where: str) -> dict[str, Any]:
    extra = sorted(set(kwargs) - set(SOCIETY_KWARGS))
    if extra:
        raise ValueError(
            f"{where}env.kwargs.{extra[0]}: the society plays the donation game without it; "
            f"allowed: {', '.join(SOCIETY_KWARGS)}"
        )
    if kwargs.get("schedule") != "random":
        raise ValueError(
            f"{where}env.kwargs.schedule: the society pairs at random; must be 'random', got "
            f"{kwargs.get('schedule')!r}"
        )
    rounds = kwargs.get("rounds") or default_random_rounds(n)
    cost = kwargs.get("cost", 1.0)
    if kwargs.get("initial_resources", 0.0) < rounds * cost:
        raise ValueError(
            f"{where}env.kwargs.initial_resources: the society has no stocks; must be at least "
            f"rounds x cost = {rounds * cost}, got {kwargs.get('initial_resources')!r}"
        )
    names = ("cost", "benefit", "gossip", "gossip_reach")
    return {"rounds": rounds, **{k: kwargs[k] for k in names if k in kwargs}}


def _population(seats: dict[str, dict[str, Any]], where: str) -> dict[str, int]:
    """The seats' strategies as blocks (strategy -> count, in seat order)."""
    kinds = [seats[f"agent_{i}"]["kind"] for i in range(len(seats))]
    population: dict[str, int] = {}
    for i, kind in enumerate(kinds):
        if kind not in STRATEGIES:
            raise ValueError(
                f"{where}seats.agent_{i}.kind: the society plays scripted strategies "
                f"({', '.join(STRATEGIES)}), got {kind!r}"
            )
        if kind in population and kinds[i - 1] != kind:
            raise ValueError(
                f"{where}seats.agent_{i}.kind: the society lays each strategy's seats out "
                f"together; {kind!r} is split"
            )
        population[kind] = population.get(kind, 0) + 1
    return population
