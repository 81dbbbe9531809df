"""Does one number describe the entrant? Its games predicted from the games of other seeds.

Leave one seed out: for each seed, the entrant's rating is fitted on every other seed's games
(the pool frozen, :func:`.model.fit_one`) and predicts the held-out seed's games; the mean
log-loss over every game is set beside a coin's (``log 2`` = 0.693, whatever the outcome; a tie
is half a win) and beside the entrant's **per-opponent win rates** fitted the same way (each
opponent's rate over the other seeds, a tie half, with one win and one loss added so that no
rate is 0 or 1). A rating that predicts no better than the coin says nothing about the games;
when the per-opponent rates predict better than the rating, one number does not fit the
entrant (it beats some members and loses to others against their ratings' order), and the
leaderboard shows the rates beside it.

An opponent is named by the other players of a game (not the model's terms, such as a pool's
entrant offset): ``always_defect`` in a gossip game, ``with glove_encoder vs glove_interceptor``
for a Decrypto decoder.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from socialsim.rating import model

COIN = math.log(2.0)
#: added to each opponent's record before its rate predicts (one win, one loss)
PSEUDO_GAMES = 2.0


@dataclass(frozen=True)
class Fit:
    log_loss: float  # the rating's, on held-out seeds
    per_opponent_log_loss: float  # the per-opponent win rates', on held-out seeds
    rates: dict[str, tuple[float, int]]  # opponent -> (win rate over every game, games)

    @property
    def one_number_fits(self) -> bool:
        return not self.per_opponent_log_loss < self.log_loss

    def to_json(self) -> dict:
        return {
            "held_out_log_loss": _rounded(self.log_loss),
            "coin_log_loss": round(COIN, 6),
            "per_opponent_log_loss": _rounded(self.per_opponent_log_loss),
            "one_number_fits": self.one_number_fits,
            "per_opponent": {k: [round(r, 6), n] for k, (r, n) in self.rates.items()},
        }


def _rounded(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 6)


def opponent(match: model.Match, player: str) -> str:
    """The other players of ``match``, as :data:`player` sees them."""
    mine, theirs = (match.a, match.b) if player in match.a else (match.b, match.a)
    partners = [p for p in mine if p != player and not p.startswith("\0")]  # not model terms
    rivals = "+".join(theirs)
    return f"with {'+'.join(partners)} vs {rivals}" if partners else rivals


def check(matches: Sequence[model.Match], player: str, frozen: Mapping[str, float]) -> Fit:
    """Leave-one-seed-out log-loss of the rating and of the per-opponent rates (``nan`` with
    fewer than two seeds), and the per-opponent rates over every game."""
    y = np.array([m.y if player in m.a else 1.0 - m.y for m in matches])
    names = [opponent(m, player) for m in matches]
    groups = np.array([m.group for m in matches])
    seeds = np.unique(groups)
    rates = {}
    for name in dict.fromkeys(names):
        mask = np.array([n == name for n in names])
        rates[name] = (float(y[mask].mean()), int(mask.sum()))
    if len(seeds) < 2:
        return Fit(math.nan, math.nan, rates)
    # every fold's rating at once: row k weighs every seed but seeds[k]
    weights = (groups[None, :] != seeds[:, None]).astype(float)
    ratings = model.fit_one(matches, player, frozen, weights)
    sign = np.array([1.0 if player in m.a else -1.0 for m in matches])
    x, offset = model.entrant_terms(matches, player, frozen)
    fold = np.searchsorted(seeds, groups)
    # P(the player's side wins) under the rating fitted without this game's seed
    p_a = model.probability(ratings[fold] * x + offset)
    p_rating = np.where(sign > 0, p_a, 1.0 - p_a)
    wins: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(len(seeds)))
    games: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(len(seeds)))
    for name, outcome, f in zip(names, y, fold, strict=True):
        wins[name][f] += outcome
        games[name][f] += 1.0
    p_rates = np.empty(len(matches))
    for i, (name, f) in enumerate(zip(names, fold, strict=True)):
        won = wins[name].sum() - wins[name][f] + PSEUDO_GAMES / 2
        played = games[name].sum() - games[name][f] + PSEUDO_GAMES
        p_rates[i] = won / played
    return Fit(_log_loss(y, p_rating), _log_loss(y, p_rates), rates)


def _log_loss(y: np.ndarray, p: np.ndarray) -> float:
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return float(np.mean(-(y * np.log(p) + (1 - y) * np.log(1 - p))))
