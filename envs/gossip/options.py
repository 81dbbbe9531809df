"""The validated constructor options of the four ALIGN gossip games: each checks its values
and fails early with a message that names the field and the allowed values.

:func:`matching_options` checks who meets whom and for how long in the peer games (donation,
prisoners, trust), :func:`market_options` the market's; the vocabulary they check against
(schedules, entrant modes) is here too. Pure functions: no bus, no I/O.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

ENTRANT_MODES = (None, "isolated", "joins")
SCHEDULES = ("align", "random")


def check_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name}: must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_number(name: str, value: Any, minimum: float = 0.0, maximum: float = math.inf) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not minimum <= value <= maximum
    ):
        bound = f"in [{minimum}, {maximum}]" if maximum < math.inf else f">= {minimum}"
        raise ValueError(f"{name}: must be a number {bound}, got {value!r}")
    return float(value)


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name}: must be true or false, got {value!r}")
    return value


def default_random_rounds(n: int) -> int:
    """Random matching lasts ``2 (n - 1)`` rounds unless told otherwise."""
    return 2 * (n - 1)


def default_entrant_round(rounds: int) -> int:
    """An entrant that joins does so half way through."""
    return rounds // 2 + 1


def matching_options(
    reference: str,
    n_agents: Any,
    gossip: Any,
    discount: Any,
    schedule: Any,
    rounds: Any,
    pairs_per_round: Any,
    entrant: Any,
    entrant_round: Any,
) -> dict[str, Any]:
    """The checked options shared by the peer games (donation, prisoners, trust): who meets
    whom, and for how long. ``reference`` names the game's reference order (for messages)."""
    n = check_int("n_agents", n_agents, 2)
    check_bool("gossip", gossip)
    check_number("discount", discount, 0.0, 1.0)
    if entrant == "none":  # TOML has no null: experiment files and grids write "none"
        entrant = None
    if entrant not in ENTRANT_MODES:
        raise ValueError(
            f"entrant: must be one of {', '.join(map(repr, ENTRANT_MODES))}, got {entrant!r}"
        )
    if schedule is None:
        schedule = "random" if entrant == "joins" else "align"
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule: must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
    if entrant == "joins" and schedule != "random":
        raise ValueError(
            "schedule: an entrant that joins needs schedule='random' (or leave schedule unset)"
        )
    if entrant == "isolated" and schedule != "align":
        raise ValueError(
            "schedule: the isolated entrant has its own schedule; leave schedule unset or 'align'"
        )
    if pairs_per_round is not None:
        check_int("pairs_per_round", pairs_per_round, 1)
        if schedule != "random":
            raise ValueError("pairs_per_round: only applies to schedule='random'")
    if rounds is not None:
        rounds = check_int("rounds", rounds, 1)
    if schedule == "align":
        # both reference orders (align and the circle method) play every pair once
        available = n - 1 if entrant == "isolated" else n * (n - 1) // 2
        if rounds is not None and rounds > available:
            raise ValueError(
                f"rounds: the {reference} schedule has {available} rounds for {n} agents, "
                f"got {rounds}"
            )
    elif rounds is None:
        rounds = default_random_rounds(n)
    if entrant_round is not None:
        if entrant != "joins":
            raise ValueError("entrant_round: only applies to entrant='joins'")
        entrant_round = check_int("entrant_round", entrant_round, 1)
        if entrant_round > rounds:
            raise ValueError(
                f"entrant_round: the entrant would join after the last round ({rounds}), "
                f"got {entrant_round}"
            )
    elif entrant == "joins":
        entrant_round = default_entrant_round(rounds)
    if entrant == "joins" and n < 3:
        raise ValueError(f"n_agents: an entrant that joins needs at least 3 agents, got {n}")
    return {
        "n_agents": n,
        "gossip": gossip,
        "discount": float(discount),
        "schedule": schedule,
        "rounds": rounds,
        "pairs_per_round": pairs_per_round,
        "entrant": entrant,
        "entrant_round": entrant_round,
    }


def market_options(
    n_sellers: Any, n_buyers: Any, discount: Any, gossip: Any, schedule: Any, rounds: Any
) -> dict[str, Any]:
    """The checked options of the market."""
    n_sellers = check_int("n_sellers", n_sellers, 1)
    n_buyers = check_int("n_buyers", n_buyers, 1)
    check_bool("gossip", gossip)
    check_number("discount", discount, 0.0, 1.0)
    schedule = schedule or "align"
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule: must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
    if rounds is not None:
        rounds = check_int("rounds", rounds, 1)
        if schedule == "align" and rounds > n_sellers * n_buyers:
            raise ValueError(
                f"rounds: the market has {n_sellers * n_buyers} seller-buyer pairs, got {rounds}"
            )
    return {
        "n_sellers": n_sellers,
        "n_buyers": n_buyers,
        "n_agents": n_sellers + n_buyers,
        "discount": float(discount),
        "gossip": gossip,
        "schedule": schedule,
        "rounds": rounds,
    }
