"""Who cooperated with whom: the residents among themselves, the residents towards the entrant,
and the entrant itself, reported apart (donation game and prisoner's dilemma).

The population's single cooperation rate counts a resident's refusal to help a defecting
entrant as a defection, so gossip, which lets residents refuse it, seems to *lower*
cooperation. The headline metrics are therefore:

| metric | choices counted |
|---|---|
| ``cooperation_residents`` | a resident's choice towards another resident |
| ``cooperation_to_entrant`` | a resident's choice towards the entrant |
| ``cooperation_by_entrant`` | the entrant's choices |
| ``cooperation_to_entrant_before`` / ``_after`` | towards the entrant, in rounds up to / after its first gossiped defection (its first defection at all with gossip off; see :func:`~socialsim.analysis.cooperation.ostracism`) |

Without an entrant every agent is a resident and the entrant's metrics are undefined (``nan``,
see :mod:`~socialsim.analysis.stats`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

from socialsim.analysis.cooperation import NAN, mean_of
from socialsim.analysis.interactions import (
    COOPERATE,
    DEFECT,
    PLAY_C,
    PLAY_D,
    donation_interactions,
    prisoners_interactions,
    require_game,
)
from socialsim.envs.gossip.protocol import DONATION, PRISONERS
from socialsim.records import EpisodeRecord

RESIDENTS, TO_ENTRANT, BY_ENTRANT = "residents", "to_entrant", "by_entrant"
GROUPS = (RESIDENTS, TO_ENTRANT, BY_ENTRANT)


class Choice(NamedTuple):
    """One cooperate/defect choice: its round, who chose, towards whom, whether it was
    cooperation, and whether the actor's own defection had been gossiped about before."""

    round: int
    actor: str
    towards: str
    cooperated: bool
    gossiped: bool  # the recipient wrote a tone or message about the actor's move


def choices(record: EpisodeRecord) -> list[Choice]:
    """Every cooperate/defect choice of the episode, in the order played."""
    game = require_game(record, DONATION, PRISONERS)
    out: list[Choice] = []
    if game == DONATION.name:
        for d in donation_interactions(record):
            if d["action"] not in (COOPERATE, DEFECT):
                continue
            said = d["tone"] is not None or d["message"] is not None
            out.append(
                Choice(d["round"], d["donor"], d["recipient"], d["action"] == COOPERATE, said)
            )
        return out
    for match in prisoners_interactions(record):
        a, b = match["players"]
        for actor, other in ((a, b), (b, a)):
            if match["actions"].get(actor) not in (PLAY_C, PLAY_D):
                continue
            said = match["tones"].get(other) is not None or match["messages"].get(other) is not None
            out.append(
                Choice(match["round"], actor, other, match["actions"][actor] == PLAY_C, said)
            )
    return out


def group_of(choice: Choice, entrant: str | None) -> str:
    if entrant is not None and choice.actor == entrant:
        return BY_ENTRANT
    if entrant is not None and choice.towards == entrant:
        return TO_ENTRANT
    return RESIDENTS


def exposure_round(record: EpisodeRecord) -> int | None:
    """The round of the entrant's first defection that was gossiped (its first defection at all
    with gossip off); ``None`` without an entrant or such a defection."""
    entrant = record.summary.get("entrant")
    if entrant is None:
        return None
    gossip_on = bool(record.summary.get("gossip", True))
    for choice in choices(record):
        if choice.actor == entrant and not choice.cooperated and (choice.gossiped or not gossip_on):
            return choice.round
    return None


def cooperation_split(record: EpisodeRecord) -> dict[str, float]:
    """The shares of cooperation among residents, towards the entrant and by the entrant, and
    towards the entrant before and after its exposure (:func:`exposure_round`)."""
    entrant = record.summary.get("entrant")
    flags: dict[str, list[bool]] = defaultdict(list)
    exposed = exposure_round(record)
    for choice in choices(record):
        group = group_of(choice, entrant)
        flags[group].append(choice.cooperated)
        if group == TO_ENTRANT:
            after = exposed is not None and choice.round > exposed
            flags["to_entrant_after" if after else "to_entrant_before"].append(choice.cooperated)
    row = {f"cooperation_{group}": mean_of(flags[group]) for group in GROUPS}
    for when in ("before", "after"):
        row[f"cooperation_to_entrant_{when}"] = mean_of(flags[f"to_entrant_{when}"])
    return row


def cooperation_by_round_split(record: EpisodeRecord) -> dict[int, dict[str, float]]:
    """Round -> the share of cooperation in each group that chose in that round (groups without
    a choice in the round are ``nan``)."""
    entrant = record.summary.get("entrant")
    by_round: dict[int, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for choice in choices(record):
        by_round[choice.round][group_of(choice, entrant)].append(choice.cooperated)
    return {
        round_: {group: mean_of(groups[group]) if groups[group] else NAN for group in GROUPS}
        for round_, groups in sorted(by_round.items())
    }
