"""The ``[evolution]`` table of an experiment file: its keys and their checks.

.. code-block:: toml

    [evolution]
    generations = 30          # required: generations played, each `episodes` replicates per cell
    rule = "selection"        # or "imitation" (pairwise comparison by the Fermi rule)
    survive = 0.5             # selection: the share that survives, in (0, 1]
    mutation = 0.01           # a newborn (selection) or any agent (imitation) mutates, in [0, 1]
    beta = 1.0                # imitation: the selection strength, > 0
    pool = ["always_cooperate", "always_defect", "stern_judging"]  # what a mutant may become
    fitness = "resources"     # what selection reads: final "resources", or the "returns"

The first generation is the file's seats; each must be a scripted strategy of
:data:`~socialsim.society.population.STRATEGIES` (what a child inherits is its parent's), or
of a kind that is inherited whole (:func:`heritable`: the culture donors, whose newborn LLM
agents read the survivors' strategies, see :func:`socialsim.society.experiment.next_seats`),
or of a kind that keeps its seat (:func:`keeps_seat`: ``rl`` and ``human``), which plays every
generation and counts in its statistics but is never selected out and is nobody's parent; at
least two seats evolve. The rules are those of :mod:`socialsim.society.evolution`; how a run
plays the generations is :mod:`socialsim.society.experiment`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from socialsim.config.schema import ConfigError

EVOLUTION_KEYS = {
    "generations": int,
    "rule": str,
    "survive": float,
    "mutation": float,
    "beta": float,
    "pool": list,
    "fitness": str,
}
#: what selection reads from a generation's record: each seat's final stock, or its returns
FITNESS = ("resources", "returns")


def evolution_rule(table: Mapping[str, Any]) -> Any:
    """The checked ``[evolution]`` table's :class:`~socialsim.society.evolution.Evolution`, or a
    :class:`ConfigError` naming the key, the value and what is allowed."""
    from socialsim.registry import nearest
    from socialsim.society.evolution import RULES, Evolution
    from socialsim.society.population import STRATEGIES

    for key in table:
        if key not in EVOLUTION_KEYS:
            raise ConfigError(
                f"evolution.{key}: unknown key {key!r}{nearest(key, EVOLUTION_KEYS)}; allowed "
                f"keys: {', '.join(EVOLUTION_KEYS)}"
            )
    if "generations" not in table:
        raise ConfigError("evolution.generations: required, an integer >= 1")
    generations = table["generations"]
    if isinstance(generations, bool) or not isinstance(generations, int) or generations < 1:
        raise ConfigError(f"evolution.generations: must be an integer >= 1, got {generations!r}")
    for key in ("rule", "fitness"):
        allowed = RULES if key == "rule" else FITNESS
        if key in table and table[key] not in allowed:
            raise ConfigError(
                f"evolution.{key}: {table[key]!r} is not allowed; allowed: {', '.join(allowed)}"
            )
    pool = table.get("pool", list(STRATEGIES))
    if not isinstance(pool, list) or len(pool) < 2 or len(set(pool)) != len(pool):
        raise ConfigError(
            f"evolution.pool: must be a list of at least 2 distinct strategies, got {pool!r}"
        )
    for strategy in pool:
        if strategy not in STRATEGIES:
            raise ConfigError(
                f"evolution.pool: unknown strategy {strategy!r}; allowed: {', '.join(STRATEGIES)}"
            )
    if "beta" in table and (
        isinstance(table["beta"], bool)
        or not isinstance(table["beta"], (int, float))
        or not table["beta"] > 0
    ):
        raise ConfigError(f"evolution.beta: must be a number > 0, got {table['beta']!r}")
    try:
        return Evolution(
            table.get("rule", "selection"),
            survive=table.get("survive", 0.5),
            mutation=table.get("mutation", 0.0),
            beta=table.get("beta", 1.0),
            pool=tuple(pool),
        )
    except ValueError as error:
        raise ConfigError(f"evolution.{error}") from None


def check_first_generation(
    seats: Mapping[str, Mapping[str, Any]], where: str = "", table: Mapping[str, Any] = {}
) -> None:
    """Every seat of the first generation is a strategy that can be inherited (a ``kind`` of
    :data:`~socialsim.society.population.STRATEGIES`, or one inherited whole) or keeps its
    seat, and at least two evolve."""
    from socialsim.society.population import STRATEGIES

    evolving = {s: spec for s, spec in seats.items() if not keeps_seat(spec.get("kind"))}
    for seat, spec in evolving.items():
        if spec.get("kind") not in STRATEGIES and not heritable(spec.get("kind")):
            raise ConfigError(
                f"{where}seats.{seat}.kind: an [evolution] experiment's seats are scripted "
                f"strategies; got {spec.get('kind')!r}; allowed: {', '.join(STRATEGIES)}, "
                "a kind whose agents are inherited whole (llm_culture, culture_give...), or "
                "one that keeps its seat (rl, human)"
            )
    if len(evolving) < 2:
        kept = ", ".join(s for s in seats if s not in evolving)
        raise ConfigError(
            f"{where}seats: an [evolution] experiment needs at least 2 seats that evolve; "
            f"{len(evolving)} do, the others keep their seats ({kept}: rl or human)"
        )
    whole = [seat for seat, spec in evolving.items() if spec.get("kind") not in STRATEGIES]
    if whole and table.get("mutation", 0.0) != 0.0:
        raise ConfigError(
            f"{where}evolution.mutation: seats inherited whole ({whole[0]}: "
            f"{seats[whole[0]]['kind']}) do not mutate; set it to 0, got {table['mutation']!r}"
        )


def heritable(kind: object) -> bool:
    """Whether ``kind``'s agent class says a child inherits its parent's whole seat spec
    (``heritable = True``): the culture donors, scripted or LLM. Mutation does not apply."""
    from socialsim.registry import agent_class

    try:
        return isinstance(kind, str) and bool(getattr(agent_class(kind), "heritable", False))
    except ValueError:
        return False


def keeps_seat(kind: object) -> bool:
    """Whether ``kind``'s agent class keeps its seat in every generation (``keeps_seat =
    True``: an RL policy, a person): it plays and is counted, but selection passes it over."""
    from socialsim.registry import agent_class

    try:
        return isinstance(kind, str) and bool(getattr(agent_class(kind), "keeps_seat", False))
    except ValueError:
        return False
