"""The analysis's one rule for undefined values, strict JSON, printed numbers and the per-cell
statistics (mean, SEM, 95% bootstrap confidence interval).

**Undefined values.** A metric with nothing to average (no entrant for the cooperation towards
it, no donor turn for a ratio, no tone for a tone share, one seed block for a SEM) is undefined:
``nan`` in memory, an empty field in CSV, ``null`` in JSON and ``n/a`` in printed tables and
in ``report.html``. It is never written as 0, and it is left out of every mean over episodes
(a cell's ``n_<metric>`` counts the episodes where it was defined). The only exceptions are the
reference's own (ALIGN's average donation of an agent never chosen as donor is 0).

**Replication.** The episode (its seed) is the unit of replication: a per-agent measure is
averaged within its episode first, and a cell's SE is the sample standard deviation (ddof 1)
of its episodes' values over the square root of their number (:data:`CONVENTION`, stated under
every table). Episodes that are identical to the last bit are one effective replicate, not n.
Differences between cells (:func:`contrast`) have a seeded percentile bootstrap interval, paired
by seed where both cells played the same seeds, and a permutation-test p-value; a table of many
of them adjusts its p-values for the family by Holm's step-down method (:func:`holm`). A share
of seeds (k of n) has the exact Clopper-Pearson interval (:func:`binomial_ci`).

**Coverage.** A percentile bootstrap interval covers its mean only with enough replicates: over
10 seeds of ``align_evolution`` (a split outcome: defectors win in about one seed in ten) the
95% interval of the last generation's cooperation with gossip covers the true mean in 69% of
disjoint seed blocks, over 30 seeds in 91%, over 1,000 seeds in 93.5-97.5%
(``experiments/bench/interval_coverage.py`` measures it).

**Printed numbers** keep four significant digits and print values within ``1e-9`` of zero as
``0`` (a sum of floating-point shares is not ``3.511e-17``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

UNDEFINED = "n/a"
CONVENTION = (
    "unit of replication: the episode (seed); per-agent measures averaged within an episode "
    "first; SE = sample SD (ddof 1) over episodes / sqrt(n)"
)
BOOTSTRAP_RESAMPLES = 2000
PERMUTATIONS = 5000
EXACT_SIGN_FLIPS = 14  # paired cells of up to 14 seeds: all 2**n sign patterns
BOOTSTRAP_SEED = 0
ZERO = 1e-9


def is_undefined(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def number(value: Any, digits: int = 4) -> str:
    """``value`` as a table prints it: ``n/a`` when undefined, ``0`` for float noise."""
    if is_undefined(value):
        return UNDEFINED
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        x = float(value)
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        if abs(x) < ZERO:
            return "0"
        return f"{x:.{digits}g}" if abs(x) >= 1e-3 else f"{x:.2e}"
    return str(value)


def undefined_as_null(value: Any) -> Any:
    """``value`` with every undefined float as ``None`` and numpy scalars as Python ones."""
    if isinstance(value, Mapping):
        return {str(k): undefined_as_null(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [undefined_as_null(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def strict_json(value: Any, indent: int | None = 2) -> str:
    """JSON that any strict parser reads: undefined values as ``null``, never ``NaN``."""
    return json.dumps(undefined_as_null(value), indent=indent, allow_nan=False, sort_keys=False)


def defined(values: Iterable[float]) -> np.ndarray:
    x = np.asarray([float(v) for v in values if not is_undefined(v)], dtype=float)
    return x


def sem(values: Iterable[float]) -> float:
    """Standard error of the mean, ``std(ddof=1) / sqrt(n)``; undefined below two values."""
    x = defined(values)
    if x.size < 2:
        return math.nan
    return float(np.std(x, ddof=1) / math.sqrt(x.size))


def bootstrap_ci(
    values: Iterable[float],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean, from a seeded Generator (the same
    values give the same interval). Undefined below two values."""
    x = defined(values)
    if x.size < 2:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = rng.choice(x, size=(resamples, x.size), replace=True).mean(axis=1)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return (float(low), float(high))


def summary(values: Iterable[float]) -> dict[str, float]:
    """``n`` (defined values), ``mean``, ``sem``, ``ci_low``, ``ci_high`` of one cell metric."""
    x = defined(values)
    low, high = bootstrap_ci(x)
    return {
        "n": int(x.size),
        "mean": float(x.mean()) if x.size else math.nan,
        "sem": sem(x),
        "ci_low": low,
        "ci_high": high,
    }


def contrast(
    baseline: Mapping[int, float],
    treatment: Mapping[int, float],
    resamples: int = BOOTSTRAP_RESAMPLES,
    permutations: int = PERMUTATIONS,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, Any]:
    """The difference of means ``treatment - baseline`` of one metric between two cells, each a
    mapping seed -> the episode's value (undefined values left out).

    Where both cells played the same seeds the comparison is paired: the interval resamples the
    per-seed differences and the test flips their signs. Otherwise the interval resamples each
    cell apart and the test shuffles the cell labels. Both draw from one seeded Generator, so
    the same values give the same interval and p-value. The paired test enumerates every sign
    pattern up to :data:`EXACT_SIGN_FLIPS` seeds (exact); otherwise p = (k + 1) / (permutations
    + 1), k the random permutations at least as extreme (two-sided). Undefined below two values
    per cell.
    """
    a = {s: float(v) for s, v in baseline.items() if not is_undefined(v)}
    b = {s: float(v) for s, v in treatment.items() if not is_undefined(v)}
    paired = bool(a) and set(a) == set(b)
    row: dict[str, Any] = {
        "n_baseline": len(a),
        "n_treatment": len(b),
        "paired": paired,
        "mean_baseline": float(np.mean(list(a.values()))) if a else math.nan,
        "mean_treatment": float(np.mean(list(b.values()))) if b else math.nan,
    }
    row["difference"] = row["mean_treatment"] - row["mean_baseline"]
    row.update(ci_low=math.nan, ci_high=math.nan, p_value=math.nan)
    if len(a) < 2 or len(b) < 2:
        return row
    rng = np.random.default_rng(seed)
    tail = (1.0 - 0.95) / 2.0
    if paired:
        d = np.asarray([b[s] - a[s] for s in sorted(a)])
        means = rng.choice(d, size=(resamples, d.size), replace=True).mean(axis=1)
        if d.size <= EXACT_SIGN_FLIPS:  # every sign pattern: the exact test
            signs = 1.0 - 2.0 * ((np.arange(2**d.size)[:, None] >> np.arange(d.size)) & 1)
        else:
            signs = rng.choice([-1.0, 1.0], size=(permutations, d.size))
        null = np.abs((signs * d).mean(axis=1))
        observed = abs(d.mean())
    else:
        x, y = np.asarray(list(a.values())), np.asarray(list(b.values()))
        means = rng.choice(y, size=(resamples, y.size), replace=True).mean(axis=1) - rng.choice(
            x, size=(resamples, x.size), replace=True
        ).mean(axis=1)
        pooled = np.concatenate([x, y])
        order = rng.permuted(np.tile(pooled, (permutations, 1)), axis=1)
        null = np.abs(order[:, x.size :].mean(axis=1) - order[:, : x.size].mean(axis=1))
        observed = abs(y.mean() - x.mean())
    low, high = np.quantile(means, [tail, 1.0 - tail])
    # a tolerance, so that a permutation equal to the observed difference counts as extreme
    extreme = int(np.sum(null >= observed - 1e-12 * max(1.0, observed)))
    exact = paired and d.size <= EXACT_SIGN_FLIPS  # the identity is among the patterns
    p_value = extreme / null.size if exact else (extreme + 1) / (null.size + 1)
    row.update(ci_low=float(low), ci_high=float(high), p_value=p_value)
    return row


def holm(p_values: Iterable[float]) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values (undefined ones left out of the
    family and kept undefined): the ``i``-th smallest of ``m`` becomes ``(m - i + 1) p``, made
    non-decreasing in that order and capped at 1. It controls the chance of any false positive
    in the family as Bonferroni's ``m p`` does, and never rejects less."""
    p = np.asarray([math.nan if is_undefined(v) else float(v) for v in p_values], dtype=float)
    adjusted = np.full(p.shape, math.nan)
    index = np.flatnonzero(~np.isnan(p))
    if index.size:
        order = index[np.argsort(p[index], kind="stable")]
        scaled = (index.size - np.arange(index.size)) * p[order]
        adjusted[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return adjusted


def binomial_ci(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a share of ``k`` successes in ``n`` trials (the
    seeds where something happened): its coverage is at least ``level`` for every true share.
    Undefined for ``n == 0``."""
    if n <= 0:
        return (math.nan, math.nan)
    if not 0 <= k <= n:
        raise ValueError(f"k: must be between 0 and n = {n}, got {k}")
    tail = (1.0 - level) / 2.0
    low = 0.0 if k == 0 else _solve(lambda p: _upper_tail(k, n, p) - tail)
    high = 1.0 if k == n else _solve(lambda p: tail - _lower_tail(k, n, p))
    return (low, high)


def _lower_tail(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed in log space."""
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 1.0 if k >= n else 0.0
    logs = [
        math.lgamma(n + 1)
        - math.lgamma(i + 1)
        - math.lgamma(n - i + 1)
        + i * math.log(p)
        + (n - i) * math.log1p(-p)
        for i in range(k + 1)
    ]
    top = max(logs)
    return min(1.0, math.exp(top) * sum(math.exp(v - top) for v in logs))


def _upper_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    return 1.0 if k <= 0 else 1.0 - _lower_tail(k - 1, n, p)


def _solve(increasing, low: float = 0.0, high: float = 1.0) -> float:
    """The root in [low, high] of an increasing function, by bisection to 1e-12."""
    while high - low > 1e-12:
        middle = (low + high) / 2.0
        if increasing(middle) < 0:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0


def replicates(rows: Iterable[Iterable[Any]]) -> int:
    """The number of distinct episodes among ``rows`` (each episode's metric values): episodes
    equal to the last bit are one effective replicate."""
    return len({tuple("nan" if is_undefined(v) else v for v in row) for row in rows})
