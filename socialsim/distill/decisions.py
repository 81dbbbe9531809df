"""The decisions of a donation-game record, each with the cues its seat had when it made it.

The record's bus log is read in order into one :class:`~socialsim.envs.gossip.notebook.Notebook`
per seat, each taking only the messages addressed to it, as its inbox did. A round's donors
decided before the round's first ``action`` message, its recipients before its first ``gossip``
message: the cues are read from the notebooks at those two points
(:mod:`socialsim.envs.gossip.cues`, the distilled seat's own reading: the base cues and the
extra ones, stock, round and last experience), the choices from the record's interactions. A fallback move (``invalid``: the seat gave no legal answer) is no
decision of the seat's and is left out, as is the gossip of a game played without gossip.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from socialsim.envs.gossip import norms
from socialsim.envs.gossip.cues import (
    DONATE,
    GOSSIP,
    VALENCES,
    donor_cues,
    extra_cues,
    gossip_cues,
)
from socialsim.envs.gossip.notebook import Notebook
from socialsim.records import EpisodeRecord


@dataclass(frozen=True)
class Decision:
    """One decision: ``purpose`` DONATE (``cues`` = bad image, bad standing of the recipient;
    ``choice`` 1 helped, 0 refused) or GOSSIP (``cues`` = helped, own bad standing; ``choice``
    the index of the tone's valence in ``VALENCES``); ``extra`` the decision's extra cues
    (:class:`~socialsim.envs.gossip.cues.ExtraCues`: own stock low, counterpart richer, third of
    the episode, last experience of the counterpart)."""

    episode: int  # the record's index in the list read
    seat: str
    round: int
    purpose: int
    cues: tuple[int, int]
    choice: int
    extra: tuple[int, int, int, int] = (0, 0, 0, 0)

    @property
    def full(self) -> tuple[int, ...]:
        """The base cues then the extra ones (what :func:`~socialsim.envs.gossip.cues.cue_columns` positions index)."""
        return (*self.cues, *self.extra)


def check_donation(record: EpisodeRecord) -> None:
    game = record.summary.get("game")
    if game != "donation":
        raise ValueError(
            f"record {record.experiment} episode {record.episode}: game {game!r}; distilling "
            "reads donation-game records only (the cues are the donation game's)"
        )


def _recipients(message: dict[str, Any], agents: Sequence[str]) -> Sequence[str]:
    to = message.get("to")
    if to == "*":
        return agents
    if isinstance(to, str):
        return [to] if to in agents else []
    return [a for a in to or () if a in agents]


def record_decisions(record: EpisodeRecord, index: int = 0) -> Iterator[Decision]:
    """The decisions of one donation-game record, in the order they were made."""
    check_donation(record)
    agents = list(record.summary["agents"])
    books = {agent: Notebook(agent) for agent in agents}
    by_round: dict[int, list[dict[str, Any]]] = {}
    for interaction in record.summary.get("interactions", []):
        by_round.setdefault(interaction["round"], []).append(interaction)
    donated: set[int] = set()
    gossiped: set[int] = set()
    for raw in record.messages:
        kind, payload = raw.get("kind"), raw.get("payload") or {}
        round_ = payload.get("round") if isinstance(payload, dict) else None
        if kind == "action" and round_ not in donated:
            donated.add(round_)
            yield from _donations(by_round.get(round_, ()), books, round_, index)
        elif kind == "gossip" and round_ not in gossiped:
            gossiped.add(round_)
            yield from _tones(by_round.get(round_, ()), books, round_, index)
        message = SimpleNamespace(kind=kind, payload=payload)
        for agent in _recipients(raw, agents):
            books[agent].read((message,))


def _donations(interactions, books, round_, index) -> Iterator[Decision]:
    for i in interactions:
        if i.get("invalid") or i.get("action") not in norms.ACTIONS:
            continue
        book = books[i["donor"]]
        cues = donor_cues(book, i["recipient"], round_)
        extra = extra_cues(book, i["recipient"], round_)
        choice = int(i["action"] == "cooperate")
        yield Decision(index, i["donor"], round_, DONATE, tuple(cues), choice, tuple(extra))


def _tones(interactions, books, round_, index) -> Iterator[Decision]:
    for i in interactions:
        tone, action = i.get("tone"), i.get("action")
        if tone is None or action not in norms.ACTIONS:
            continue
        book = books[i["recipient"]]
        cues = gossip_cues(book, action == "cooperate")
        extra = extra_cues(book, i["donor"], round_)
        choice = VALENCES.index(norms.valence(tone))
        yield Decision(index, i["recipient"], round_, GOSSIP, tuple(cues), choice, tuple(extra))


def decisions(records: Sequence[EpisodeRecord]) -> list[Decision]:
    """Every decision of ``records`` (each checked to be a donation game's)."""
    return [d for index, record in enumerate(records) for d in record_decisions(record, index)]
