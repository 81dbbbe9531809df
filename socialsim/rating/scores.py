"""From the rating run's records to the entrant's scores and ratings, each with its interval.

Decrypto (per role; the rates per game, as the report's IR% and MR% count them):

* ``win_rate``: share of the games the entrant's side won — its team survived all eight turns
  (encoder, decoder, team), or the team lost (interceptor);
* ``miscommunication_rate``: miscommunication tokens / (2 x games);
* ``interception_rate``: interception tokens / (2 x games) (for an interceptor: its own);
* ``rating``: Bradley–Terry (:mod:`.model`): each game is the team (encoder + decoder) against the
  interceptor, the team winning if it survived.

The gossip games (the entrant's own moves, counterparts classed by the pool's dispositions):

* ``cooperates_with_cooperators``: share of its moves towards cooperators and discriminators
  that cooperated;
* ``refuses_defectors``: share of its moves towards defectors that defected;
* ``exploits``: share of its moves towards unconditional cooperators (who never refuse anyone)
  that defected;
* ``truthful_gossip``: share of its non-neutral tones whose valence agrees with what the agent
  it is about did to it (the report's reputation accuracy, for its own gossip);
* ``return``: its mean return;
* ``rating``: Bradley–Terry over payoffs: in each game the entrant meets every other seat, and
  wins where its return is higher (a tie is half); from pool v2 on, not the seats of its own
  spec (a pool member is not compared with its own label in the pool's fit either), and with the
  pool's entrant offset on its side (:func:`.model.fit_as_entrants`).

In the donation game a donor with less than the cost has no move (only defecting is open to
it). In the trust game an investment above 0 cooperates (an investor with nothing has no move),
and so does a return of at least the investment (nothing invested: no move).

Every interval is the 95% cluster bootstrap over the pool's seeds, the seed being the cluster
(:mod:`.model`). Beside each rating: how well it predicts held-out seeds, and the entrant's
per-opponent win rates (:mod:`.held_out`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from socialsim.envs.gossip.norms import valence
from socialsim.envs.gossip.protocol import DONATION, GAMES, PRISONERS, TRUST
from socialsim.rating import held_out, model
from socialsim.rating.play import TEAM, Matchup, cell_key
from socialsim.rating.pool import Pool

#: the name the entrant goes by in the model's matches (a pool member may share its label)
ENTRANT = "\0entrant"
#: the pool's entrant offset, a frozen term on the entrant's side of every gossip match
OFFSET = "\0offset"
DECRYPTO_SCORES = ("win_rate", "miscommunication_rate", "interception_rate")
GOSSIP_SCORES = (
    "cooperates_with_cooperators",
    "refuses_defectors",
    "exploits",
    "truthful_gossip",
    "return",
)
#: the gossip games scored (the market's roles are fixed by seat: not yet)
SCORED_GAMES = (DONATION.name, PRISONERS.name, TRUST.name)


@dataclass
class Rated:
    """The entrant's scores in one role (Decrypto) or one game (gossip)."""

    role: str
    games: int
    rating: tuple[float, float, float]
    scores: dict[str, tuple[float, float, float]]
    crossplay: list[dict[str, Any]] = field(default_factory=list)
    fit: held_out.Fit | None = None


#: the games of each matchup, each with its group: the seed index the bootstrap resamples
Played = list[tuple[Matchup, list[tuple[int, Any]]]]


def join(records, matchups: list[Matchup], seed: int) -> Played:
    """The cross-play's records under their matchups (by the cell's seat table), each in the
    group of its seed (its offset from the base ``seed``)."""
    held: dict[str, list] = defaultdict(list)
    for record in records:
        held[cell_key(record.cell.get("seats", {}))].append((record.seed - seed, record))
    return [(m, held.get(m.key, [])) for m in matchups]


# -- Decrypto -------------------------------------------------------------------------------------


def rate_decrypto(played: Played, pool: Pool, groups: int, seed: int) -> list[Rated]:
    counts = model.resample_counts(groups, seed)
    frozen = pool.decrypto_ratings()
    rated = []
    for role in dict.fromkeys(m.role for m, _ in played):
        per_seed = np.zeros((len(DECRYPTO_SCORES) + 1, groups))  # numerators, then games
        matches, crossplay = [], []
        for matchup, games in (p for p in played if p[0].role == role):
            cell = np.zeros(len(DECRYPTO_SCORES) + 1)
            for group, record in games:
                summary = record.summary
                survived = summary["ending"] == "survived"
                won = survived if role != "interceptor" else not survived
                row = [won, summary["miscommunications"] / 2, summary["interceptions"] / 2, 1]
                per_seed[:, group] += row
                cell += row
                matches.append(_decrypto_match(matchup, role, survived, group))
            crossplay.append(
                {
                    "role": role,
                    **matchup.names,
                    "games": int(cell[-1]),
                    **{s: _share(cell[i], cell[-1]) for i, s in enumerate(DECRYPTO_SCORES)},
                }
            )
        scores = {
            s: model.ratio_with_interval(per_seed[i], per_seed[-1], counts)
            for i, s in enumerate(DECRYPTO_SCORES)
        }
        rating = model.rating_with_interval(matches, ENTRANT, frozen, counts)
        fit = held_out.check(matches, ENTRANT, frozen)
        rated.append(Rated(role, len(matches), rating, scores, crossplay, fit))
    return rated


def _decrypto_match(matchup: Matchup, role: str, survived: bool, group: int) -> model.Match:
    if role == TEAM:
        team: tuple[str, ...] = (ENTRANT,)
    else:
        team = tuple(
            ENTRANT if seat == role else matchup.names[seat] for seat in ("encoder", "decoder")
        )
    interceptor = ENTRANT if role == "interceptor" else matchup.names["interceptor"]
    return model.Match(team, (interceptor,), float(survived), group)


def _share(numerator: float, denominator: float) -> float:
    return float(numerator / denominator) if denominator else math.nan


# -- the gossip games -----------------------------------------------------------------------------


def gossip_counts(record, seat: str, labels: dict[str, str], pool: Pool) -> dict[str, float]:
    """Numerators and denominators of the entrant's gossip scores in one record."""
    game = GAMES[record.summary["game"]]
    cooperate = game.cooperative[game.decisions[0]][0] if game.cooperative else "cooperate"
    tally: dict[str, float] = defaultdict(float)

    def moved(counterpart: str, action: str | None) -> None:
        cooperated = action == cooperate
        disposition = pool.disposition(labels[counterpart])
        if disposition in ("cooperator", "discriminator"):
            tally["cooperates_with_cooperators"] += cooperated
            tally["cooperates_with_cooperators/"] += 1
        if disposition == "defector":
            tally["refuses_defectors"] += not cooperated
            tally["refuses_defectors/"] += 1
        if disposition == "cooperator":
            tally["exploits"] += not cooperated
            tally["exploits/"] += 1

    def gossiped(tone: str | None, about_action: str | None) -> None:
        if tone is None or about_action is None or valence(tone) == 0:
            return  # no claim, or nothing done to check it against
        tally["truthful_gossip"] += (valence(tone) > 0) == (about_action == cooperate)
        tally["truthful_gossip/"] += 1

    cost = float(record.summary.get("cost", 0.0))  # a donor with less has no move (masked)
    for interaction in record.summary.get("interactions", []):
        if game is TRUST:
            _trust(interaction, seat, tally_move=moved, tally_tone=gossiped, cooperate=cooperate)
        elif game is DONATION:
            if interaction["donor"] == seat:
                if interaction["donor_before"] >= cost:
                    moved(interaction["recipient"], interaction["action"])
            elif interaction["recipient"] == seat:
                gossiped(interaction["tone"], interaction["action"])
        elif seat in interaction["players"]:
            other = next(p for p in interaction["players"] if p != seat)
            moved(other, interaction["actions"][seat])
            gossiped(interaction["tones"].get(seat), interaction["actions"][other])
    tally["return"] = float(record.returns.get(seat, 0.0))
    tally["return/"] = 1
    return tally


def _trust(interaction, seat: str, tally_move, tally_tone, cooperate: str) -> None:
    """A trust exchange as moves: an investment is cooperation if it is above 0 (an investor
    with nothing had no move), a return if it gives back at least the investment (nothing
    invested: no move); the gossip is judged against the same reading of the other's move."""
    investor, responder = interaction["investor"], interaction["responder"]
    invested, returned = interaction["investment"], interaction["returned"]
    could_invest = interaction["investor_before"] > 0
    invest_move = cooperate if invested > 0 else "defect"
    return_move = cooperate if returned >= invested - 1e-9 else "defect"
    if seat == investor:
        if could_invest:
            tally_move(responder, invest_move)
        tally_tone(interaction["tones"].get(seat), return_move if invested > 0 else None)
    elif seat == responder:
        if invested > 0:
            tally_move(investor, return_move)
        tally_tone(interaction["tones"].get(seat), invest_move if could_invest else None)


def entrant_matches(record, seat: str, names: dict[str, str], skip_own_label: bool, group: int):
    """The entrant's comparisons in one game: its return against every other seat's (a tie is
    half), with the entrant offset on its side; ``skip_own_label``: not against a seat of its
    own spec."""
    mine = record.returns.get(seat, 0.0)
    out = []
    for other, name in names.items():
        if other == seat or (skip_own_label and record.seats[other] == record.seats[seat]):
            continue
        theirs = record.returns.get(other, 0.0)
        y = 1.0 if mine > theirs else 0.0 if mine < theirs else 0.5
        out.append(model.Match((ENTRANT, OFFSET), (name,), y, group))
    return out


def rate_gossip(played: Played, pool: Pool, game: str, groups: int, seed: int) -> list[Rated]:
    counts = model.resample_counts(groups, seed)
    numerators = {s: np.zeros(groups) for s in GOSSIP_SCORES}
    denominators = {s: np.zeros(groups) for s in GOSSIP_SCORES}
    matches, crossplay = [], []
    for matchup, games in played:
        cell: dict[str, float] = defaultdict(float)
        for group, record in games:
            tally = gossip_counts(record, matchup.seat, matchup.names, pool)
            for s in GOSSIP_SCORES:
                numerators[s][group] += tally[s]
                denominators[s][group] += tally[s + "/"]
                cell[s] += tally[s]
                cell[s + "/"] += tally[s + "/"]
            matches += entrant_matches(
                record, matchup.seat, matchup.names, pool.skips_own_label, group
            )
        crossplay.append(
            {
                "society": matchup.role,
                "seat": matchup.seat,
                "games": int(cell["return/"]),
                **{s: _share(cell[s], cell[s + "/"]) for s in GOSSIP_SCORES},
            }
        )
    scores = {
        s: model.ratio_with_interval(numerators[s], denominators[s], counts) for s in GOSSIP_SCORES
    }
    frozen = {**pool.gossip_ratings(game), OFFSET: pool.entrant_offset(game)}
    rating = model.rating_with_interval(matches, ENTRANT, frozen, counts)
    fit = held_out.check(matches, ENTRANT, frozen)
    games = sum(row["games"] for row in crossplay)
    return [Rated(game, games, rating, scores, crossplay, fit)]
