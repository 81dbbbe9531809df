"""Scores beside their tricks: the answerers that hold no beliefs, and a score normalised
between the best of them and the informed oracle. Generic: nothing here knows a game.

* :func:`best_trick`: the name and value of the highest-scoring trick (ties: the first listed).
* :func:`normalised`: ``(score - best_trick) / (oracle - best_trick)``: 0 at the best trick, 1 at
  the oracle, below 0 under the trick; ``nan`` when undefined, and when the oracle is no better
  than the best trick (the score cannot tell a mind from a trick).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

#: below this gap between the oracle and the best trick, a score tells nothing apart
RESOLUTION = 1e-9


def _defined(value: float | None) -> bool:
    return value is not None and not math.isnan(value)


def best_trick(tricks: Mapping[str, float | None]) -> tuple[str | None, float]:
    """The trick with the highest defined score, and that score (``(None, nan)`` if none)."""
    defined = [(value, name) for name, value in tricks.items() if _defined(value)]
    if not defined:
        return None, math.nan
    value = max(v for v, _ in defined)
    return next(name for v, name in defined if v == value), value


def normalised(score: float | None, best: float | None, oracle: float | None) -> float:
    """0 at ``best`` (the best trick), 1 at ``oracle``; ``nan`` when any is undefined or the
    oracle does not beat the best trick by more than :data:`RESOLUTION`."""
    if not (_defined(score) and _defined(best) and _defined(oracle)):
        return math.nan
    if oracle - best <= RESOLUTION:  # type: ignore[operator]
        return math.nan
    return (score - best) / (oracle - best)  # type: ignore[operator]
