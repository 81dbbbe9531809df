"""The rating model: Bradley–Terry with additive team strengths, on the Elo scale.

A match sets side A (one or more players) against side B; A's score ``y`` is 1 (A won), 0
(B won) or 0.5 (a tie). Each player has a rating ``r`` in Elo points and

    P(A beats B) = 1 / (1 + 10 ** ((sum r_B - sum r_A) / 400))

(a Decrypto team is its encoder plus its decoder, against the interceptor: TrueSkill's team sum
in Bradley–Terry form). Ratings are the maximum a posteriori estimate under an independent
``N(0, PRIOR_SD**2)`` prior on each free rating, which keeps a player that won (or lost) every
match finite and fixes the scale's origin; players whose ratings are given (the frozen pool) are
not fitted. Newton's method, in numpy.

:func:`fit_one` fits one free player (the entrant) for many bootstrap weightings at once;
:func:`fit_as_entrants` fits a pool whose every member is rated as an entrant against the others
(the gossip pools from v2 on).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

SCALE = 400.0  # Elo points for a factor of 10 in the odds
PRIOR_SD = 400.0
_C = math.log(10.0) / SCALE

DESCRIPTION = (
    "Bradley-Terry with additive team strengths on the Elo scale: P(A beats B) = "
    "1/(1+10^((sum R_B - sum R_A)/400)); MAP under a N(0, 400^2) prior per rating; "
    "the pool's ratings frozen, the entrant's fitted"
)
#: pools from v2 on: the gossip games' pool fitted as entrants (Decrypto's joint fit is that too)
AS_ENTRANTS_DESCRIPTION = (
    DESCRIPTION + "; every pool member's rating is the one it gets as an entrant against the "
    "others (gossip games: from its games in the rated seat, the pool's entrant offset on that "
    "side, not against seats of its own spec; Decrypto: one joint fit over the games every role "
    "plays), so that a member re-rated on the pool's seeds gets its own rating back"
)


@dataclass(frozen=True)
class Match:
    """One game as the model sees it: ``a`` against ``b`` (player names), A's score ``y``."""

    a: tuple[str, ...]
    b: tuple[str, ...]
    y: float
    group: int = 0  # the seed index the game was played with (the bootstrap's unit)


def fit(
    matches: Sequence[Match],
    frozen: Mapping[str, float] | None = None,
    weights: np.ndarray | None = None,
    iterations: int = 100,
) -> dict[str, float]:
    """The MAP ratings of every player of ``matches`` not in ``frozen``."""
    frozen = dict(frozen or {})
    free = sorted({p for m in matches for p in (*m.a, *m.b)} - set(frozen))
    if not free:
        return {}
    column = {name: i for i, name in enumerate(free)}
    design = np.zeros((len(matches), len(free)))
    offset = np.zeros(len(matches))
    for row, match in enumerate(matches):
        for sign, side in ((1.0, match.a), (-1.0, match.b)):
            for player in side:
                if player in column:
                    design[row, column[player]] += sign
                else:
                    offset[row] += sign * frozen[player]
    y = np.array([m.y for m in matches])
    w = np.ones(len(matches)) if weights is None else np.asarray(weights, dtype=float)
    r = np.zeros(len(free))
    for _ in range(iterations):
        p = _sigmoid(_C * (design @ r + offset))
        gradient = _C * design.T @ (w * (y - p)) - r / PRIOR_SD**2
        hessian = (_C**2) * (design.T * (w * p * (1 - p))) @ design
        hessian[np.diag_indices_from(hessian)] += 1 / PRIOR_SD**2
        step = np.linalg.solve(hessian, gradient)
        r += step
        if np.max(np.abs(step)) < 1e-9:
            break
    return {name: float(r[i]) for name, i in column.items()}


def fit_one(
    matches: Sequence[Match],
    player: str,
    frozen: Mapping[str, float],
    weights: np.ndarray,
    iterations: int = 100,
) -> np.ndarray:
    """The MAP rating of ``player`` (the only free one) under each row of ``weights``
    (replicates x matches): one Newton iteration for all replicates at once."""
    x, offset = entrant_terms(matches, player, frozen)
    y = np.array([m.y for m in matches])
    w = np.atleast_2d(np.asarray(weights, dtype=float))
    r = np.zeros(w.shape[0])
    for _ in range(iterations):
        p = _sigmoid(_C * (r[:, None] * x + offset))
        gradient = _C * (w * (y - p)) @ x - r / PRIOR_SD**2
        curvature = (_C**2) * (w * p * (1 - p)) @ (x * x) + 1 / PRIOR_SD**2
        step = gradient / curvature
        r += step
        if np.max(np.abs(step)) < 1e-9:
            break
    return r


def entrant_terms(
    matches: Sequence[Match], player: str, frozen: Mapping[str, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Per match: how often ``player`` is on side A minus side B, and side A's frozen ratings
    minus side B's (the others'), so that A leads by ``x * r + offset`` at rating ``r``."""
    x = np.array([m.a.count(player) - m.b.count(player) for m in matches], dtype=float)
    offset = np.array(
        [
            sum(frozen[p] for p in m.a if p != player) - sum(frozen[p] for p in m.b if p != player)
            for m in matches
        ]
    )
    return x, offset


def probability(difference: np.ndarray) -> np.ndarray:
    """P(A beats B) when A's summed rating exceeds B's by ``difference`` Elo points."""
    return _sigmoid(_C * np.asarray(difference, dtype=float))


def fit_as_entrants(
    matches: Sequence[Match], weights: np.ndarray | None = None, iterations: int = 100
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Ratings at which every player, rated as an entrant from the matches it is the first
    player of (``a[0]``, one player a side) against the others frozen, gets its own rating back.

    The rated player's side of each match also holds the **entrant offset** ``h``, one number
    for the pool: ``P(a beats b) = 1 / (1 + 10 ** ((r_b - r_a - h) / 400))``. Player ``i``'s
    rating solves ``C * sum w (y - p) = r_i / PRIOR_SD**2`` over its own matches only, with its
    opponents at their solved ratings, and ``h`` keeps the ratings' mean at 0. So :func:`fit_one`
    of a member, the rest frozen at these values and ``h`` on its side, returns its value. (A
    joint fit counts each member's games as someone else's opponent too, which a member re-rated
    as an entrant does not play; and without ``h`` the members' summed luck as entrants, which
    no pair of them cancels, would move every rating together, held only by the prior.) Newton's
    method, for each row of ``weights`` (replicates x matches; default one row of ones) at once.
    Returns the players (sorted), the ratings (replicates x players) and ``h`` (replicates).
    """
    players = sorted({p for m in matches for p in (*m.a, *m.b)})
    index = {p: i for i, p in enumerate(players)}
    focal = np.array([index[m.a[0]] for m in matches])
    rival = np.array([index[m.b[0]] for m in matches])
    y = np.array([m.y for m in matches])
    w = np.ones((1, len(matches))) if weights is None else np.atleast_2d(weights).astype(float)
    n, reps = len(players), w.shape[0]
    own = np.zeros((n, len(matches)))
    own[focal, np.arange(len(matches))] = 1.0  # which player's equation each match enters
    x = np.zeros((reps, n + 1))  # the ratings, then h
    rows = np.arange(reps)[:, None]
    for _ in range(iterations):
        r, h = x[:, :n], x[:, n:]
        p = _sigmoid(_C * (r[:, focal] - r[:, rival] + h))
        residual = np.zeros((reps, n + 1))
        residual[:, :n] = _C * (w * (y - p)) @ own.T - r / PRIOR_SD**2
        residual[:, n] = r.sum(axis=1)  # the anchor: mean 0
        curvature = (_C**2) * w * p * (1 - p)
        jacobian = np.zeros((reps, n + 1, n + 1))
        np.add.at(jacobian, (rows, focal[None, :], focal[None, :]), -curvature)
        np.add.at(jacobian, (rows, focal[None, :], rival[None, :]), curvature)
        jacobian[:, np.arange(n), np.arange(n)] -= 1 / PRIOR_SD**2
        jacobian[:, :n, n] = -curvature @ own.T
        jacobian[:, n, :n] = 1.0
        step = -np.linalg.solve(jacobian, residual[:, :, None])[:, :, 0]
        x += step
        if np.max(np.abs(step)) < 1e-9:
            break
    return players, x[:, :n], x[:, n]


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # exact and overflow-free


# -- the bootstrap over the pool's seeds ----------------------------------------------------------

RESAMPLES = 1000


def resample_counts(groups: int, seed: int, resamples: int = RESAMPLES) -> np.ndarray:
    """resamples x groups: how often each seed index is drawn in each bootstrap resample (the
    seed indices drawn with replacement, from ``numpy.random.default_rng(seed)``)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(groups, size=(resamples, groups))
    counts = np.zeros((resamples, groups))
    np.add.at(counts, (np.arange(resamples)[:, None], draws), 1.0)
    return counts


def interval(values: np.ndarray, point: float, clusters: int) -> tuple[float, float]:
    """The 95% cluster bootstrap interval of ``point`` from its bootstrap ``values`` over
    ``clusters`` resampled clusters (the seeds; ``nan`` ignored): the percentile interval's
    distances from the point, widened by ``sqrt(G / (G - 1)) * t(0.975, G - 1) / z(0.975)``
    for ``G`` clusters, the small-sample correction of cluster-robust errors (a bootstrap over
    ``G`` clusters underestimates the variance by ``(G - 1) / G``, and its estimate is as
    uncertain as a t with ``G - 1`` degrees of freedom). 1.11 for 18 seeds, 1.06 for 32;
    ``experiments/bench/rating_coverage_bench.py`` measures the coverage with and without."""
    low, high = percentile(values)
    if math.isnan(low) or clusters < 2:
        return (low, high)
    widen = math.sqrt(clusters / (clusters - 1)) * t_quantile(clusters - 1) / _Z975
    return (point - widen * (point - low), point + widen * (high - point))


_Z975 = 1.959963984540054
_T975 = {1: 12.706204736, 2: 4.302652730, 3: 3.182446305, 4: 2.776445105}


def t_quantile(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (tabled to df = 4, then
    the Cornish–Fisher expansion in 1/df to the third order: within 0.003 of it)."""
    if df in _T975:
        return _T975[df]
    z = _Z975
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    return z + g1 / df + g2 / df**2 + g3 / df**3


def percentile(values: np.ndarray) -> tuple[float, float]:
    """The 95% percentile interval of bootstrap values (``nan`` ignored)."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if not len(values):
        return (math.nan, math.nan)
    low, high = np.percentile(values, [2.5, 97.5])
    return (float(low), float(high))


def ratio_with_interval(
    numerator: np.ndarray, denominator: np.ndarray, counts: np.ndarray
) -> tuple[float, float, float]:
    """sum(numerator) / sum(denominator) over the seed indices (one entry each), with the 95%
    cluster bootstrap interval of the same ratio under each resample's ``counts``."""
    numerator, denominator = np.asarray(numerator, float), np.asarray(denominator, float)
    total = denominator.sum()
    value = numerator.sum() / total if total else math.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        replicates = (counts @ numerator) / (counts @ denominator)
    low, high = interval(replicates, value, counts.shape[1])
    if np.all((numerator >= 0) & (numerator <= denominator)):  # a share: kept within [0, 1]
        low, high = max(low, 0.0), min(high, 1.0)
    return (float(value), low, high)


def rating_with_interval(
    matches: Sequence[Match], player: str, frozen: Mapping[str, float], counts: np.ndarray
) -> tuple[float, float, float]:
    """The entrant's rating from every match once, and its 95% cluster bootstrap interval (a
    match's weight in a resample: how often its seed index was drawn)."""
    groups = np.array([m.group for m in matches])
    point = fit_one(matches, player, frozen, np.ones((1, len(matches))))[0]
    replicates = fit_one(matches, player, frozen, counts[:, groups])
    return (float(point), *interval(replicates, point, counts.shape[1]))
