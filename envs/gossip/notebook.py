"""What one seat knows of a gossip game, read from its inbox: the one parser of the protocol's
bus payloads that every agent family uses (scripted, LLM, human, RL seat views)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from socialsim.envs.gossip.protocol import (
    GAME_OF_ROLE,
    GAMES,
    REFERENCE_ENTRANT_NAME,
    REFERENCE_NAMES,
    Game,
    GossipPayload,
    RulesPayload,
    check_rules,
    donation_payoffs,
    market_payoffs,
    prisoners_payoff,
    trust_payoffs,
)
from socialsim.envs.gossip.reach import REPUTATION


@dataclass
class Meeting:
    """One of a seat's matches, as it learns it from the bus and from its own moves."""

    round: int
    role: str
    other: str
    own: float  # my stock (total payoff in PD and market) when the round started
    theirs: float
    mine: dict[str, Any] = field(default_factory=dict)  # decision -> my choice
    received: dict[str, Any] = field(default_factory=dict)  # what the counterpart did to me
    said: tuple[str, str | None] | None = None  # (tone, message) I published about them
    heard: tuple[str, str | None] | None = None  # (tone, message) they published about me

    @property
    def game(self) -> str:
        return GAME_OF_ROLE[self.role]

    @property
    def invested(self) -> float:
        """The trust game's investment (mine or theirs)."""
        return float(self.mine.get("invest", self.received.get("invest", 0.0)))

    @property
    def returned(self) -> float:
        """The trust game's return (mine or theirs)."""
        return float(self.mine.get("return", self.received.get("return", 0.0)))


class Notebook:
    """What one seat knows of a gossip game, read from its inbox: the rules, its meetings by
    round, every gossip in the order published, and the tones published about each agent.

    Every agent family reads the bus through this one parser; an agent records its own moves
    with :meth:`note_move` (the bus tells the acted-upon agent, not the actor).
    """

    def __init__(self, agent_id: str):
        self.agent_id = agent_id
        self.rules: RulesPayload | None = None
        self.meetings: dict[int, Meeting] = {}
        self.gossip: list[GossipPayload] = []
        self.tones: dict[str, list[str]] = {}
        #: (round, agent) -> the tones about it that a ``reputation`` message told this seat
        self.told: dict[tuple[int, str], list[str]] = {}

    @property
    def game(self) -> Game:
        if self.rules is None:
            raise ValueError(
                f"{self.agent_id}: no 'rules' message reached this agent; the gossip envs "
                "publish one to everyone at reset, before anything else"
            )
        return GAMES[self.rules["game"]]

    def rule(self, key: str, default: Any = None) -> Any:
        """A setting of the rules message (raises if none was read)."""
        self.game  # noqa: B018 - raises the clear error when no rules were read
        return self.rules.get(key, default)  # type: ignore[union-attr]

    def read(self, messages: Iterable[Any]) -> None:
        """Take in bus messages (anything with ``kind`` and ``payload``), oldest first."""
        me = self.agent_id
        for message in messages:
            kind, payload = message.kind, message.payload
            if kind == "gossip":
                self.gossip.append(payload)
                self.tones.setdefault(payload["about"], []).append(payload["tone"])
                meeting = self.meetings.get(payload["round"])
                if meeting is not None:
                    said = (payload["tone"], payload.get("message"))
                    if payload["author"] == me and payload["about"] == meeting.other:
                        meeting.said = said
                    elif payload["about"] == me and payload["author"] == meeting.other:
                        meeting.heard = said
            elif kind == "action" and payload["target"] == me:
                meeting = self.meetings.get(payload["round"])
                if meeting is not None:
                    action = payload["action"]
                    if isinstance(action, Mapping):
                        meeting.received.update(action)
                    else:
                        meeting.received["move"] = action
            elif kind == "match":
                roles, stocks = payload["roles"], payload["resources"]
                other = next(a for a in roles if a != me)
                self.meetings[payload["round"]] = Meeting(
                    payload["round"], roles[me], other, float(stocks[me]), float(stocks[other])
                )
            elif kind == "rules":
                self.rules = check_rules(payload)
            elif kind == REPUTATION:
                self.told[payload["round"], payload["about"]] = list(payload["tones"])

    def name(self, agent_id: str) -> str:
        """The name ``agent_id`` goes by with every seat that shows names (LLM prompts and
        gossip, a person's view): the reference's (John for ``agent_0``, Kate, ...; Max for the
        entrant the rules name), else the id itself."""
        if agent_id == self.rule("entrant"):
            return REFERENCE_ENTRANT_NAME
        head, _, index = agent_id.rpartition("_")
        if head == "agent" and index.isdigit() and int(index) < len(REFERENCE_NAMES):
            return REFERENCE_NAMES[int(index)]
        return agent_id

    def note_move(self, round_: int, decision: str, choice: Any) -> None:
        """Record my own move of ``round_`` (what the bus does not tell me)."""
        meeting = self.meetings.get(round_)
        if meeting is not None:
            meeting.mine[decision] = choice

    def current(self, round_: int) -> Meeting:
        meeting = self.meetings.get(round_)
        if meeting is None:
            raise ValueError(f"{self.agent_id}: no match message for round {round_}")
        return meeting

    def payoffs(self, meeting: Meeting) -> tuple[float, float]:
        """(mine, theirs) of a finished or current meeting, by the rules in force."""
        game = meeting.game
        if game == "donation":
            donor, recipient = donation_payoffs(
                meeting.mine.get("donate", meeting.received.get("move")),
                self.rule("cost"),
                self.rule("benefit"),
            )
            return (donor, recipient) if meeting.role == "donor" else (recipient, donor)
        if game == "prisoners":
            mine, theirs = meeting.mine.get("play"), meeting.received.get("move")
            cost, benefit = self.rule("cost"), self.rule("benefit")
            return (
                prisoners_payoff(mine, theirs, cost, benefit),
                prisoners_payoff(theirs, mine, cost, benefit),
            )
        if game == "trust":
            investor, responder = trust_payoffs(
                meeting.invested, meeting.returned, self.rule("multiplier")
            )
            return (investor, responder) if meeting.role == "investor" else (responder, investor)
        if meeting.role == "seller":
            return market_payoffs(meeting.mine["sell"], meeting.received["move"])
        seller, buyer = market_payoffs(meeting.received["move"], meeting.mine["buy"])
        return buyer, seller
