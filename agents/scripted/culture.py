"""Scripted donors of the culture donor game (``culture_v0``): strategies an ``[evolution]``
run passes on whole (a child inherits its parent's seat spec, parameters included).

Each writes its strategy in words (``strategy_text``), so LLM newborns can read a scripted
survivor's strategy as they read another model's.
"""

from __future__ import annotations

from socialsim.envs.culture import protocol as p

from socialsim.agent import Agent

KINDS = {
    "culture_give": "socialsim.agents.scripted.culture:AlwaysGive",
    "culture_conditional": "socialsim.agents.scripted.culture:ConditionalGiver",
}


def _fraction(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name}: a multiple of 0.1 in [0, 1], got {value!r}")
    p.action_of("give", float(value))  # raises for a fraction off the grid
    return float(value)


class Donor(Agent):
    """What the scripted donors share: their first decision of an episode carries their
    strategy text (the env posts it, so the record keeps it and LLM newborns can read it)."""

    plays = {"culture": {p.DECISION}}
    #: an [evolution] child inherits the whole seat spec
    heritable = True
    strategy_text = ""

    def reset(self, agent_id, seat, seed):
        super().reset(agent_id, seat, seed)
        self.told = False

    def tell(self, action: int) -> int | dict:
        if self.told:
            return action
        self.told = True
        return {p.DECISION: action, p.STRATEGY: self.strategy_text}


class AlwaysGive(Donor):
    """Gives ``fraction`` of its resources to every recipient."""

    def __init__(self, fraction: float = 0.5):
        self.fraction = _fraction("fraction", fraction)

    @property
    def strategy_text(self) -> str:
        return f"Always give {self.fraction:g} of my resources, whoever the recipient is."

    def act(self, observation, messages, info):
        return self.tell(p.action_of("give", self.fraction))


class ConditionalGiver(Donor):
    """Gives ``fraction`` to a recipient whose last decision as a donor gave at least
    ``threshold`` (or who has no trace yet), else nothing. Reads only its ``recipient`` message."""

    def __init__(self, fraction: float = 0.5, threshold: float = 0.3):
        self.fraction = _fraction("fraction", fraction)
        self.threshold = _fraction("threshold", threshold)

    @property
    def strategy_text(self) -> str:
        return (
            f"Give {self.fraction:g} of my resources to recipients who last gave at least "
            f"{self.threshold:g} of theirs (or have no record yet); give nothing to the others."
        )

    def act(self, observation, messages, info):
        view = next((m.payload for m in reversed(messages) if m.kind == p.RECIPIENT), None)
        trace = view["trace"] if view is not None else ()
        if trace:
            last = trace[-1]
            given = last["fraction"] if last["verb"] == "give" else 0.0
            if given + 1e-9 < self.threshold:
                return self.tell(p.action_of("give", 0.0))
        return self.tell(p.action_of("give", self.fraction))
