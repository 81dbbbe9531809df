"""A distilled strategy in a seat of the donation game (``kind = "distilled"``, ``policy =
FILE``, ``name = NAME`` when the file holds several strategies): ``socialsim distill``'s tables played.

At each decision the seat reads its cues from its inbox (:mod:`socialsim.envs.gossip.cues`, the
reading the distiller used on the record: the base cues, and the extra ones when the strategy
was distilled with ``--cues``), looks up the probabilities of its choices and draws
once: the decision's uniform (``decision_uniform`` of its seed, the round and the decision)
below ``P(help)`` helps; for gossip, the valence whose cumulative share first exceeds the draw
is published, as the tone ``TONE_OF_VALENCE`` names (the message says it plainly). The policy
is read when the seat is built, so a bad file fails the run before anything is played.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from socialsim.agents.scripted.gossip import _MESSAGES, GossipPlayer
from socialsim.envs.gossip.cues import (
    DONATE,
    GOSSIP,
    TONE_OF_VALENCE,
    VALENCES,
    decision_uniform,
    donor_cues,
    extra_cues,
    gossip_cues,
)

from socialsim.distill.strategy import load, pick

KINDS = {"distilled": "socialsim.agents.scripted.distilled:Distilled"}


class Distilled(GossipPlayer):
    """Plays a distilled strategy's tables in the donation game."""

    plays = {"gossip": {"donate", "gossip"}}
    #: in an [evolution] experiment a child inherits its parent's seat whole (file, strategy)
    heritable = True

    def __init__(self, policy: str, name: str | None = None):
        if not isinstance(policy, str) or not policy:
            raise ValueError(
                f"policy: must be the path of a distilled strategy file, got {policy!r}"
            )
        self.strategy = pick(load(policy), name, policy)
        self._help = self.strategy.help_probability()
        self._tones = np.cumsum(self.strategy.valence_probability(), axis=-1)

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        self.seed = seed

    def cell(self, base: tuple[int, int], counterpart: str, round_: int) -> tuple[int, ...]:
        """The strategy's cell: the base cues, then the extra ones it conditions on."""
        if not self.strategy.extras:
            return tuple(base)
        return self.strategy.cell((*base, *extra_cues(self.notebook, counterpart, round_)))

    def cooperates(self, counterpart: str, decision: str, info: Any) -> str:
        cues = donor_cues(self.notebook, counterpart, info["round"])
        draw = decision_uniform(self.seed, info["round"], DONATE)
        p_help = self._help[self.cell(cues, counterpart, info["round"])]
        return "cooperate" if draw < p_help else "defect"

    def tone(self, counterpart: str, info: Any) -> str:
        helped = self.observed(counterpart, info) == "cooperate"
        cues = self.cell(gossip_cues(self.notebook, helped), counterpart, info["round"])
        draw = decision_uniform(self.seed, info["round"], GOSSIP)
        index = int(np.searchsorted(self._tones[cues], draw, side="right"))
        return TONE_OF_VALENCE[VALENCES[min(index, len(VALENCES) - 1)]]

    def gossip(self, counterpart: str, info: Any) -> dict[str, Any]:
        tone = self.tone(counterpart, info)
        return {"tone": tone, "message": _MESSAGES[tone].format(who=counterpart)}
