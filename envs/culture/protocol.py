"""The culture donor game's vocabulary, written once: the decision, the action table, the
fallback, the options and their checks, and the ceiling of everyone giving everything.

Action ``i`` of ``0 .. STEPS`` gives the fraction ``i / STEPS`` of the donor's resources (the
recipient gets it times ``multiplier``); action ``STEPS + j`` (``j`` in ``1 .. STEPS``, only with
``punishment``) spends the fraction ``j / STEPS`` to take ``punishment_loss`` times as much from
the recipient. A masked action falls back to giving nothing. A donor's first action of an
episode may carry its strategy text (``{"donate": i, "strategy": text}``), which the env posts
to the donor alone as a ``strategy`` message: :func:`strategy_texts` reads them back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

DECISION = "donate"
#: the fractions are multiples of 1 / STEPS
STEPS = 10
GIVE = tuple(i / STEPS for i in range(STEPS + 1))
PUNISH = tuple(j / STEPS for j in range(1, STEPS + 1))
N_ACTIONS = len(GIVE) + len(PUNISH)
FALLBACK = 0  # give nothing
#: the bus kinds: the rules, a donor's view of its recipient, an interaction, a strategy text
RULES, RECIPIENT, INTERACTION, STRATEGY = "rules", "recipient", "interaction", "strategy"


def action_name(action: int) -> str:
    """``"give 0.3"`` or ``"punish 0.2"``: the action's words, as prompts and logs say it."""
    if action < len(GIVE):
        return f"give {GIVE[action]:g}"
    return f"punish {PUNISH[action - len(GIVE)]:g}"


def action_of(verb: str, fraction: float) -> int:
    """The action index of ``verb`` (``"give"`` or ``"punish"``) and a fraction on the grid; a
    ``ValueError`` names what is allowed."""
    steps = round(fraction * STEPS)
    if abs(steps - fraction * STEPS) > 1e-9 or not 0 <= steps <= STEPS:
        raise ValueError(f"fraction: a multiple of {1 / STEPS:g} in [0, 1], got {fraction!r}")
    if verb == "give":
        return steps
    if verb == "punish" and steps >= 1:
        return len(GIVE) + steps - 1
    raise ValueError(f"verb: 'give' (0 to 1) or 'punish' (0.1 to 1), got {verb!r} {fraction!r}")


@dataclass(frozen=True)
class Options:
    """The game's settings (the paper's by default)."""

    n_agents: int = 12
    rounds: int = 12
    initial_resources: float = 10.0
    multiplier: float = 2.0
    trace_depth: int = 3
    punishment: bool = False
    punishment_loss: float = 2.0

    def __post_init__(self) -> None:
        def whole(name: str, low: int, even: bool = False) -> None:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name}: must be an integer >= {low}, got {value!r}")
            if even and value % 2:
                raise ValueError(f"{name}: must be even (half donate each round), got {value!r}")

        def positive(name: str) -> None:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"{name}: must be a number > 0, got {value!r}")

        whole("n_agents", 2, even=True)
        whole("rounds", 1)
        whole("trace_depth", 0)
        for name in ("initial_resources", "multiplier", "punishment_loss"):
            positive(name)
        if not isinstance(self.punishment, bool):
            raise ValueError(f"punishment: must be true or false, got {self.punishment!r}")

    def rules(self, agents: tuple[str, ...]) -> dict[str, Any]:
        """The public ``rules`` payload."""
        return {
            "game": "culture_donor",
            "agents": agents,
            "rounds": self.rounds,
            "initial_resources": float(self.initial_resources),
            "multiplier": float(self.multiplier),
            "trace_depth": self.trace_depth,
            "punishment": self.punishment,
            "punishment_loss": float(self.punishment_loss),
            "ceiling": ceiling(self),
        }


def ceiling(options: Options | Mapping[str, Any]) -> float:
    """The average final resources when every donor gives everything: round 1's donors (half)
    turn ``r`` into ``(1 + m) r`` for their recipients; from then on the donors hold everything
    and each round multiplies it by ``m``; half the agents end with ``(1 + m) m^(R-1) r``.
    The paper's defaults: ``10 * 3 * 2^11 / 2 = 30720``."""
    o = options if isinstance(options, Options) else Options(**options)
    m = o.multiplier
    return float(o.initial_resources * (1 + m) * m ** (o.rounds - 1) / 2)


def strategy_texts(messages: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """seat -> the strategy text it posted (its last ``strategy`` message), from a record's
    bus log (its messages as plain JSON: ``to`` a list naming the donor alone)."""
    return {
        m["to"][0]: m["payload"]["text"]
        for m in messages
        if m.get("kind") == STRATEGY and isinstance(m.get("to"), list | tuple) and len(m["to"]) == 1
    }
