"""The rating model: Bradley–Terry with additive team strengths, on the Elo scale.

A match sets side A (one or more players) against side B; A's score ``y`` is 1 (A won), 0
(B won) or 0.5 (a tie). Each player has a rating ``r`` in Elo points and

    P(A beats B) = 1 / (1 + 10 ** ((sum r_B - sum r_A) / 400))

(a Decrypto team is its encoder plus its decoder, against the interceptor: TrueSkill's team sum
in Bradley–Terry form). Ratings are the maximum a posteriori estimate under an independent
``N(0, PRIOR_SD**2)`` prior on each free rating, which keeps a player that won (or lost) every
match finite and fixes the scale's origin; players whose ratings are given (the frozen pool) are
not fitted. Newton's method, in numpy.

:func:`fit_one` fits one free player (the entrant) for many bootstrap weightings at once.
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
    x = np.array([m.a.count(player) - m.b.count(player) for m in matches], dtype=float)
    offset = np.array(
        [
            sum(frozen[p] for p in m.a if p != player) - sum(frozen[p] for p in m.b if p != player)
            for m in matches
        ]
    )
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


def interval(values: np.ndarray) -> tuple[float, float]:
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
    bootstrap interval of the same ratio under each resample's ``counts``."""
    numerator, denominator = np.asarray(numerator, float), np.asarray(denominator, float)
    total = denominator.sum()
    value = numerator.sum() / total if total else math.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        replicates = (counts @ numerator) / (counts @ denominator)
    return (float(value), *interval(replicates))


def rating_with_interval(
    matches: Sequence[Match], player: str, frozen: Mapping[str, float], counts: np.ndarray
) -> tuple[float, float, float]:
    """The entrant's rating from every match once, and its 95% bootstrap interval (a match's
    weight in a resample: how often its seed index was drawn)."""
    groups = np.array([m.group for m in matches])
    point = fit_one(matches, player, frozen, np.ones((1, len(matches))))[0]
    replicates = fit_one(matches, player, frozen, counts[:, groups])
    return (float(point), *interval(replicates))
