"""The analysis's one rule for undefined values, strict JSON, printed numbers and the per-cell
statistics (mean, SEM, 95% bootstrap confidence interval).

**Undefined values.** A metric with nothing to average (no entrant for the cooperation towards
it, no donor turn for a ratio, no tone for a tone share, one seed block for a SEM) is undefined:
``nan`` in memory, an empty field in CSV, ``null`` in JSON and ``n/a`` in printed tables and
in ``report.html``. It is never written as 0, and it is left out of every mean over episodes
(a cell's ``n_<metric>`` counts the episodes where it was defined). The only exceptions are the
reference's own (ALIGN's average donation of an agent never chosen as donor is 0).

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
BOOTSTRAP_RESAMPLES = 2000
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


def plain(value: Any) -> Any:
    """``value`` with every undefined float as ``None`` and numpy scalars as Python ones."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def strict_json(value: Any, indent: int | None = 2) -> str:
    """JSON that any strict parser reads: undefined values as ``null``, never ``NaN``."""
    return json.dumps(plain(value), indent=indent, allow_nan=False, sort_keys=False)


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
