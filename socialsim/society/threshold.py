"""The gossip reach q* above which discriminators out-earn defectors, measured per norm in the
numpy society (:class:`~socialsim.society.vectorised.ReplicatedSociety`, the donation game's
rules with ``schedule="random"``).

Nowak & Sigmund (1998) find that discriminators resist defectors when q > c/b (q: the chance
that a donor knows its recipient's reputation, :mod:`socialsim.envs.gossip.reach`). Their
argument assumes rare defectors and discriminators who all stay in good standing. With a share
``x`` of discriminators that stay good, a discriminator gains ``x b`` a round as recipient and
pays ``c (x + (1 - x)(1 - q))`` as donor, a defector gains ``x (1 - q) b``, so discriminators
out-earn defectors when ``q > c / (x b + (1 - x) c)`` (:func:`good_standing_threshold`, which is
c/b as ``x`` goes to 1). This module measures instead of assuming.

**Measure.** A population of ``agents`` (a share ``defectors`` always defect, the rest follow
one norm) plays ``rounds`` rounds at every q of a grid, ``replicates`` seeds at each q (the same
seeds at every q: a donor is told when its uniform reach draw is below q, so a higher q tells a
superset of the donors, and the curve is smooth in q). Per seed, the discriminators' mean helps
received minus the defectors' (``received``), and the same for helps given (``given``). What a
scripted strategy does depends on neither c nor b, so one play serves every ratio: at c/b = r the
discriminators out-earn the defectors when ``received - r * given > 0`` (the payoff difference
in units of b), and the break-even ratio at q is ``received / given``.

**q*(r)** (:func:`threshold`) is the smallest q of the grid from which that difference, averaged
over the seeds, stays positive up to q = 1, interpolated linearly with the grid point below it;
``inf`` when it is not positive at q = 1 (no reach suffices), 0 when it is positive at q = 0;
``first=True`` gives the smallest q where it is positive at all, which differs where the curve
crosses zero more than once (image scoring with half the population defecting). Its 95%
interval (:func:`threshold_interval`) is the percentile bootstrap over seeds (the same resample
at every q; an ``inf`` in a tail makes that bound ``inf``).

    from socialsim.society.threshold import play_reach, threshold

    q = np.linspace(0, 1, 101)
    received, given = play_reach("stern_judging", 0.1, q, replicates=100)
    threshold(received, given, q, ratio=0.2)     # about 0.26 (c/b = 0.2 says 0.2)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from socialsim.society.population import STRATEGIES
from socialsim.society.vectorised import ReplicatedSociety

DEFECTOR = "always_defect"


def population(norm: str, defectors: float, agents: int) -> dict[str, int]:
    """``agents`` agents, ``round(defectors * agents)`` of them always defect (at least 1), the
    rest following ``norm`` (at least 1)."""
    if not 0.0 < defectors < 1.0:
        raise ValueError(f"defectors: must be a share in (0, 1), got {defectors!r}")
    bad = min(agents - 1, max(1, round(defectors * agents)))
    return {norm: agents - bad, DEFECTOR: bad}


def play_reach(
    norm: str,
    defectors: float,
    reach: Sequence[float],
    *,
    agents: int = 100,
    replicates: int = 100,
    rounds: int = 200,
    seed: int = 0,
    cost: float = 1.0,
    benefit: float = 5.0,
) -> tuple[np.ndarray, np.ndarray]:
    """``received`` and ``given``, each ``(replicates, len(reach))``: per seed ``seed + i`` and
    q, the discriminators' mean helps received (given) minus the defectors' after ``rounds``
    rounds (see the module docstring). ``cost`` and ``benefit`` change no action; they are
    passed on for the society's own checks."""
    people = population(norm, defectors, agents)
    codes = np.asarray([STRATEGIES.index(s) for s, count in people.items() for _ in range(count)])
    judges = codes == STRATEGIES.index(norm)
    received = np.empty((replicates, len(reach)))
    given = np.empty((replicates, len(reach)))
    for k, q in enumerate(reach):
        society = ReplicatedSociety(
            people,
            seeds=range(seed, seed + replicates),
            cost=cost,
            benefit=benefit,
            gossip_reach=float(q),
        )
        society.counting = False  # read the agents' helps, not the per-round counts
        society.play(rounds, parallel=False)
        r, g = society.helps_received, society.helps_given
        received[:, k] = r[:, judges].mean(axis=1) - r[:, ~judges].mean(axis=1)
        given[:, k] = g[:, judges].mean(axis=1) - g[:, ~judges].mean(axis=1)
    return received, given


def crossing(difference: np.ndarray, reach: Sequence[float], first: bool = False) -> float:
    """The smallest q from which ``difference`` (one value per q, increasing q) stays positive,
    linearly interpolated; ``inf`` when it is not positive at the last q, the first q when it is
    positive everywhere. With ``first``, the smallest q where it turns positive at all (``inf``
    when it never does): the two differ where the curve crosses zero more than once."""
    q = np.asarray(reach, dtype=float)
    above = difference > 0
    if first:
        if not above.any():
            return math.inf
        k = int(np.argmax(above))  # the first q where it is positive
        if k == 0:
            return float(q[0])
        k -= 1
    else:
        if not above[-1]:
            return math.inf
        below = np.flatnonzero(~above)
        if below.size == 0:
            return float(q[0])
        k = below[-1]  # the last q where it is not positive; it is positive from k + 1 on
    d0, d1 = difference[k], difference[k + 1]
    return float(q[k] + (q[k + 1] - q[k]) * (0.0 - d0) / (d1 - d0))


def threshold(
    received: np.ndarray,
    given: np.ndarray,
    reach: Sequence[float],
    ratio: float,
    first: bool = False,
) -> float:
    """q* at c/b = ``ratio`` from :func:`play_reach`'s arrays, averaged over the seeds
    (``first``: :func:`crossing`'s)."""
    return crossing(received.mean(axis=0) - ratio * given.mean(axis=0), reach, first)


def threshold_interval(
    received: np.ndarray,
    given: np.ndarray,
    reach: Sequence[float],
    ratio: float,
    resamples: int = 1000,
    seed: int = 0,
) -> tuple[float, float]:
    """The 95% percentile bootstrap interval of :func:`threshold` over the seeds."""
    rng = np.random.default_rng(seed)
    n = received.shape[0]
    picks = rng.integers(0, n, size=(resamples, n))
    difference = received - ratio * given  # (seeds, q)
    curves = difference[picks].mean(axis=1)  # (resamples, q)
    values = np.asarray([crossing(curve, reach) for curve in curves])
    low, high = np.quantile(values, [0.025, 0.975], method="lower")
    return (float(low), float(high))


def break_even(received: np.ndarray, given: np.ndarray) -> np.ndarray:
    """Per q, the c/b below which the discriminators out-earn the defectors (seeds averaged)."""
    g = given.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(g > 0, received.mean(axis=0) / g, math.nan)


def good_standing_threshold(ratio: float, defectors: float) -> float:
    """``c / (x b + (1 - x) c)`` in units of b (x = 1 - ``defectors``): q* if every
    discriminator stayed in good standing (the module docstring); c/b for rare defectors."""
    x = 1.0 - defectors
    return ratio / (x + (1.0 - x) * ratio)
