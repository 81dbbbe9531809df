"""Scripted players of the four gossip games (donation, prisoner's dilemma, trust, market).

Every agent reads only what the env gives it: its observation, ``info`` (``decision``,
``role``, ``counterpart``, ``round``) and the bus messages of its inbox (``rules``, ``match``,
the private ``action`` done to it, public ``gossip``), read through the protocol's
:class:`~socialsim.envs.gossip.protocol.Notebook`. Each plays all four games:

| kind               | moves                                             | gossip it publishes            |
|--------------------|---------------------------------------------------|--------------------------------|
| `always_cooperate` | cooperate / C / invest all, return 2/3 of it / H, c  | honest (image scoring)         |
| `always_defect`    | defect / D / invest 0, return 0 / L, s            | honest (image scoring)         |
| `random_donor`     | each move cooperative with probability `p`        | honest (image scoring)         |
| `entrant`          | always defect (the reference's greedy entrant)    | the literal "No comment", neutral |
| `image_scoring`, `simple_standing`, `stern_judging` | cooperative unless the counterpart's reputation (from the tones published about it, under the norm) is bad | the tone the norm assigns |
| `liar`             | like `image_scoring` (or `norm`)                  | `mode`: always praise, always criticise, or invert the true tone |

"Cooperative" per game is the protocol's (``Game.cooperative``): the donor cooperates; the PD
player plays C; the seller offers H; the buyer buys customised (c), and standard (s) when it
distrusts. In the trust game the investor sends its whole stock and the responder returns
``COOPERATIVE_RETURN_SHARE`` (2/3) of what it received (``multiplier`` x I, the multiplier
read from the env's ``rules`` message): 2I at the default multiplier 3, I at 1.5.

What an agent judges when it gossips (the move done to it): donation cooperate/defect; PD C/D;
trust: an investor that sent something (or had nothing) cooperated, a responder that returned
at least I cooperated; market: a seller who offered H cooperated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from socialsim.envs.gossip import norms
from socialsim.envs.gossip.notebook import Meeting, Notebook
from socialsim.envs.gossip.protocol import COOPERATIVE_RETURN_SHARE, GOSSIP

from socialsim.agent import Agent
from socialsim.bus import Message

KINDS = {
    "always_cooperate": "socialsim.agents.scripted.gossip:AlwaysCooperate",
    "always_defect": "socialsim.agents.scripted.gossip:AlwaysDefect",
    "random_donor": "socialsim.agents.scripted.gossip:RandomDonor",
    "entrant": "socialsim.agents.scripted.gossip:Entrant",
    "image_scoring": "socialsim.agents.scripted.gossip:ImageScoring",
    "simple_standing": "socialsim.agents.scripted.gossip:SimpleStanding",
    "stern_judging": "socialsim.agents.scripted.gossip:SternJudging",
    "liar": "socialsim.agents.scripted.gossip:Liar",
}

LIAR_MODES = ("always_praise", "always_criticise", "invert")

_MESSAGES = {
    "praising": "{who} treated me well: thank you.",
    "neutral": "{who} dealt with me this round.",
    "mocking": "{who} must think nobody is watching.",
    "complaint": "{who} let me down this round.",
    "criticism": "{who} took advantage of me. Beware.",
}


class GossipPlayer(Agent):
    """Shared bookkeeping: the seat's :class:`~socialsim.envs.gossip.protocol.Notebook` (the
    rules, its meetings, the tones published about each agent)."""

    plays = {"gossip": {"*"}}

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        self.rng = np.random.default_rng(seed)
        self.notebook = Notebook(agent_id)

    # -- reading the inbox ----------------------------------------------------------------------

    def read(self, messages: Sequence[Message]) -> None:
        self.notebook.read(messages)

    #: how tones are weighed into a reputation (``None``: the norm's own; see ``norms.reputation``)
    memory: str | None = None

    def reputation_of(self, agent: str, norm: str) -> int | None:
        return norms.reputation(self.notebook.tones.get(agent, ()), norm, self.memory)

    def meeting(self, info: Mapping[str, Any]) -> Meeting:
        return self.notebook.current(info["round"])

    # -- acting ---------------------------------------------------------------------------------

    def act(self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]) -> Any:
        self.read(messages)
        decision = info.get("decision")
        counterpart = info.get("counterpart")
        if decision == GOSSIP:
            return self.gossip(counterpart, info)
        cooperative = self.cooperates(counterpart, decision, info) == "cooperate"
        return self.move(decision, cooperative, counterpart, info)

    def cooperates(self, counterpart: str, decision: str, info: Mapping[str, Any]) -> str:
        """``"cooperate"`` or ``"defect"`` towards ``counterpart``."""
        raise NotImplementedError

    def move(
        self, decision: str, cooperative: bool, counterpart: str, info: Mapping[str, Any]
    ) -> Any:
        game = self.notebook.game
        if decision in game.cooperative:
            choice = game.cooperative[decision][0 if cooperative else 1]
            return game.action_index(decision, choice)
        if decision == "invest":
            amount = max(self.meeting(info).own, 0.0) if cooperative else 0.0
            self.notebook.note_move(info["round"], "invest", amount)  # to judge the return later
            return {"amount": amount}
        if decision == "return":
            invested = self.meeting(info).received.get("invest", 0.0)
            multiplier = self.notebook.rule("multiplier")
            # the share of trust_received(invested, multiplier), multiplied in this order so
            # that the amounts of earlier records stay the same to the last bit
            amount = COOPERATIVE_RETURN_SHARE * multiplier * invested
            return {"amount": amount if cooperative else 0.0}
        raise ValueError(
            f"decision: {self.kind or type(self).__name__} cannot make a {decision!r} decision"
        )

    def observed(self, counterpart: str, info: Mapping[str, Any]) -> str:
        """What ``counterpart`` did to me this round, as ``"cooperate"`` or ``"defect"``."""
        meeting = self.meeting(info)
        received = meeting.received
        if "invest" in received:
            # An investor that sent anything trusted me; one with nothing could not.
            return "cooperate" if received["invest"] > 0 or meeting.theirs <= 0 else "defect"
        if "return" in received:
            invested = meeting.mine.get("invest", 0.0)
            returned = received["return"]
            return "cooperate" if invested == 0 or returned >= invested - 1e-9 else "defect"
        cooperative_moves = {choice for choice, _ in self.notebook.game.cooperative.values()}
        return "cooperate" if received.get("move") in cooperative_moves else "defect"

    def truthful_tone(self, counterpart: str, info: Mapping[str, Any]) -> str:
        return norms.assess("image_scoring", self.observed(counterpart, info), None)

    def gossip(self, counterpart: str, info: Mapping[str, Any]) -> dict[str, Any]:
        tone = self.tone(counterpart, info)
        return {"tone": tone, "message": _MESSAGES[tone].format(who=counterpart)}

    def tone(self, counterpart: str, info: Mapping[str, Any]) -> str:
        return self.truthful_tone(counterpart, info)


class AlwaysCooperate(GossipPlayer):
    """Cooperates with everyone; gossips honestly."""

    def cooperates(self, counterpart, decision, info) -> str:
        return "cooperate"


class AlwaysDefect(GossipPlayer):
    """Defects against everyone; gossips honestly."""

    def cooperates(self, counterpart, decision, info) -> str:
        return "defect"


class RandomDonor(GossipPlayer):
    """Cooperates with probability ``p`` at every move, from its own seeded stream."""

    def __init__(self, p: float = 0.5):
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise ValueError(f"p: must be a number in [0, 1], got {p!r}")
        self.p = float(p)

    def cooperates(self, counterpart, decision, info) -> str:
        return "cooperate" if self.rng.random() < self.p else "defect"


class Entrant(GossipPlayer):
    """The reference's greedy entrant: always defects and gossips the literal "No comment"."""

    def cooperates(self, counterpart, decision, info) -> str:
        return "defect"

    def gossip(self, counterpart, info) -> dict[str, Any]:
        return {"tone": "neutral", "message": "No comment"}


class Discriminator(GossipPlayer):
    """Helps counterparts in good standing under ``norm``; gossips the tone the norm assigns."""

    norm = "image_scoring"

    def cooperates(self, counterpart, decision, info) -> str:
        if self.notebook.rule("gossip_reach", 1.0) < 1:
            # only what this round's reputation message told (none: a stranger)
            tones = self.notebook.told.get((info["round"], counterpart), ())
            return norms.decide(self.norm, norms.reputation(tones, self.norm, self.memory))
        return norms.decide(self.norm, self.reputation_of(counterpart, self.norm))

    def tone(self, counterpart, info) -> str:
        # The donor's act is judged against *my* standing, which I am the recipient of.
        return norms.assess(self.norm, self.observed(counterpart, info), self._own_standing)

    def act(self, observation, messages, info):
        self.read(messages)
        # My standing before this round's gossip about the counterpart: read it now.
        self._own_standing = self.reputation_of(self.agent_id, self.norm)
        return super().act(observation, (), info)


class ImageScoring(Discriminator):
    norm = "image_scoring"


class SimpleStanding(Discriminator):
    norm = "simple_standing"


class SternJudging(Discriminator):
    norm = "stern_judging"


class Liar(Discriminator):
    """Moves like a discriminator under ``norm`` but gossips untruthfully: ``mode`` is
    ``"always_praise"``, ``"always_criticise"`` or ``"invert"`` (praise what it would criticise
    and the reverse; neutral stays neutral)."""

    def __init__(self, mode: str = "invert", norm: str = "image_scoring"):
        if mode not in LIAR_MODES:
            raise ValueError(f"mode: must be one of {', '.join(LIAR_MODES)}, got {mode!r}")
        if norm not in norms.NORMS:
            raise ValueError(f"norm: must be one of {', '.join(norms.NORMS)}, got {norm!r}")
        self.mode = mode
        self.norm = norm

    def tone(self, counterpart, info) -> str:
        if self.mode == "always_praise":
            return "praising"
        if self.mode == "always_criticise":
            return "criticism"
        truth = super().tone(counterpart, info)
        value = norms.valence(truth)
        return "criticism" if value > 0 else "praising" if value < 0 else truth
