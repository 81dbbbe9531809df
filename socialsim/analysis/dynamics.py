"""How a gossip episode unfolds round by round (donation game and prisoner's dilemma): each
agent's resources and their Gini coefficient after every round, the reputation accuracy of the
tones published in each round, and the reputation each agent has earned so far (the net valence
of the tones published about it: +1 praising, -1 mocking, complaint or criticism, 0 neutral;
:func:`~socialsim.envs.gossip.norms.valence`).

Resources start at ``initial_resources`` in the donation game and at 0 (summed payoffs) in the
prisoner's dilemma. A round without a non-neutral tone has an undefined accuracy (``nan``).
"""

from __future__ import annotations

from collections import defaultdict

from socialsim.analysis.cooperation import NAN, gini, mean_of
from socialsim.analysis.interactions import (
    COOPERATE,
    PLAY_C,
    agents_of,
    donation_interactions,
    prisoners_interactions,
    require_game,
)
from socialsim.envs.gossip.norms import valence
from socialsim.envs.gossip.protocol import DONATION, PRISONERS, TONES
from socialsim.records import EpisodeRecord


def _tones_by_round(record: EpisodeRecord) -> list[tuple[int, str, str, bool]]:
    """(round, about, tone, about_cooperated) of every tone published about a choice."""
    game = require_game(record, DONATION, PRISONERS)
    out = []
    if game == DONATION.name:
        for d in donation_interactions(record):
            if d["tone"] in TONES:
                out.append((d["round"], d["donor"], d["tone"], d["action"] == COOPERATE))
        return out
    for match in prisoners_interactions(record):
        a, b = match["players"]
        for author, about in ((a, b), (b, a)):
            tone = match["tones"].get(author)
            if tone in TONES:
                out.append((match["round"], about, tone, match["actions"][about] == PLAY_C))
    return out


def resources_by_round(record: EpisodeRecord) -> dict[int, dict[str, float]]:
    """Round -> every agent's resources after that round."""
    game = require_game(record, DONATION, PRISONERS)
    agents = agents_of(record)
    if game == DONATION.name:
        held = dict.fromkeys(agents, float(record.summary.get("initial_resources", 0.0)))
        changes = [
            (d["round"], {d["donor"]: -float(d["donation"]), d["recipient"]: float(d["benefit"])})
            for d in donation_interactions(record)
        ]
    else:
        held = dict.fromkeys(agents, 0.0)
        changes = [
            (m["round"], {k: float(v) for k, v in m["payoffs"].items()})
            for m in prisoners_interactions(record)
        ]
    by_round: dict[int, dict[str, float]] = {}
    for round_, change in changes:
        for agent, amount in change.items():
            held[agent] += amount
        by_round[round_] = dict(held)
    return by_round


def gini_by_round(record: EpisodeRecord) -> dict[int, float]:
    """Round -> the Gini coefficient of the resources after it."""
    return {r: gini(held.values()) for r, held in resources_by_round(record).items()}


def reputation_accuracy_by_round(record: EpisodeRecord) -> dict[int, float]:
    """Round -> the share of that round's non-neutral tones whose valence agrees with the move
    they are about (``nan`` for a round with none)."""
    verdicts: dict[int, list[bool]] = defaultdict(list)
    rounds = set(resources_by_round(record))
    for round_, _, tone, cooperated in _tones_by_round(record):
        value = valence(tone)
        if value:
            verdicts[round_].append((value > 0) == cooperated)
    return {r: mean_of(verdicts[r]) if verdicts[r] else NAN for r in sorted(rounds)}


def reputation_by_round(record: EpisodeRecord) -> dict[int, dict[str, int]]:
    """Round -> every agent's net tone valence received up to and including that round."""
    net = dict.fromkeys(agents_of(record), 0)
    published: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for round_, about, tone, _ in _tones_by_round(record):
        published[round_].append((about, tone))
    out = {}
    for round_ in sorted(resources_by_round(record)):
        for about, tone in published[round_]:
            net[about] += valence(tone)
        out[round_] = dict(net)
    return out
